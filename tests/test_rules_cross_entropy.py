"""Vocab-parallel cross-entropy (rules/parallel/cross_entropy.dl) on small hand-written graphs
(ONNX text): the seq's per-token loss ``NegativeLogLikelihoodLoss(LogSoftmax(logits), labels)``
against Megatron-LM's ``vocab_parallel_cross_entropy`` on logits sharded on the vocab over two
ranks. Each correct rank program verifies, each one-line bug beside it is flagged at the seq
loss with the hint that names the fix; every derived relation is confirmed on numbers
(conftest.check_text_graphs) and the numeric witness measures the loss (its labels hold the
ignore index and the ids at the ranks' range edges)."""

from __future__ import annotations

import onnx.parser
import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
V, N = 16, 2
CHUNK = V // N


def _seq(ignore: bool) -> str:
    attrs = 'reduction="none", ignore_index=-100' if ignore else 'reduction="none"'
    return f"""
g (float[4, 8] x, float[8, {V}] w, int64[4] t) => (float[4] loss) {{
  l = MatMul(x, w)
  lp = LogSoftmax<axis=1>(l)
  loss = NegativeLogLikelihoodLoss<{attrs}>(lp, t)
}}
"""


def _rank(r: int, edits: dict[str, str], lo: int | None = None, hi: int | None = None, decl: str = "") -> str:
    """Rank r's Megatron-LM vocab_parallel_cross_entropy; ``edits`` replaces whole lines (by the
    value they define; "" drops the line), ``decl`` declares more value shapes."""
    lo = r * CHUNK if lo is None else lo
    hi = lo + CHUNK if hi is None else hi
    consts = (
        f"int64[1] ax = {{-1}}, int64[2] col = {{-1, 1}}, int64 lo = {{{lo}}}, int64 hi = {{{hi}}}, "
        "int64 zi = {0}, float zf = {0.0}, int64 ign = {-100}, float[4] gm, float[4] P, float[4] S" + decl
    )
    lines = {
        "l": "l = MatMul(x, w)",
        "m": "m = ReduceMax<keepdims=0>(l, ax)",
        "gm": 'gm = com.microsoft.AllReduce<reduction="max">(m)',
        "c": "c = Unsqueeze(gm, ax)",
        "z": "z = Sub(l, c)",
        "below": "below = Less(t, lo)",
        "above": "above = GreaterOrEqual(t, hi)",
        "mask": "mask = Or(below, above)",
        "sh": "sh = Sub(t, lo)",
        "idx": "idx = Where(mask, zi, sh)",
        "idx2": "idx2 = Reshape(idx, col)",
        "gat": "gat = GatherElements<axis=1>(z, idx2)",
        "pv0": "pv0 = Reshape(gat, ax)",
        "pv": "pv = Where(mask, zf, pv0)",
        "P": "P = com.microsoft.AllReduce(pv)",
        "e": "e = Exp(z)",
        "se": "se = ReduceSum<keepdims=0>(e, ax)",
        "S": "S = com.microsoft.AllReduce(se)",
        "ls": "ls = Log(S)",
        "l0": "l0 = Sub(ls, P)",
        "q": "q = Equal(t, ign)",
        "loss": "loss = Where(q, zf, l0)",
    }
    lines.update(edits)
    body = "\n  ".join(v for v in lines.values() if v)
    sig = f"g (float[4, 8] x, float[8, {CHUNK}] w, int64[4] t) => (float[4] loss)"
    text = f"{HEADER}\n{sig} <{consts}> {{\n  {body}\n}}"
    onnx.parser.parse_model(text)  # a typo in a rank program is a test bug: fail here
    return text


def _run(write_models, ignore: bool, edits: dict[str, str], ranges: dict | None = None, decl: str = ""):
    ranks = [_rank(r, edits, decl=decl, **(ranges or {}).get(r, {})) for r in range(N)]
    return check_text_graphs(write_models, HEADER + _seq(ignore), ranks, infer_shapes=True)[0]


