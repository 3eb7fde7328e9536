"""Reductions over a sharded axis completed with an all-reduce, and scaled relations
(rules/parallel/reductions.dl, rules/core/scale.dl, collectives/AllReduce.dl and
scaled_replicate.dl), on small hand-written graphs (ONNX text). Each identity is a correct
rank program that verifies, with a one-line bug beside it that is flagged where it breaks; every
derived relation is confirmed on numbers (conftest.check_text_graphs) and the numeric witness
measures the outputs."""

from __future__ import annotations

import onnx.parser
import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
CONSTS = "int64[1] ax = {-1}, float two = {2.0}, float half = {0.5}, float sixteen = {16.0}, float eps = {1e-6}"


def _run(write_models, seq: str, rank: str, declared: str = ""):
    """Check ``seq`` against two ranks running ``rank`` (the column-parallel half of the
    ``[8, 16]`` projection: the hidden axis 1 is ``Shard(1)``)."""
    extra = f", {declared}" if declared else ""
    out_sig = seq.split("=> (")[1].split(")")[0]
    head = f"g (float[4, 8] x, float[8, 8] w) => ({_rank_outputs(out_sig)}) <{CONSTS}{extra}> {{"
    rank_model = HEADER + head + rank + "\n}"
    onnx.parser.parse_model(rank_model)  # a typo in a rank program is a test bug: fail here
    return check_text_graphs(write_models, HEADER + seq, [rank_model] * 2, infer_shapes=True)[0]


def _rank_outputs(sig: str) -> str:
    """The ranks' output signature: a [4, 16] output is the rank's [4, 8] chunk."""
    return sig.replace("[4, 16]", "[4, 8]")


SEQ_MEAN = f"""
g (float[4, 8] x, float[8, 16] w) => (float[4, 1] y) <{CONSTS}> {{
  h = MatMul(x, w)
  y = ReduceMean<keepdims=1>(h, ax)
}}
"""

_LOCAL_MEAN = "m = ReduceMean<keepdims=1>(h, ax)\n  gm = com.microsoft.AllReduce(m)\n  "
_LOCAL_SUM = "m = ReduceSum<keepdims=1>(h, ax)\n  gm = com.microsoft.AllReduce(m)\n  "
MEAN_CASES = {
    # local mean, all-reduce, times 1/N (as a division, and as a multiplication by 0.5)
    "local_mean_div": (_LOCAL_MEAN + "y = Div(gm, two)", True),
    "local_mean_mul": (_LOCAL_MEAN + "y = Mul(half, gm)", True),
    # local sum, all-reduce, divided by the element count L = 16
    "local_sum_div": (_LOCAL_SUM + "y = Div(gm, sixteen)", True),
    # bugs: the 1/N forgotten; the sum divided by N instead of L
    "bug_mean_not_divided": (_LOCAL_MEAN + "y = Identity(gm)", False),
    "bug_sum_divided_by_n": (_LOCAL_SUM + "y = Div(gm, two)", False),
}


@pytest.mark.parametrize("case", sorted(MEAN_CASES))
def test_mean_over_a_sharded_axis(write_models, case):
    body, correct = MEAN_CASES[case]
    result = _run(write_models, SEQ_MEAN, "h = MatMul(x, w)\n  " + body, "float[4, 1] gm")
    _expect_mean(result, correct)
    if not correct:
        first = result.verdict_.discrepancies[0]
        assert (first.op_type, first.numbers) == ("ReduceMean", "differ")
        assert "scaled-not-divided" in first.hint_ids


def _expect_mean(result, correct: bool) -> None:
    """A correct mean is Replicate of the seq's and equal on numbers; a wrong one is flagged and off."""
    if correct:
        assert result.verdict == "verified"
        assert result.verdict_.outputs[0].relation == "Replicate"
        assert result.numeric["y"] < 1e-6
    else:
        assert result.verdict == "discrepancy"
        assert result.numeric["y"] > 1e-2


