"""Fused ops expanded through their ONNX function bodies (analyzer/rewrite/functions.py) and the
driver loop that expands them on the frontier (analyzer/solve/expand.py)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest
from conftest import check_text_graphs
from onnx.reference import ReferenceEvaluator

from analyzer.rewrite.canonical import canonicalize
from analyzer.rewrite.functions import fuses_several_ops, local_only_on_some_side

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'

SEQ = """
g (float[4, 8] x, float[8, 16] w) => (float[4, 16] p) {
  l = MatMul(x, w)
  p = LogSoftmax<axis=-1>(l)
}
"""


def _rank(max_reduce: str) -> str:
    """Vocab-parallel log-softmax written by hand (Megatron's cross-entropy): the rank's logits
    are chunk r of the vocab, shifted by the row max (``max_reduce`` makes it from the local
    one), minus the log of the all-reduced row sums of the exponentials."""
    return f"""
g (float[4, 8] x, float[8, 8] w) => (float[4, 8] p) <int64[1] ax = {{-1}}, float[4, 1] gm, float[4, 1] gs> {{
  l = MatMul(x, w)
  m = ReduceMax<keepdims=1>(l, ax)
  gm = {max_reduce}
  d = Sub(l, gm)
  e = Exp(d)
  s = ReduceSum<keepdims=1>(e, ax)
  gs = com.microsoft.AllReduce(s)
  lg = Log(gs)
  p = Sub(d, lg)
}}
"""


def _check(write_models, rank: str):
    return check_text_graphs(write_models, HEADER + SEQ, [HEADER + rank] * 2, infer_shapes=True)[0]


def test_fused_log_softmax_meets_the_hand_written_vocab_parallel_one(write_models):
    # no rule knows a LogSoftmax over the sharded axis; its ONNX body (max, sub, exp, sum, log,
    # sub) meets the ranks' program node for node, and the existing rules prove it
    result = _check(write_models, _rank('com.microsoft.AllReduce<reduction="max">(m)'))
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"
    assert result.inputs.expand_ops == {("", "LogSoftmax")}
    assert result.numeric["p"] < 1e-5


def test_local_max_is_flagged_at_the_fused_op_the_user_wrote(write_models):
    # one line: the row max not all-reduced, so each rank shifts by its own max
    result = _check(write_models, _rank("Identity(m)"))
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("LogSoftmax", "differ")
    assert result.inputs.expand_ops == frozenset()  # the expansion proved nothing more: not kept
    assert result.numeric["p"] > 1e-2


@pytest.mark.parametrize(
    ("op", "attrs", "several"),
    [("LogSoftmax", "<axis=1>", True), ("Softmax", "<axis=-1>", True), ("Relu", "", False)],
)
def test_expansion_keeps_values_names_and_scopes(op, attrs, several):
    model = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 18]>
g (float[3, 5] x) => (float[3, 5] y) {{
  h = Neg(x)
  y = {op}{attrs}(h)
}}""")
    model = onnx.shape_inference.infer_shapes(model)
    call = model.graph.node[1]
    call.name = "model.head.act"
    call.metadata_props.add(key="pkg.torch.onnx.name_scopes", value="['', 'model.head']")
    out = canonicalize(model, frozenset({("", op)}))
    assert all(n.op_type != op for n in out.graph.node)
    body = out.graph.node[1:]
    assert all(n.name.startswith("model.head.act/") for n in body)
    assert all(list(n.metadata_props) == list(call.metadata_props) for n in body)
    assert "y" in {o for n in body for o in n.output}
    declared = {vi.name for vi in out.graph.value_info}
    assert {o for n in body for o in n.output if o != "y"} <= declared
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = ReferenceEvaluator(out).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert fuses_several_ops(model, ("", op)) is several


def test_a_local_function_is_expanded_only_where_one_side_spells_it_out():
    text = """<ir_version: 8, opset_import: ["" : 18, "com.example" : 1]>
g (float[2] x) => (float[2] y) {{
  y = {body}
}}
<domain: "com.example", opset_import: ["" : 18]>
Twice (v) => (out) {{
  out = Add(v, v)
}}"""
    calls = onnx.parser.parse_model(text.format(body="com.example.Twice(x)"))
    spelled = onnx.parser.parse_model(text.format(body="Add(x, x)"))
    key = ("com.example", "Twice")
    assert local_only_on_some_side([calls, spelled], key)
    assert not local_only_on_some_side([calls, calls], key)  # a kernel both call: a rule is written for it
    assert local_only_on_some_side([calls, calls], ("", "Softmax"))  # standard ops are not restricted


def _gemm_model(inputs=("a", "b", "c"), **attrs) -> onnx.ModelProto:
    from onnx import TensorProto, helper

    shapes = {"a": [4, 8], "b": [16, 8] if attrs.get("transB") else [8, 16], "c": [16]}
    node = helper.make_node("Gemm", list(inputs), ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(v, TensorProto.FLOAT, shapes[v]) for v in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_gemm_with_a_bias_and_default_attributes_has_a_body_from_the_rule_library():
    from analyzer.rewrite.functions import bundled_bodies, has_body

    assert len(bundled_bodies()[("", "Gemm")]) == 2  # rules/functions/Gemm.onnxtxt, Gemm_transB.onnxtxt
    cases = [({}, ["MatMul", "Add"]), ({"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}, ["MatMul", "Add"]),
             ({"transB": 1}, ["Transpose", "MatMul", "Add"])]
    for attrs, ops in cases:
        model = _gemm_model(**attrs)
        assert has_body(model, ("", "Gemm")) and fuses_several_ops(model, ("", "Gemm"))
        out = canonicalize(model, frozenset({("", "Gemm")}))
        assert [n.op_type for n in out.graph.node] == ops
        rng = np.random.default_rng(0)
        feeds = {"a": rng.standard_normal((4, 8)).astype(np.float32),
                 "b": rng.standard_normal((16, 8) if attrs.get("transB") else (8, 16)).astype(np.float32),
                 "c": rng.standard_normal(16).astype(np.float32)}
        want = ReferenceEvaluator(model).run(None, feeds)[0]
        np.testing.assert_allclose(ReferenceEvaluator(out).run(None, feeds)[0], want, rtol=1e-6)


@pytest.mark.parametrize(
    "inputs, attrs",
    [(("a", "b", "c"), {"transA": 1}), (("a", "b", "c"), {"alpha": 0.5}), (("a", "b", "c"), {"beta": 2.0}),
     (("a", "b", "c"), {"transB": 1, "alpha": 0.5}), (("a", "b"), {})],
)
def test_gemm_calls_the_body_does_not_fit_stay_fused(inputs, attrs):
    from analyzer.rewrite.functions import has_body

    model = _gemm_model(inputs, **attrs)
    assert not has_body(model, ("", "Gemm"))
    out = canonicalize(model, frozenset({("", "Gemm")}))
    assert [n.op_type for n in out.graph.node] == ["Gemm"]
