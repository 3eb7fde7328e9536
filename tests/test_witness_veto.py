"""The numeric witness looks where bugs hide and can veto (issue 22 item 3).

- Inputs: labels hold the ignore index of the loss reading them (an ``Equal`` constant or a
  loss op's ``ignore_index``), index inputs hold the ids at every rank's piece boundary.
- Several seeds; the error of an output is the largest over them.
- A witness that cannot run leaves the verdict and the exit code as they were and says why.
- A derived relation the witness refutes makes the result ``inconsistent`` (exit code 4), in
  text, JSON, HTML and SARIF, with the error and the input relations upstream.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, model_from_text

from analyzer import check
from analyzer.cli import main
from analyzer.witness.inputs import random_inputs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'


def _run(args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


# --- inputs where bugs hide ----------------------------------------------------------------------


def _embedding(vocab: int, ids_shape: str = "[2, 8]") -> onnx.ModelProto:
    table = ", ".join(["0.5"] * (vocab * 2))
    return model_from_text(HEADER + f"""
emb (int64{ids_shape} ids) => (float[2, 8, 2] y) <float[{vocab}, 2] table = {{{table}}}> {{
  y = Gather(table, ids)
}}
""")


@pytest.mark.parametrize("world_size", [2, 4])
def test_ids_hold_every_rank_boundary_of_the_table(world_size):
    model = _embedding(64)
    ids = random_inputs(model, np.random.default_rng(0), world_size=world_size)["ids"]
    step = 64 // world_size
    edges = {0, 63} | {i for k in range(1, world_size) for i in (k * step - 1, k * step)}
    assert edges <= set(ids.flat) and ids.min() >= 0 and ids.max() < 64
    # world size 1, or a table that does not split evenly: plain random ids
    plain = random_inputs(model, np.random.default_rng(0))["ids"]
    assert not edges <= set(plain.flat)
    assert np.array_equal(plain, np.random.default_rng(0).integers(0, 64, size=(2, 8)))


def test_boundary_ids_take_at_most_half_of_a_small_input():
    """16 boundary ids (world size 8) and 4 elements: 2 of them are boundary ids, 2 stay random."""
    small = model_from_text(HEADER + """
emb (int64[1, 4] ids) => (float[1, 4, 2] y) <float[64, 2] table = {""" + ", ".join(["0.5"] * 128) + """}> {
  y = Gather(table, ids)
}
""")
    edges = {0, 63} | {i for k in range(1, 8) for i in (k * 8 - 1, k * 8)}
    picked = set()
    for seed in range(8):
        ids = random_inputs(small, np.random.default_rng(seed), world_size=8)["ids"]
        assert len(set(ids.flat) & edges) >= 2 and 0 <= ids.min() and ids.max() < 64
        picked |= set(ids.flat) & edges
    assert len(picked) > 4  # the seeds pick other boundaries


def test_loss_ignore_index_attribute_is_drawn_in_labels():
    model = model_from_text(HEADER + """
ce (float[8, 16] scores, int64[8] labels) => (float loss) {
  loss = SoftmaxCrossEntropyLoss<ignore_index = -100, reduction = "mean">(scores, labels)
}
""")
    labels = random_inputs(model, np.random.default_rng(0), world_size=2)["labels"]
    assert (labels == -100).any() and (labels != -100).any()
    kept = labels[labels != -100]
    assert kept.min() >= 0 and kept.max() < 16  # the class axis bounds the other labels
    assert len(set(kept.tolist())) > 1


def test_labels_masked_by_a_where_span_the_vocab_and_keep_the_ignore_index():
    """Hugging Face's cross-entropy: labels equal to -100 are replaced by 0 before the
    GatherElements over the vocabulary, so the labels take the vocab bound (and its rank
    boundaries) and still hold -100."""
    model = model_from_text(HEADER + """