CORRECT = {
    # Megatron's form, the ignored labels zeroed afterwards (the caller's loss mask)
    "megatron_ignore_index": (True, {}, ""),
    # the seq without ignore_index, the ranks without the loss mask
    "megatron_no_ignore_index": (False, {"q": "", "loss": "loss = Identity(l0)"}, ""),
    # the max kept as a column (keepdims=1): the all-reduced column subtracted as it is
    "max_keepdims": (
        True,
        {"m": "m = ReduceMax<keepdims=1>(l, ax)", "gm": 'gk = com.microsoft.AllReduce<reduction="max">(m)',
         "c": "c = Identity(gk)"},
        ", float[4, 1] gk",
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", sorted(CORRECT))
def test_vocab_parallel_cross_entropy_verifies(write_models, case):
    ignore, edits, decl = CORRECT[case]
    result = _run(write_models, ignore, edits, decl=decl)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.verdict_.outputs[0].relation == "Replicate"
    assert result.numeric["loss"] < 1e-5


# (edits, per-rank ranges, the hint that names the fix or None)
BUGS = {
    # each rank shifts by its own max: the shifts differ, the predicted logits do not cancel them
    "local_max": ({"c": "c = Unsqueeze(m, ax)"}, {}, None),
    # the range end inclusive (start + V/N - 1): each range's last id masked everywhere
    "range_end_inclusive": ({}, {0: {"hi": CHUNK - 1}, 1: {"hi": 2 * CHUNK - 1}}, "vocab-range"),
    # rank 1 takes rank 0's range (the offset missing)
    "rank_offset_missing": ({}, {1: {"lo": 0}}, "vocab-range"),
    # the predicted logit not all-reduced
    "predicted_not_reduced": ({"P": "", "l0": "l0 = Sub(ls, pv)"}, {}, "missing-allreduce"),
    # the row sums of the exponentials not all-reduced
    "local_sum_exp": ({"S": "", "ls": "ls = Log(se)"}, {}, None),
    # the seq ignores label -100, the ranks do not zero its loss
    "ignore_index_not_masked": ({"q": "", "loss": "loss = Identity(l0)"}, {}, None),
}


@pytest.mark.parametrize("case", sorted(BUGS))
def test_vocab_parallel_cross_entropy_bugs_are_flagged(write_models, case):
    edits, ranges, hint = BUGS[case]
    result = _run(write_models, True, edits, ranges)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("LogSoftmax", "differ")
    if hint:
        assert hint in first.hint_ids, first.hint_ids
    assert result.numeric["loss"] > 1e-2


_FUSED_SEQ = f"""
g (float[4, 8] x, float[8, {V}] w, int64[4] t) => (float[4] loss) {{
  l = MatMul(x, w)
  loss = SoftmaxCrossEntropyLoss<reduction="none", ignore_index=-100>(l, t)
}}
"""


def test_the_fused_loss_against_megatron_verifies(write_models):
    """The seq's fused ``SoftmaxCrossEntropyLoss`` (the old TorchScript exporter's form of
    ``cross_entropy``) is expanded through its ONNX function body, whose log-softmax runs on a
    view ``[N, C, 1]`` transposed to ``[N, 1, C]`` and back; the canonical rewrite moves it back
    onto ``[N, C]`` (analyzer/rewrite/canonical.py, per-axis ops through views), where the rule
    of Megatron's form meets it. The ranks' own ops with function bodies (``GreaterOrEqual``)
    stay as they are: expanding them too would hide the rank's range mask."""
    ranks = [_rank(r, {}) for r in range(N)]
    result = check_text_graphs(write_models, HEADER + _FUSED_SEQ, ranks, infer_shapes=True)[0]
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.numeric["loss"] < 1e-5


@pytest.mark.parametrize("case", ["predicted_not_reduced", "rank_offset_missing"])
def test_the_fused_loss_against_a_megatron_bug_is_flagged(write_models, case):
    """A bug: the expansion proves no more, so the fused op the user wrote stays and is the
    frontier, its numbers differing (the fix-naming hints of Megatron's form read the expanded
    log-softmax, so only the generic hint is given there)."""
    edits, ranges, _ = BUGS[case]
    ranks = [_rank(r, edits, **ranges.get(r, {})) for r in range(N)]
    result = check_text_graphs(write_models, HEADER + _FUSED_SEQ, ranks, infer_shapes=True)[0]
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("SoftmaxCrossEntropyLoss", "differ")
    assert result.numeric["loss"] > 1e-2
