"""Argmax over vocab shards (rules/parallel/argmax.dl) on small hand-written graphs (ONNX text):
the seq's greedy next token ``ArgMax(logits, axis=-1)`` against a vocab-parallel sampler on
logits sharded on the vocab over two ranks (each rank's max and first argmax, the index offset
by the rank's vocab start, both all-gathered, the first rank with the largest max chosen). The
correct program verifies, each one-line bug is flagged at the seq ArgMax; every derived
relation is confirmed on numbers (conftest.check_text_graphs) and the numeric witness measures
the token ids."""

from __future__ import annotations

import onnx.parser
import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
V, N = 16, 2
CHUNK = V // N

SEQ = f"""
g (float[4, 8] x, float[8, {V}] w) => (int64[4] tok) {{
  l = MatMul(x, w)
  tok = ArgMax<axis=-1, keepdims=0>(l)
}}
"""


def _rank(r: int, edits: dict[str, str], off: int | None = None) -> str:
    """Rank r's program; ``edits`` replaces whole lines by the value they define ("" drops it)."""
    off = r * CHUNK if off is None else off
    consts = (
        f"int64[1] ax = {{-1}}, int64[1] zero = {{0}}, int64 off = {{{off}}}, int64[2] stack = {{{N}, 4}}, "
        f"float[{N * 4}] gv, int64[{N * 4}] gi"
    )
    lines = {
        "l": "l = MatMul(x, w)",
        "v": "v = ReduceMax<keepdims=0>(l, ax)",
        "i": "i = ArgMax<axis=-1, keepdims=0>(l)",
        "j": "j = Add(i, off)",
        "gv": "gv = com.microsoft.AllGather<axis=0>(v)",
        "gi": "gi = com.microsoft.AllGather<axis=0>(j)",
        "mv": "mv = Reshape(gv, stack)",
        "mi": "mi = Reshape(gi, stack)",
        "win": "win = ArgMax<axis=0, keepdims=1>(mv)",
        "t": "t = GatherElements<axis=0>(mi, win)",
        "tok": "tok = Squeeze(t, zero)",
    }
    lines.update(edits)
    body = "\n  ".join(v for v in lines.values() if v)
    sig = f"g (float[4, 8] x, float[8, {CHUNK}] w) => (int64[4] tok)"
    text = f"{HEADER}\n{sig} <{consts}> {{\n  {body}\n}}"
    onnx.parser.parse_model(text)  # a typo in a rank program is a test bug: fail here
    return text


def _run(write_models, edits: dict[str, str], offsets: dict[int, int] | None = None, rank_edits: dict | None = None):
    ranks = [_rank(r, {**edits, **(rank_edits or {}).get(r, {})}, (offsets or {}).get(r)) for r in range(N)]
    return check_text_graphs(write_models, HEADER + SEQ, ranks, infer_shapes=True)[0]


CORRECT = {
    "offset_added": ({}, {}),
    # rank 0's offset 0 folded away, as torch.onnx's optimizer writes it: its index gathered as it is
    "rank0_offset_folded": ({}, {0: {"j": "", "gi": "gi = com.microsoft.AllGather<axis=0>(i)"}}),
    # the stacked row squeezed by a Reshape
    "squeeze_as_reshape": ({"tok": "tok = Reshape(t, ax)"}, {}),
}


@pytest.mark.parametrize("case", sorted(CORRECT))
def test_argmax_over_vocab_shards_verifies(write_models, case):
    edits, rank_edits = CORRECT[case]
    result = _run(write_models, edits, rank_edits=rank_edits)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.verdict_.outputs[0].relation == "Replicate"
    assert result.numeric["tok"] == 0


# (edits, per-rank offsets, the hint that names the fix or None)
BUGS = {
    # the offset by the rank's vocab start missing on every rank
    "rank_offset_missing": ({"j": "j = Identity(i)"}, {}, "vocab-range"),
    # rank 1 offset by another rank's start
    "rank_offset_wrong": ({}, {1: 0}, "vocab-range"),
    # the winner chosen by the smallest max
    "winner_by_min": ({"win": "win = ArgMin<axis=0, keepdims=1>(mv)"}, {}, None),
    # the indices not gathered: each rank picks among the ranks' maxima with its own index
    "local_index": ({"gi": "gi = Concat<axis=0>(j, j)"}, {}, None),
}


