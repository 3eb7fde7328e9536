"""The Hugging Face Trainer's data-parallel arithmetic, piece by piece, on small hand-written
graphs (ONNX text): a count gathered and summed (rules/collectives/gathered_reduce.dl), a loss
multiplied by the world size (collectives/scaled_replicate.dl, MultipliedBy), and the rewrite
that cancels a factor the program divides back out (analyzer/rewrite/scale.py). Each correct
form verifies and is confirmed on numbers (conftest.check_text_graphs); a one-line bug beside it
is flagged. The whole exported steps (examples/llama_dp2_trainer*) run in
tests/test_train_steps.py."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest
from conftest import check_text_graphs

from analyzer.rewrite.scale import cancel_divided_factors, linearity_tables

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'

# x: each rank's rows of the batch (Shard(0)); t: the token count that normalizes y (the
# Trainer's num_items_in_batch); m: the total reported through a loss scaled by N and averaged
# (the Trainer's logged loss, nested_gather(loss).mean())
SEQ_COUNT = """
g (float[4, 8] x) => (float[4, 8] y, float m) {
  t = ReduceSum<keepdims=0>(x)
  y = Div(x, t)
  m = ReduceSum<keepdims=0>(x)
}
"""
_RANK = (
    "g (float[2, 8] x) => (float[2, 8] y, float m) <int64[1] zero = {{0}}, float two = {{2.0}}, float[1] u,"
    " float[2] gg, float[1] v, float[2] hh> {{\n"
    "  p = ReduceSum<keepdims=0>(x)\n  {count}\n  y = Div(x, t)\n  {mean}\n}}"
)
_GATHER_SUM = ("u = Unsqueeze(p, zero)\n  gg = com.microsoft.AllGather<axis=0, group_size=2>(u)\n"
               "  t = ReduceSum<keepdims=0>(gg)")
_SCALED_MEAN = ("q = Mul(p, two)\n  v = Unsqueeze(q, zero)\n  hh = com.microsoft.AllGather<axis=0, group_size=2>(v)\n"
                "  m = ReduceMean<keepdims=0>(hh)")
COUNT_CASES = {
    # accelerate's gather of the 0-d count, then .sum(); the loss times N, gathered and averaged
    "gather_sum": (_GATHER_SUM, _SCALED_MEAN, None),
    # bugs: the count not gathered (the rank's own count: output y); the loss times N gathered
    # and summed instead of averaged (N times the total: output m)
    "bug_count_not_gathered": ("t = Identity(p)", _SCALED_MEAN, "y"),
    "bug_scaled_gather_sum": (_GATHER_SUM, _SCALED_MEAN.replace("ReduceMean", "ReduceSum"), "m"),
}


@pytest.mark.parametrize("case", sorted(COUNT_CASES))
def test_gathered_sum_is_an_all_reduce(write_models, case):
    count, mean, broken = COUNT_CASES[case]
    rank = HEADER + _RANK.format(count=count, mean=mean)
    result = check_text_graphs(write_models, HEADER + SEQ_COUNT, [rank] * 2, infer_shapes=True)[0]
    outputs = {o.name: o.relation for o in result.verdict_.outputs}
    if broken is None:
        assert result.verdict == "verified"
        assert outputs == {"y": "Shard(0)", "m": "Replicate"}
        assert max(result.numeric.values()) < 1e-4
        return
    assert result.verdict == "discrepancy"
    assert outputs[broken] is None and result.numeric[broken] > 1e-2
    other = ({"y", "m"} - {broken}).pop()
    assert outputs[other] is not None and result.numeric[other] < 1e-4
    first = result.verdict_.discrepancies[0]
    assert first.outputs == [broken], (first.node, first.outputs)  # where the bug is


# --- the rewrite --------------------------------------------------------------------------------

# a backward in miniature: seed c, divided by a count, through a masked fill and a MatMul
# (homogeneous in the seed), then divided by k before the all-reduce (DDP's average, k = c)
_STEP = """
g (float[4, 8] x, bool[4, 3] m) => (float[8, 3] out) <float c = {{{c}}}, float n = {{5.0}},
    float zero = {{0.0}}, float k = {{{k}}}, int64[2] shape = {{4, 3}}> {{
  xt = Transpose<perm=[1, 0]>(x)
  s = Div(c, n)
  e = Expand(s, shape)
  h = Where(m, e, zero)
  gw = MatMul(xt, h)
  {tail}
}}
"""


def _model(c="2.0", k="2.0", tail="d = Div(gw, k)\n  out = Neg(d)"):
    return onnx.parser.parse_model(HEADER + _STEP.format(c=c, k=k, tail=tail))


def _run(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _feeds():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((4, 8)).astype(np.float32), "m": rng.random((4, 3)) > 0.3}


def test_linearity_tables_are_read_from_the_rule_file():
    lin_in, joint, beside = linearity_tables()
    assert ("Div", "", 0) in lin_in and ("Div", "", 1) not in lin_in
    assert ("Add", "") in joint
    assert ("Where", "", 1, 2) in beside and ("ScatterND", "", 2, 0) in beside


def test_a_factor_divided_back_out_is_cancelled_and_the_values_stay():
    model = _model()
    before = _run(model, _feeds())
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert cancel_divided_factors(rewritten) == 1
    ops = [n.op_type for n in rewritten.graph.node]
    assert ops.count("Div") == 1 and "Identity" in ops  # the division by c became Identity
    seed = next(n for n in rewritten.graph.node if n.output[0] == "s").input[0]
    value = next(t for t in rewritten.graph.initializer if t.name == seed)
    assert float(onnx.numpy_helper.to_array(value)) == 1.0
    np.testing.assert_array_equal(_run(rewritten, _feeds()), before)


@pytest.mark.parametrize(
    "why, kwargs",
    [
        ("nothing divides the factor back out (the gradients summed: missing-average)",
         {"tail": "out = Neg(gw)"}),
        ("divided by another constant", {"k": "4.0"}),
        ("a non-linear op on the way (Relu)", {"tail": "r = Relu(gw)\n  d = Div(r, k)\n  out = Neg(d)"}),
        ("a reached value leaves the graph", {"tail": "out = Identity(gw)\n  d = Div(gw, k)"}),
        ("no factor (the seed is 1: the loss was not scaled)", {"c": "1.0"}),
        ("a Cast to an integer type rounds", {"tail": "ci = Cast<to=7>(gw)\n  cf = Cast<to=1>(ci)\n"
                                                     "  d = Div(cf, k)\n  out = Neg(d)"}),
        ("a Pad with a non-zero fill", {"tail": "pv = Constant<value = float {1.0}>()\n"
                                                "  pads = Constant<value = int64[4] {0, 0, 0, 0}>()\n"
                                                "  pd = Pad(gw, pads, pv)\n  d = Div(pd, k)\n  out = Neg(d)"}),
    ],
)
def test_no_rewrite_unless_every_path_is_linear_and_divided(why, kwargs):
    model = _model(**kwargs)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    assert cancel_divided_factors(copy) == 0, why
    assert copy.graph == model.graph


def test_product_of_two_reached_values_is_not_linear():
    model = _model(tail="p = Mul(gw, gw)\n  d = Div(p, k)\n  out = Neg(d)")
    assert cancel_divided_factors(model) == 0


def test_scatter_into_zeros_is_linear_but_a_multiplying_scatter_is_not():
    text = """
g (float[4] x, int64[2, 1] i) => (float[4] out) <float c = {2.0}, float z = {0.0}, int64[1] shape = {4},
    int64[1] lo = {0}, int64[1] hi = {2}> {
  s = Mul(c, x)
  u = Slice(s, lo, hi)
  zz = Expand(z, shape)
  t = ScatterND<reduction = "RED">(zz, i, u)
  d = Div(t, c)
  out = Neg(d)
}
"""
    for red, expected in (("none", 1), ("add", 1), ("mul", 0)):
        model = onnx.parser.parse_model(HEADER + text.replace("RED", red))
        assert cancel_divided_factors(model) == expected, red


def test_work_is_bounded_and_a_spent_bound_rewrites_nothing(monkeypatch):
    """The values followed over all edges are bounded by the graph's size (hostile input: many
    scaled edges into one long region); when the bound is spent the remaining edges keep their
    factor, which is the unrewritten, still sound, graph."""
    import analyzer.rewrite.scale as scale

    monkeypatch.setattr(scale, "_MIN_WORK", 3)
    monkeypatch.setattr(scale, "_WORK_PER_NODE", 0)
    model = _model()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    assert cancel_divided_factors(copy) == 0
    assert copy.graph == model.graph
