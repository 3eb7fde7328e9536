"""Conditional proofs said as such (issue 22 item 2): a ``verified`` that rests on input relations
not established on values (fed inputs, weights the files do not store, spec relations) says that
it holds given them, in text, JSON, HTML and SARIF; ``--explain`` says how each relation was
established."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, model_from_text
from onnx import helper, numpy_helper

from analyzer import check
from analyzer.cli import main
from analyzer.reports.html import render_html
from analyzer.reports.sarif import to_sarif
from analyzer.reports.text import to_json

HEADER = '<ir_version: 8, opset_import: ["" : 18]>'
F = onnx.TensorProto.FLOAT


def _run(args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _stored(name: str, w: np.ndarray) -> onnx.ModelProto:
    """y = Relu(w): no fed input, the weight stored in the file."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["w"], ["y"])], name, [],
        [helper.make_tensor_value_info("y", F, list(w.shape))], [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_proof_on_stored_and_compared_weights_only_is_unconditional(write_models, tmp_path):
    w = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    paths = write_models({"seq": _stored("seq", w), "r0": _stored("r", w[:4]), "r1": _stored("r", w[4:])})
    files = [paths["seq"], paths["r0"], paths["r1"]]
    code, out = _run(["check", *files, "--explain", "--json", tmp_path / "r.json"])
    assert code == 0, out
    assert "w = Shard(0) on ranks 0..1  (inferred; checked on values: values match chunk r on axis 0)" in out
    assert "given" not in out and out.strip().splitlines()[-1].startswith("verified (")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["conditional"] is False and report["assumed"] == []
    only = {
        "name": "w",
        "relation": "Shard(0)",
        "source": "inferred",
        "evidence": "values match chunk r on axis 0",
        "established": "values",
    }
    assert report["input_relations"] == [only]


# a weight-free export: the weight is a graph input (torch.fx dumps, the scale exports)
_SEQ = HEADER + """
seq (float[2, 8] x, float[8, 6] w) => (float[2, 6] y) {
  y = MatMul(x, w)
}
"""
_RANK = HEADER + """
rank (float[2, 8] x, float[8, 3] w) => (float[2, 3] y) {
  y = MatMul(x, w)
}
"""


@pytest.fixture
def weight_free(write_models):
    paths = write_models({"seq": model_from_text(_SEQ), "rank": model_from_text(_RANK)})
    return [paths["seq"], paths["rank"], paths["rank"]]


def test_weight_free_proof_holds_given_the_assumed_relations(weight_free, tmp_path):
    code, out = _run(["check", *weight_free, "--explain"])
    assert code == 0, out
    assert "input relations (2: 0 checked on values, 2 assumed)" in out
    assert "w = Shard(1) on ranks 0..1  (inferred; assumed: names and shapes)" in out
    assert "given (not checked on values): x = Replicate [shapes], w = Shard(1) [shapes]" in out
    assert out.strip().splitlines()[-1].startswith("verified, given 2 assumed input relations (")

    result = check(weight_free[0], weight_free[1:])
    assert result.verdict == "verified" and result.verdict_.conditional
    report = to_json(result)
    assert report["conditional"] is True
    assert report["assumed"] == ["x = Replicate [shapes]", "w = Shard(1) [shapes]"]
    assert {r["established"] for r in report["input_relations"]} == {"shapes"}
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, json.loads((EXAMPLES.parent / "schemas" / "report.schema.json").read_text()))

    page = render_html(result)
    assert 'id="given"' in page and "verified given 2 input relations not checked on values" in page
    assert "w = Shard(1) [shapes]" in page and "assumed: names and shapes" in page

    sarif = to_sarif(result)["runs"][0]
    assert sarif["properties"]["conditional"] is True
    assert sarif["properties"]["assumedRelations"] == ["x = Replicate [shapes]", "w = Shard(1) [shapes]"]
    note = sarif["invocations"][0]["toolExecutionNotifications"][0]
    assert note["level"] == "note"
    assert "verified given 2 input relations not checked on values" in note["message"]["text"]
    assert sarif["results"] == []


def test_spec_relations_are_assumed_and_only_those_upstream_of_the_outputs(write_models, tmp_path):
    seq = HEADER + """
seq (float[2, 8] x, float[8, 6] w, float[4] z) => (float[2, 6] y, float[4] u) {
  y = MatMul(x, w)
  u = Relu(z)
}
"""
    rank = HEADER + """
rank (float[2, 8] x, float[8, 3] w, float[4] z) => (float[2, 3] y, float[4] u) {
  y = MatMul(x, w)
  u = Relu(z)
}
"""
    paths = write_models({"seq": model_from_text(seq), "rank": model_from_text(rank)})
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: {shard: 1}\noutputs: [0]\n")
    result = check(paths["seq"], [paths["rank"], paths["rank"]], relations=spec)
    assert result.verdict == "verified"
    assumed = {(r.seq_value, r.established) for r in result.verdict_.assumed}
    assert assumed == {("x", "shapes"), ("w", "spec")}  # z feeds only the output left out


def test_a_discrepancy_is_not_a_conditional_proof(write_models):
    relu = _SEQ.replace("y = MatMul(x, w)", "h = MatMul(x, w)\n  y = Relu(h)")
    bad = HEADER + """
rank (float[2, 4] x, float[4, 6] w) => (float[2, 6] y) {
  h = MatMul(x, w)
  y = Relu(h)
}
"""
    paths = write_models({"seq": model_from_text(relu), "rank": model_from_text(bad)})
    result = check(paths["seq"], [paths["rank"], paths["rank"]])
    assert result.verdict == "discrepancy" and result.verdict_.assumed  # Relu of a partial sum
    assert not result.verdict_.conditional and to_json(result)["conditional"] is False


@pytest.mark.skipif(not (EXAMPLES / "llama_tp2_dp2").is_dir(), reason="example not present")
def test_mesh_proof_collects_the_assumptions_of_its_checks():
    folder = EXAMPLES / "llama_tp2_dp2"
    ranks = [folder / f"rank{r}.onnx" for r in range(4)]
    result = check(folder / "seq.onnx", ranks, relations=folder / "mesh.yaml")
    assert result.verdict == "verified" and result.verdict_.conditional
    assumed = {(r.seq_value, str(r.layout)) for r in result.verdict_.assumed}
    assert {("input_ids", "Replicate"), ("input_ids", "Shard(0)")} <= assumed  # over tp, over dp
    assert all(r.established != "values" for r in result.verdict_.assumed)