_AVG = 'com.microsoft.AllReduce<reduction="avg">'
AVG_CASES = {
    # DTensor's Partial("avg") -> Replicate: the local means averaged over the ranks
    "local_mean_avg": (f"m = ReduceMean<keepdims=1>(h, ax)\n  y = {_AVG}(m)", True),
    # the mean completed (all-reduce, / N), then averaged again over its N equal copies
    "replicated_avg": (_LOCAL_MEAN + f"a = Div(gm, two)\n  y = {_AVG}(a)", True),
    # bugs: the local sums averaged (L/N times the mean); the average multiplied by N, as if the
    # all-reduce had averaged sums (y / N on every rank would be right: a Partial(sum) of y)
    "bug_local_sum_avg": (f"m = ReduceSum<keepdims=1>(h, ax)\n  y = {_AVG}(m)", False),
    "bug_avg_times_n": (f"m = ReduceMean<keepdims=1>(h, ax)\n  a = {_AVG}(m)\n  y = Mul(a, two)", False),
}


@pytest.mark.parametrize("case", sorted(AVG_CASES))
def test_mean_over_a_sharded_axis_by_an_average_all_reduce(write_models, case):
    """com.microsoft::AllReduce(reduction="avg") (collectives/AllReduce.dl)."""
    body, correct = AVG_CASES[case]
    result = _run(write_models, SEQ_MEAN, "h = MatMul(x, w)\n  " + body, "float[4, 1] gm, float[4, 1] a")
    _expect_mean(result, correct)
    if not correct:
        assert result.verdict_.outputs[0].relation is None


SEQ_SOFTMAX = f"""
g (float[4, 8] x, float[8, 16] w) => (float[4, 16] p) <{CONSTS}> {{
  l = MatMul(x, w)
  p = Softmax<axis=-1>(l)
}}
"""

_SUMS = "s = ReduceSum<keepdims=1>(e, ax)\n  gs = com.microsoft.AllReduce(s)\n  p = Div(e, gs)"
SOFTMAX_CASES = {
    # exp, all-reduce of the row sums, divide (Megatron's vocab-parallel softmax without a shift)
    "exp_sum": ("e = Exp(l)\n  " + _SUMS, True),
    # max-shifted: the row max all-reduced with reduction="max"
    "max_shifted": (
        'm = ReduceMax<keepdims=1>(l, ax)\n  gm = com.microsoft.AllReduce<reduction="max">(m)\n'
        "  d = Sub(l, gm)\n  e = Exp(d)\n  " + _SUMS,
        True,
    ),
    # bugs: each rank shifts by its own max; the row sums not all-reduced
    "bug_local_max": (
        "m = ReduceMax<keepdims=1>(l, ax)\n  d = Sub(l, m)\n  e = Exp(d)\n  " + _SUMS,
        False,
    ),
    "bug_local_sum": ("e = Exp(l)\n  s = ReduceSum<keepdims=1>(e, ax)\n  p = Div(e, s)", False),
}


@pytest.mark.parametrize("case", sorted(SOFTMAX_CASES))
def test_softmax_over_a_sharded_axis(write_models, case):
    body, correct = SOFTMAX_CASES[case]
    result = _run(write_models, SEQ_SOFTMAX, "l = MatMul(x, w)\n  " + body, "float[4, 1] gm, float[4, 1] gs")
    if correct:
        assert result.verdict == "verified"
        assert result.verdict_.outputs[0].relation == "Shard(1)"
        assert result.numeric["p"] < 1e-6
    else:
        assert result.verdict == "discrepancy"
        first = result.verdict_.discrepancies[0]
        assert (first.op_type, first.numbers) == ("Softmax", "differ")
        assert result.numeric["p"] > 1e-2


SEQ_RMSNORM = f"""
g (float[4, 8] x, float[8, 16] w) => (float[4, 16] y) <{CONSTS}> {{
  h = MatMul(x, w)
  sq = Mul(h, h)
  var = ReduceMean<keepdims=1>(sq, ax)
  ve = Add(var, eps)
  rs = Sqrt(ve)
  y = Div(h, rs)
}}
"""