ce (float[8, 16] logp, int64[8] labels) => (float[8, 1] picked) <int64 ignore = {-100}, int64 zero = {0},
    int64[1] one = {1}> {
  same = Equal(labels, ignore)
  keep = Not(same)
  safe = Where(keep, labels, zero)
  idx = Unsqueeze(safe, one)
  picked = GatherElements<axis = 1>(logp, idx)
}
""")
    seen_ignore, seen_edges = False, set()
    for seed in range(3):
        labels = random_inputs(model, np.random.default_rng(seed), world_size=2)["labels"]
        seen_ignore |= bool((labels == -100).any())
        kept = labels[labels != -100]
        assert kept.min() >= 0 and kept.max() < 16
        seen_edges |= set(kept.tolist()) & {0, 7, 8, 15}
    assert seen_ignore and seen_edges == {0, 7, 8, 15}


# --- several seeds --------------------------------------------------------------------------------


@pytest.mark.skipif(not (EXAMPLES / "llama_tp2_bug_missing_allreduce").is_dir(), reason="example not present")
def test_output_error_is_the_largest_over_the_seeds():
    from analyzer.witness.check import _fed_inputs
    from analyzer.witness.simulate import witness

    folder = EXAMPLES / "llama_tp2_bug_missing_allreduce"
    result = check(folder / "seq.onnx", [folder / "rank0.onnx", folder / "rank1.onnx"], numeric=True, seed=5)
    run = result.witness
    assert run.seeds == [5, 6, 7] and not run.skipped
    fed, aliases = _fed_inputs(result.inputs)
    want = {"logits": (_shape_layout(result), ["logits", "logits"])}
    per_seed = [witness(result.inputs.seq, result.inputs.ranks, fed, want, seed=s, aliases=aliases)["logits"]
                for s in run.seeds]
    assert len(set(per_seed)) == 3  # the seeds draw other inputs
    assert run.outputs["logits"].error == max(per_seed) == result.numeric["logits"]
    assert run.outputs["logits"].seed == run.seeds[per_seed.index(max(per_seed))]


def _shape_layout(result):
    from analyzer.witness.check import output_layout_from_shapes

    return output_layout_from_shapes(result.inputs.seq, result.inputs.ranks, 0)


# --- a witness that cannot run --------------------------------------------------------------------


@pytest.mark.skipif(not (EXAMPLES / "llama_tp2_sp_bug_collective_order").is_dir(), reason="example not present")
def test_collective_mismatch_in_the_witness_keeps_the_discrepancy_and_exit_1(tmp_path):
    folder = EXAMPLES / "llama_tp2_sp_bug_collective_order"
    files = [folder / "seq.onnx", folder / "rank0.onnx", folder / "rank1.onnx"]
    plain_code, _ = _run(["check", *files])
    code, out = _run(["check", *files, "--numeric", "--json", tmp_path / "r.json", "--sarif", tmp_path / "r.sarif"])
    assert plain_code == code == 1, out
    assert "numeric witness could not run: collective #" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "discrepancy" and report["witness"]["skipped"].startswith("collective #")
    assert report["witness"]["outputs"] == {} and "numeric" not in report
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "warning" and "collective #" in notes[0]["message"]["text"]


def test_witness_that_cannot_make_up_an_input_keeps_verified_and_exit_0(write_models):
    text = HEADER + """
