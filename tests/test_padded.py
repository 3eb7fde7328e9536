"""Padded shards (analyzer/padding.py, rules/parallel/padded.dl): rank r holds listed, possibly
repeated, units of the sequential axis plus zero padding, as transformers-neuronx lays out
Llama-3 at TP 6 (heads 32 -> 36, FFN 8192 -> 8196, kv heads copied per query head).

The param algebra and its numeric meaning; small hand-written graphs for the rules (the golden
case tests/rules/library/parallel.padded, checked here on numbers by the witness, with near
misses: padding that is not inert, a unit summed twice, heads paired with the wrong kv head);
GraphGuard's published tp6 graphs verified given the declared layout, and one-line bugs in copies
of them flagged at the instruction with the model's source line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT, SHARED_DATA, edited_copy

from analyzer import check
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.layout import Layout
from analyzer.padding import ANY, ZERO, expand, from_spec, gather, mask, param_text
from analyzer.witness.layouts import distribute, rebuild, relation_error

CASE = ROOT / "tests" / "rules" / "library" / "parallel.padded" / "case.yaml"
AWS = SHARED_DATA / "hlo" / "aws_llama"
SPEC6 = ROOT / "examples" / "hlo" / "aws_llama" / "spec_tp6.yaml"
needs_aws = pytest.mark.skipif(not AWS.is_dir(), reason=f"{AWS} (GraphGuard's published HLO graphs) is not here")


# --- the param and its meaning ----------------------------------------------------------------


def test_transformers_neuronx_qkv_layout_at_tp6():
    p = from_spec(3072, 6, unit=64, sections=[32, 8, 8], repeat=[1, 4, 4], pad_to=[36, 36, 36])
    pm = expand(p)
    assert (pm.unit, pm.units, pm.rank_size, pm.seq_size) == (64, 48, 1152, 3072)
    # rank 0: q heads 0-5, their kv heads 0,0,0,0,1,1 (k section from unit 32, v from 40)
    assert pm.ranks[0] == (0, 1, 2, 3, 4, 5, 32, 32, 32, 32, 33, 33, 40, 40, 40, 40, 41, 41)
    # rank 5: q heads 30, 31 and four zero heads; kv head 7 twice and zeros
    assert pm.ranks[5] == (30, 31, *[ZERO] * 4, 39, 39, *[ZERO] * 4, 47, 47, *[ZERO] * 4)


def test_padded_ffn_and_explicit_index():
    pm = expand(from_spec(8192, 6, pad_to=8196))
    assert pm.ranks[5][-5:] == (8191, ZERO, ZERO, ZERO, ZERO) and len(pm.ranks[0]) == 1366
    assert expand(from_spec(6, 2, unit=2, index=[[2, -1], [0, 1]])).ranks == ((2, ZERO), (0, 1))


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"pad_to": 7}, "not a multiple of 3"),
        ({"pad_to": 4}, "below 5 units"),
        ({"unit": 2}, "unit 2 does not divide the axis size 5"),
        ({"index": [[0], [1]]}, "index lists 2 ranks, the world size is 3"),
        ({"sections": [2, 2]}, "add up to 4 units"),
    ],
)
def test_padded_forms_that_do_not_fit(kw, message):
    with pytest.raises(ValueError, match=message):
        from_spec(5, 3, **kw)


def test_param_text_round_trips_and_steps_apply():
    rng = np.random.default_rng(0)
    for _ in range(200):
        ranks = [[int(x) for x in rng.choice([ZERO, ANY, 0, 1, 2, 3, 4, 5], size=4)] for _ in range(3)]
        assert [list(r) for r in expand(param_text(1, 6, ranks)).ranks] == ranks
    p = param_text(2, 6, [[0, 1, ZERO, 3], [2, ZERO, 4, 5]])
    assert expand(p + "~x").ranks[0] == (0, 1, ANY, 3)
    assert expand(p + "~u4").unit == 4
    sliced = expand(p + "~s2:6:2:4")  # seq units [2, 6), rank entries [2, 4), re-based to 2
    assert (sliced.units, sliced.ranks) == (4, ((ZERO, 1), (2, 3)))
    assert expand(p + "~g3").seq_size == 36
    with pytest.raises(ValueError, match="outside"):
        expand(p + "~s0:2:0:4")  # rank 0 keeps unit 3, outside [0, 2)


def test_gather_mask_distribute_rebuild_and_relation_error():
    s = np.arange(24, dtype=np.float32).reshape(2, 12)
    layout = Layout("Shard", axis=1, pad=from_spec(12, 2, unit=2, pad_to=8))  # 6 units -> 8
    pieces = distribute(layout, s, 2)
    assert [p.shape for p in pieces] == [(2, 8), (2, 8)]
    assert np.array_equal(pieces[0], s[:, :8]) and np.array_equal(pieces[1][:, :4], s[:, 8:])
    assert not pieces[1][:, 4:].any()  # the zero units
    assert np.array_equal(rebuild(layout, pieces), s) and relation_error(layout, s, pieces) == 0
    bad = [pieces[0], pieces[1].copy()]
    bad[1][:, 5] = 1.0  # padding that is not zero
    assert relation_error(layout, s, bad) == 1.0
    junk = Layout("Shard", axis=1, pad=layout.pad + "~x")  # padding not compared
    assert relation_error(junk, s, bad) == 0
    assert mask(junk.pad, (2, 8), 1, 1)[:, 4:].sum() == 0
    assert np.array_equal(gather(layout.pad, s, 1, 1)[:, :4], s[:, 8:])


def test_layout_row_round_trip_and_param_facts():
    layout = Layout("Shard", axis=1, pad=from_spec(5, 3, pad_to=6))
    assert Layout.from_row("Shard", 1, layout.param) == layout
    assert str(layout) == "Shard(1, padded: 2 of 5 per rank, 5 units of 1 held, 1 padding)"
    rows = layout.param_facts()
    assert rows[0] == ("Param_Pad", {"p": layout.param, "unit": 1, "units": 5, "length": 2})
    assert ("Param_PadIdx", {"p": layout.param, "r": 2, "j": 1, "src": ZERO}) in rows
    with pytest.raises(ValueError, match="plain Shard"):
        Layout("Shard", axis=1, pad=layout.pad, replicas=2)


# --- the rules on small graphs, and the witness on them ------------------------------------------

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>\n'


def _case_models(tmp_path: Path, **edits: dict) -> tuple[Path, Path, Path]:
    case = yaml.safe_load(CASE.read_text())
    seq, rank = tmp_path / "seq.onnx", tmp_path / "rank.onnx"
    onnx.save(onnx.parser.parse_model(HEADER + case["seq"]), seq)
    onnx.save(onnx.parser.parse_model(HEADER + case["rank"]), rank)
    relations = {**case["spec"]["relations"], **edits}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"relations": relations}))
    return seq, rank, spec


def test_padded_mlp_and_attention_verify_and_the_witness_agrees(tmp_path):
    seq, rank, spec = _case_models(tmp_path)
    result = check(seq, [rank], relations=spec, world_size=3, numeric=True)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:2]
    assert result.verdict_.conditional  # the padding is declared, not read from stored weights
    assert {o.name: o.relation for o in result.verdict_.outputs} == {"y": "Replicate", "o": "Replicate"}
    run = result.witness
    assert run is not None and not run.skipped and not run.intermediates_skipped
    assert run.intermediates > 0 and not run.contradictions  # every derived relation holds on numbers
    assert max(result.numeric.values()) < 1e-4


@pytest.mark.parametrize(
    ("edit", "node"),
    [
        # w2's padding row sits at FFN unit 0 instead of after unit 4: unit 4 meets a zero row and
        # the junk column of sigmoid(0) meets unit 4's row
        ({"w2": {"shard": 0, "index": [[4, 1], [2, 3], [-1, 0]]}}, "y"),
        # FFN unit 4 on two ranks: summed twice over the ranks
        (
            {
                "w1": {"shard": 1, "index": [[0, 1], [2, 3], [4, 4]]},
                "w2": {"shard": 0, "index": [[0, 1], [2, 3], [4, 4]]},
            },
            "y",
        ),
        # the output projection's heads in another order than the query heads
        ({"wo": {"shard": 0, "unit": 2, "index": [[1, 0], [2, 3], [-1, -1]]}}, "o"),
        # every query head of rank 0 attends with kv head 1 (the copies in the wrong order)
        ({"wk": {"shard": 1, "unit": 2, "index": [[1, 1], [0, 0], [-1, -1]]}}, "o"),
    ],
)
def test_padding_that_is_not_inert_is_no_proof(tmp_path, edit, node):
    seq, rank, spec = _case_models(tmp_path, **edit)
    result = check(seq, [rank], relations=spec, world_size=3, triage=False)
    assert result.verdict == "discrepancy"
    outputs = {o.name: o.relation for o in result.verdict_.outputs}
    assert outputs[node] is None  # no relation
    other = "o" if node == "y" else "y"
    assert outputs[other] == "Replicate"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "MatMul" and first.hint_ids == ["padding-not-inert"]


def test_spec_padded_forms_that_do_not_fit_are_one_line_errors(tmp_path):
    seq, rank, spec = _case_models(tmp_path, w1={"shard": 1, "pad_to": 7})
    with pytest.raises(InputError, match=r"'w1': pad_to 7 is below 5 units or not a multiple of 3"):
        check(seq, [rank], relations=spec, world_size=3)
    seq, rank, spec = _case_models(tmp_path, w1={"shard": 1, "index": [[0, 1]], "pad_to": 6})
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--world-size", "3", "--relations", str(spec)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"shardlog: error: {spec.name}: relations.w1.index: give index or sections/pad_to/repeat, not both"
    )
    seq, rank, spec = _case_models(tmp_path, w1={"shard": 1, "pad_to": 6, "replicas": 2})
    with pytest.raises(InputError, match="a padded shard .* takes no replicas"):
        check(seq, [rank], relations=spec, world_size=3)


# --- GraphGuard's transformers-neuronx Llama-3 at TP 6 -------------------------------------------


@needs_aws
@pytest.mark.parametrize("layers", [1, 2])
def test_aws_llama_tp6_verifies_given_the_declared_padding(layers):
    seq = AWS / f"tp1_layer{layers}" / "graph.0.hlo"
    rank = AWS / f"tp6_layer{layers}" / "graph.0.hlo"
    result = check(seq, [rank], relations=SPEC6, world_size=6, triage=False)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:3]
    # the weights are parameters without values: the padding is assumed, and the verdict says so
    assert result.verdict_.conditional
    padded = {r.seq_value for r in result.verdict_.assumed if r.layout.pad}
    assert len(padded) == 5 * layers  # qkv, o, gate, up, down (the kv cache parameters feed no output)
    relations = sorted(o.relation for o in result.verdict_.outputs)
    kv = "Shard(2, padded: 6 of 8 per rank, 32 units of 1 held, 4 padding)"
    assert relations == sorted(["Shard(0)"] + [kv] * (2 * layers))


def _edited(tmp_path: Path, case: str, pattern: str, replacement: str) -> Path:
    return edited_copy(AWS / case / "graph.0.hlo", tmp_path / f"{case}_bug.hlo", pattern, replacement)


@needs_aws
def test_a_tp6_k_slice_one_head_off_is_flagged_at_that_slice(tmp_path):
    # the k section cut one head late: [448:832] instead of [384:768] (one line)
    rank = _edited(tmp_path, "tp6_layer1", r"slice=\{\[0:256\], \[384:768\]\}", "slice={[0:256], [448:832]}")
    result = check(AWS / "tp1_layer1" / "graph.0.hlo", [rank], relations=SPEC6, world_size=6, triage=False)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.node, first.op_type) == ("slice.54", "Slice")
    assert first.source.endswith("transformers_neuronx/layers/attention.py:126")


@needs_aws
def test_a_tp6_dropped_all_reduce_is_flagged_at_the_residual_add(tmp_path):
    rank = _edited(
        tmp_path,
        "tp6_layer1",
        r"all-reduce\(%reshape\.139\), replica_groups=\{\{0,1,2,3,4,5\}\}, to_apply=%all-reduce\.140\.Reducer\.145",
        "copy(%reshape.139)",
    )
    result = check(AWS / "tp1_layer1" / "graph.0.hlo", [rank], relations=SPEC6, world_size=6, triage=False)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.node == "add.140" and first.hint_ids == ["missing-allreduce"]
    assert first.source.endswith("transformers_neuronx/llama/hlo.py:322")


OUT_SEQ = """padded (float[3, 4] x, float[4, 5] w) => (float[3, 5] y) {
  y = MatMul(x, w)
}"""
OUT_RANK = """padded (float[3, 4] x, float[4, 2] w) => (float[3, 2] y) {
  y = MatMul(x, w)
}"""


@pytest.mark.parametrize(
    ("index", "verdict"),
    [([[0, 1], [2, 3], [4, -1]], "verified"), ([[0, 1], [2, 3], [3, -1]], "discrepancy")],
)
def test_a_padded_output_must_hold_every_unit(tmp_path, index, verdict):
    seq, rank, spec = tmp_path / "seq.onnx", tmp_path / "rank.onnx", tmp_path / "spec.yaml"
    onnx.save(onnx.parser.parse_model(HEADER + OUT_SEQ), seq)
    onnx.save(onnx.parser.parse_model(HEADER + OUT_RANK), rank)
    spec.write_text(yaml.safe_dump({"relations": {"w": {"shard": 1, "index": index}}}))
    result = check(seq, [rank], relations=spec, world_size=3, numeric=True)
    assert result.verdict == verdict
    if verdict == "verified":
        assert result.verdict_.outputs[0].relation == "Shard(1, padded: 2 of 5 per rank, 5 units of 1 held, 1 padding)"
        assert result.numeric["y"] < 1e-6
    else:  # unit 4 of y is computed by no rank
        assert result.verdict_.outputs[0].relation is None


def test_padded_weights_are_found_from_stored_values_without_a_spec(tmp_path):
    """The layouts the golden case's spec declares, found instead from weights both sides store:
    the proof is unconditional (nothing assumed about the weights)."""
    from onnx import numpy_helper

    case = yaml.safe_load(CASE.read_text())
    seq = onnx.parser.parse_model(HEADER + case["seq"])
    rng = np.random.default_rng(1)
    n = case["world_size"]
    layouts = {}
    for inp in seq.graph.input:
        if inp.name.startswith("w"):
            shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
            entry = case["spec"]["relations"][inp.name]
            axis = entry["shard"]
            fields = {k: v for k, v in entry.items() if k != "shard"}
            value = rng.standard_normal(shape).astype(np.float32)
            layouts[inp.name] = (axis, from_spec(shape[axis], n, **fields), value)

    def stored(model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> onnx.ModelProto:
        keep = [i for i in model.graph.input if i.name not in arrays]
        del model.graph.input[:]
        model.graph.input.extend(keep)
        model.graph.initializer.extend(numpy_helper.from_array(a, name) for name, a in arrays.items())
        return model

    onnx.save(stored(seq, {k: v for k, (_, _, v) in layouts.items()}), tmp_path / "seq.onnx")
    for r in range(n):
        model = onnx.parser.parse_model(HEADER + case["rank"])
        pieces = {k: gather(p, v, a, r) for k, (a, p, v) in layouts.items()}
        onnx.save(stored(model, pieces), tmp_path / f"rank{r}.onnx")
    ranks = [tmp_path / f"rank{r}.onnx" for r in range(n)]
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"world_size: {n}\nrelations: {{}}\n")  # the shapes alone say world size 2 (wq: 8 -> 4)
    result = check(tmp_path / "seq.onnx", ranks, relations=spec, numeric=True)
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies][:2]
    found = {r.seq_value: r for r in result.inputs.relations if r.layout.pad}
    assert sorted(found) == ["w1", "w2", "wk", "wo", "wq", "wv"]
    assert all(r.established == "values" for r in found.values())
    assert found["wk"].evidence == (
        "values match units of 2 on axis 1: every unit held, 2 copies, 2 zero units of padding "
        "(not Replicate, which the shapes gave)"
    )
    # the largest unit the values show: wq's heads 0-1 on rank 0 are one run of 4 columns, which
    # the head reshape and the contraction with wo cut back into heads of 2 (~f2)
    assert found["wq"].evidence.startswith("values match units of 4 on axis 1")
    assert not result.verdict_.conditional or all(not r.layout.pad for r in result.verdict_.assumed)
    assert result.witness is not None and not result.witness.contradictions


def test_a_hostile_pad_to_is_refused_before_it_is_built(tmp_path):
    seq, rank, spec = _case_models(tmp_path, w1={"shard": 1, "pad_to": 2_000_000_000})
    result = CliRunner().invoke(main, ["check", str(seq), str(rank), "--world-size", "3", "--relations", str(spec)])
    assert result.exit_code == 2
    assert result.output.strip() == f"shardlog: error: {spec}: 'w1': the padded layout lists over 4,194,304 units"


def test_a_hostile_param_text_is_refused_before_it_is_built():
    with pytest.raises(ValueError, match="over 4,194,304 units"):
        expand("pad1/9999999999:0-999999999")
    with pytest.raises(ValueError, match="not a padded param"):
        Layout.from_row("Shard", 0, "padded")