RMS_CASES = {
    # RMSNorm over the sharded hidden axis: the sum of squares all-reduced, divided by H
    "sum_of_squares": (
        "sq = Mul(h, h)\n  ss = ReduceSum<keepdims=1>(sq, ax)\n  gss = com.microsoft.AllReduce(ss)\n"
        "  var = Div(gss, sixteen)\n  ve = Add(var, eps)\n  rs = Sqrt(ve)\n  y = Div(h, rs)",
        True,
    ),
    # ... or the local mean of squares all-reduced and halved
    "mean_of_squares": (
        "sq = Mul(h, h)\n  ms = ReduceMean<keepdims=1>(sq, ax)\n  gss = com.microsoft.AllReduce(ms)\n"
        "  var = Mul(gss, half)\n  ve = Add(var, eps)\n  rs = Sqrt(ve)\n  y = Div(h, rs)",
        True,
    ),
    # bug: the statistics of the local shard only (the all-reduce left out)
    "bug_local_statistics": (
        "sq = Mul(h, h)\n  var = ReduceMean<keepdims=1>(sq, ax)\n  ve = Add(var, eps)\n"
        "  rs = Sqrt(ve)\n  y = Div(h, rs)",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(RMS_CASES))
def test_norm_statistics_over_a_sharded_axis(write_models, case):
    body, correct = RMS_CASES[case]
    result = _run(write_models, SEQ_RMSNORM, "h = MatMul(x, w)\n  " + body, "float[4, 1] gss")
    if correct:
        assert result.verdict == "verified"
        assert result.verdict_.outputs[0].relation == "Shard(1)"
        assert result.numeric["y"] < 1e-5
    else:
        assert result.verdict == "discrepancy"
        first = result.verdict_.discrepancies[0]
        assert (first.op_type, first.numbers) == ("ReduceMean", "differ")
        assert "reduce-over-shard" in first.hint_ids
        assert result.numeric["y"] > 1e-2


SEQ_AVERAGE = f"""
g (float[4, 8] x, float[8, 16] w, float[16, 8] w2) => (float[4, 8] y) <{CONSTS}> {{
  h = MatMul(x, w)
  y = MatMul(h, w2)
}}
"""


@pytest.mark.parametrize(("tail", "correct"), [("y = Div(t, two)", True), ("y = Identity(t)", False)])
def test_replicated_value_all_reduced_then_averaged(write_models, tail, correct):
    # row-parallel output all-reduced (Replicate), then all-reduced again and averaged (DTensor's
    # Partial(avg) of a replicated value): N copies summed are N times it; the average gives it back
    rank = "h = MatMul(x, w)\n  z = MatMul(h, w2)\n  r = com.microsoft.AllReduce(z)\n"
    rank += "  t = com.microsoft.AllReduce(r)\n  " + tail
    seq = SEQ_AVERAGE
    extra = ", float[4, 8] r, float[4, 8] t"
    head = f"g (float[4, 8] x, float[8, 8] w, float[8, 8] w2) => (float[4, 8] y) <{CONSTS}{extra}> {{"
    result = check_text_graphs(write_models, HEADER + seq, [HEADER + head + rank + "\n}"] * 2, infer_shapes=True)[0]
    assert result.verdict == ("verified" if correct else "discrepancy")
    if correct:
        assert result.numeric["y"] < 1e-5
    else:
        # the sequential output only has the relation "twice y" on the ranks: not rebuilt
        assert result.verdict_.outputs[0].relation is None
        assert result.numeric["y"] > 1e-2


SEQ_CARRY = f"""
g (float[4, 8] x, float[8, 8] w, float[8, 8] w2) => (float[4, 8] y) <{CONSTS}> {{
  h = MatMul(x, w)
  y = MatMul(h, w2)
}}
"""


@pytest.mark.parametrize(("tail", "correct"), [("y = Div(t, two)", True), ("y = Identity(t)", False)])
def test_scaled_replicate_carried_through_a_linear_op(write_models, tail, correct):
    # a replicated value all-reduced (twice it on every rank) goes through the next linear op
    # (twice its output) and is divided by N after it; without the division the output is twice y
    rank = "h = MatMul(x, w)\n  a = com.microsoft.AllReduce(h)\n  t = MatMul(a, w2)\n  " + tail
    head = f"g (float[4, 8] x, float[8, 8] w, float[8, 8] w2) => (float[4, 8] y) <{CONSTS}, float[4, 8] a> {{"
    ranks = [HEADER + head + rank + "\n}"] * 2
    result = check_text_graphs(write_models, HEADER + SEQ_CARRY, ranks, infer_shapes=True)[0]
    assert result.verdict == ("verified" if correct else "discrepancy")
    if correct:
        assert result.verdict_.outputs[0].relation == "Replicate"
        assert result.numeric["y"] < 1e-5
    else:
        first = result.verdict_.discrepancies[0]
        assert (first.op_type, first.numbers) == ("MatMul", "differ")
        assert "scaled-not-divided" in first.hint_ids
        assert result.numeric["y"] > 1e-2