g ({x}) => (float[4] y) {{
  y = Relu(x)
}}
"""
    shapeless = onnx.parser.parse_model(text.format(x="float[4] x"))
    shapeless.graph.input[0].type.tensor_type.ClearField("shape")
    paths = write_models({"seq": shapeless, "rank": shapeless})
    files = [paths["seq"], paths["rank"], paths["rank"]]
    assert _run(["check", *files])[0] == 0
    code, out = _run(["check", *files, "--numeric"])
    assert code == 0, out
    assert "numeric witness could not run: seq: input 'x' has no shape" in out and "verified" in out


# --- the veto -------------------------------------------------------------------------------------

# x @ w with both split along the contracted axis: h is a partial sum on each rank, never
# all-reduced. A spec that declares h replicated makes the rules prove y; the numbers refute it.
_SEQ = HEADER + """
seq (float[4, 8] x, float[8, 6] w) => (float[4, 6] y) {
  h = MatMul(x, w)
  y = Relu(h)
}
"""
_RANK = HEADER + """
rank (float[4, 4] x, float[4, 6] w) => (float[4, 6] y) {
  h = MatMul(x, w)
  y = Relu(h)
}
"""
_WRONG_SPEC = "relations:\n  x: {shard: 1}\n  w: {shard: 0}\n  h: replicate\n"


@pytest.fixture
def wrong_spec(write_models, tmp_path):
    paths = write_models({"seq": model_from_text(_SEQ), "rank": model_from_text(_RANK)})
    spec = tmp_path / "spec.yaml"
    spec.write_text(_WRONG_SPEC)
    return [paths["seq"], paths["rank"], paths["rank"]], spec


def test_witness_refuting_a_verified_output_is_an_inconsistency_with_exit_4(wrong_spec, tmp_path):
    files, spec = wrong_spec
    code, out = _run(["check", *files, "--relations", spec])
    assert code == 0 and "verified" in out  # the rules alone: a proof given the spec
    code, out = _run(["check", *files, "--relations", spec, "--numeric", "--json", tmp_path / "r.json"])
    assert code == 4, out
    assert "internal inconsistency 1: the numeric witness refutes output y = Replicate on ranks 0..1" in out
    assert "input relations upstream: h = Replicate [spec], w = Shard(0) [spec], x = Shard(1) [spec]" in out
    assert out.strip().splitlines()[-1].startswith("inconsistent")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"] == "inconsistent"
    kinds = {(c["kind"], c["value"]) for c in report["witness"]["contradictions"]}
    assert kinds == {("output", "y"), ("input", "h")}
    out_c = next(c for c in report["witness"]["contradictions"] if c["kind"] == "output")
    assert out_c["error"] > out_c["tolerance"] and out_c["error"] == report["numeric"]["y"]
    assert out_c["rank_values"] == ["y", "y"] and "h = Replicate [spec]" in out_c["inputs"]


def test_inconsistency_in_every_report(wrong_spec, tmp_path):
    from analyzer.reports.html import render_html
    from analyzer.reports.sarif import to_sarif
    from analyzer.reports.text import to_json

    files, spec = wrong_spec
    result = check(files[0], files[1:], relations=spec, numeric=True)
    assert result.verdict == "inconsistent"
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((EXAMPLES.parent / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(to_json(result), schema)
    page = render_html(result)
    assert 'class="banner odd"' in page and 'id="inconsistency-0"' in page and "internal inconsistenc" in page
    sarif = to_sarif(result)
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["internal-inconsistency"] * 2
    assert sarif["runs"][0]["properties"]["verdict"] == "inconsistent"
    assert "x = Shard(1) [spec]" in results[0]["properties"]["inputRelations"]


def test_output_without_a_relation_is_never_a_contradiction(write_models):
    """A bug the rules report (no relation for y) is not an inconsistency, however large the error."""
    paths = write_models({"seq": model_from_text(_SEQ), "rank": model_from_text(_RANK)})
    result = check(paths["seq"], [paths["rank"], paths["rank"]], numeric=True)
    assert result.verdict == "discrepancy" and result.numeric["y"] > 0.1
    assert result.witness.contradictions == []


def test_refuted_intermediate_relation_is_a_contradiction(write_models):
    """A Holds row the rules could not have derived soundly (h replicated while each rank holds a
    partial sum) is caught by the intermediate check."""
    from analyzer.witness.check import run_witness

    rank = _RANK.replace("y = Relu(h)", "s = com.microsoft.AllReduce(h)\n  y = Relu(s)")
    paths = write_models({"seq": model_from_text(_SEQ), "rank": onnx.parser.parse_model(rank)})
    spec = paths["seq"].parent / "ok.yaml"
    spec.write_text("relations:\n  x: {shard: 1}\n  w: {shard: 0}\n")
    result = check(paths["seq"], [paths["rank"], paths["rank"]], relations=spec, numeric=True)
    assert result.verdict == "verified" and result.witness.contradictions == []
    assert result.witness.intermediates > 0
    deriv = result.derivation
    piece = [c for c, _ in deriv.decls["Piece"].columns]
    rows = [dict(zip(piece, r)) for r in deriv.derived["Piece"]]
    pieces = {(d["r"], d["d"], d["kind"]) for d in rows if d["s"] == "h"}
    assert {(0, "h", "Partial"), (0, "s", "Replicate")} <= pieces  # h is each rank's term, s the sum
    fake = {"s": "h", "kind": "Replicate", "axis": _replicate_field(deriv, "axis"),
            "param": _replicate_field(deriv, "param")}
    for r in range(2):  # the term h claimed as a replicated copy of the seq h, beside s
        deriv.derived["Piece"].append(tuple({**fake, "r": r, "d": "h"}[c] for c in piece))
    run = run_witness(result.inputs, result.verdict_, deriv)
    assert [(c.kind, c.value, c.relation) for c in run.contradictions] == [("intermediate", "h", "Replicate")]
    assert run.contradictions[0].inputs == ["w = Shard(0) [spec]", "x = Shard(1) [spec]"]
    result.record_witness(run)
    assert result.verdict == "inconsistent"


def _replicate_field(deriv, col: str):
    """The value a Replicate row has in column ``col`` (as the rules write it)."""
    holds = [c for c, _ in deriv.decls["Holds"].columns]
    for row in deriv.derived["Holds"]:
        d = dict(zip(holds, row))
        if d["kind"] == "Replicate":
            return d[col]
    raise AssertionError("no Replicate row to copy")