@pytest.mark.parametrize("case", sorted(BUGS))
def test_argmax_over_vocab_shards_bugs_are_flagged(write_models, case):
    edits, offsets, hint = BUGS[case]
    result = _run(write_models, edits, offsets)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("ArgMax", "differ")
    if hint:
        assert hint in first.hint_ids, first.hint_ids
    assert result.numeric["tok"] >= 1


K = 2
SEQ_TOPK = f"""
g (float[4, 8] x, float[8, {V}] w) => (float[4, {K}] vals, int64[4, {K}] ids) <int64[1] kk = {{{K}}}> {{
  l = MatMul(x, w)
  vals, ids = TopK<axis=-1>(l, kk)
}}
"""


def _topk_rank(r: int, edits: dict[str, str], off: int | None = None) -> str:
    """Rank r's top-k over vocab shards (rank-major candidates along the last axis)."""
    off = r * CHUNK if off is None else off
    consts = (
        f"int64[1] kk = {{{K}}}, int64 off = {{{off}}}, int64[3] stack = {{{N}, 4, {K}}}, "
        f"int64[2] merged = {{4, {N * K}}}, float[{N * 4}, {K}] gv, int64[{N * 4}, {K}] gi"
    )
    lines = {
        "l": "l = MatMul(x, w)",
        "lv": "lv, li = TopK<axis=-1>(l, kk)",
        "j": "j = Add(li, off)",
        "gv": "gv = com.microsoft.AllGather<axis=0>(lv)",
        "gi": "gi = com.microsoft.AllGather<axis=0>(j)",
        "sv": "sv = Reshape(gv, stack)",
        "si": "si = Reshape(gi, stack)",
        "tv": "tv = Transpose<perm=[1, 0, 2]>(sv)",
        "ti": "ti = Transpose<perm=[1, 0, 2]>(si)",
        "mv": "mv = Reshape(tv, merged)",
        "mi": "mi = Reshape(ti, merged)",
        "top": "vals, pos = TopK<axis=-1>(mv, kk)",
        "ids": "ids = GatherElements<axis=1>(mi, pos)",
    }
    lines.update(edits)
    body = "\n  ".join(v for v in lines.values() if v)
    sig = f"g (float[4, 8] x, float[8, {CHUNK}] w) => (float[4, {K}] vals, int64[4, {K}] ids)"
    text = f"{HEADER}\n{sig} <{consts}> {{\n  {body}\n}}"
    onnx.parser.parse_model(text)
    return text


def _run_topk(write_models, edits: dict[str, str], offsets: dict[int, int] | None = None):
    ranks = [_topk_rank(r, edits, (offsets or {}).get(r)) for r in range(N)]
    return check_text_graphs(write_models, HEADER + SEQ_TOPK, ranks, infer_shapes=True)[0]


def test_topk_over_vocab_shards_verifies(write_models):
    result = _run_topk(write_models, {})
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert [o.relation for o in result.verdict_.outputs] == ["Replicate", "Replicate"]
    assert result.numeric["vals"] < 1e-6 and result.numeric["ids"] == 0


TOPK_BUGS = {
    # the ids not offset by the rank's vocab start: the values still verify, the ids do not
    "rank_offset_missing": ({"j": "j = Identity(li)"}, {}, "vocab-range"),
}


@pytest.mark.parametrize("case", sorted(TOPK_BUGS))
def test_topk_over_vocab_shards_bugs_are_flagged(write_models, case):
    edits, offsets, hint = TOPK_BUGS[case]
    result = _run_topk(write_models, edits, offsets)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("TopK", "differ")
    if hint:
        assert hint in first.hint_ids, first.hint_ids
    assert result.numeric["ids"] >= 1


def test_topk_candidates_interleaved_are_unproven(write_models):
    """Candidates laid out with the rank axis last (position j*N + w, not w*K + j) give the same
    top k unless two values tie (then a higher id may come first): no rule, and the numbers
    (random floats, no ties) agree: unproven, not verified."""
    edits = {"tv": "tv = Transpose<perm=[1, 2, 0]>(sv)", "ti": "ti = Transpose<perm=[1, 2, 0]>(si)"}
    result = _run_topk(write_models, edits)
    assert result.verdict == "unproven"
    assert result.numeric["ids"] == 0
