"""A replicated term added to a partial sum on rank 0 only, before the all-reduce
(rules/parallel/one_rank_term.dl: vLLM's RowParallelLinear adds its bias on tp rank 0 alone),
on small hand-written graphs (ONNX text): the correct form verifies, the term added on every
rank (or on none) is flagged at the Add, and every derived relation is confirmed on numbers
(conftest.check_text_graphs)."""

from __future__ import annotations

import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'

# y = x @ w + b: x [4, 8] and w [8, 16] are cut on the contraction axis (row-parallel: Shard(1)
# and Shard(0), from their shapes), the bias b [16] is replicated
SEQ = f"""{HEADER}
g (float[4, 8] x, float[8, 16] w, float[16] b) => (float[4, 16] y) {{
  p = MatMul(x, w)
  y = Add(p, b)
}}
"""


def _rank(adds: bool, world: int) -> str:
    """A rank's program: its chunk [4, 8/N] of x times its rows [8/N, 16] of w, plus the bias
    when ``adds``, all-reduced."""
    k = 8 // world
    body = "t = Add(p, b)\n  y = com.microsoft.AllReduce(t)" if adds else "y = com.microsoft.AllReduce(p)"
    return f"""{HEADER}
g (float[4, {k}] x, float[{k}, 16] w, float[16] b) => (float[4, 16] y) {{
  p = MatMul(x, w)
  {body}
}}
"""


ADDS, KEEPS = _rank(True, 2), _rank(False, 2)
ADDS4, KEEPS4 = _rank(True, 4), _rank(False, 4)

CASES = {
    # rank 0 adds the bias, the others do not (vLLM): correct, with 2 and 4 ranks
    "rank0_only": ([ADDS, KEEPS], True),
    "rank0_only_4_ranks": ([ADDS4, KEEPS4, KEEPS4, KEEPS4], True),
    # bugs: every rank adds it (counted N times); ranks 0 and 2 of 4 add it; no rank adds it
    "bug_every_rank": ([ADDS, ADDS], False),
    "bug_two_of_four": ([ADDS4, KEEPS4, ADDS4, KEEPS4], False),
    "bug_no_rank": ([KEEPS, KEEPS], False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_term_added_on_rank_zero_only(write_models, case):
    ranks, correct = CASES[case]
    result = check_text_graphs(write_models, SEQ, ranks, infer_shapes=True)[0]
    if correct:
        assert result.verdict == "verified"
        assert result.verdict_.outputs[0].relation == "Replicate"
        assert result.numeric["y"] < 1e-5
        return
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert (first.op_type, first.numbers) == ("Add", "differ")
    if case != "bug_no_rank":
        assert "bias-before-reduce" in first.hint_ids, first.hint_ids
    assert result.numeric["y"] > 1e-2
