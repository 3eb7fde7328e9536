"""Sound pieces (issue 16 item 5): a Partial(sum) relation holds only when every rank's piece
comes from one decomposition of the value. The rules prove each decomposition of ``y = x @ W``
alone (each rank a contraction chunk: row-parallel; each rank the replicated product divided
by N: DTensor's replicate -> partial) but not a program whose ranks mix them: rank 0 all-reduces
``y / 2`` and rank 1 its chunk ``x[:, 4:] @ W[4:]``, whose sum is not ``y`` (the numbers show it).
"""

from __future__ import annotations

import onnx.parser
import pytest
from conftest import check_text_graphs

HEADER = '<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>\n'
SEQ = HEADER + """
seq (float[4, 8] x, float[8, 6] W) => (float[4, 6] y) {
    y = MatMul(x, W)
}
"""
_CHUNK = """
    lo = Constant<value = int64[1] {{{lo}}}>()
    hi = Constant<value = int64[1] {{{hi}}}>()
    a1 = Constant<value = int64[1] {{1}}>()
    a0 = Constant<value = int64[1] {{0}}>()
    xs = Slice(x, lo, hi, a1)
    ws = Slice(W, lo, hi, a0)
    p = MatMul(xs, ws)
"""
_HALF = """
    full = MatMul(x, W)
    two = Constant<value = float {2.0}>()
    p = Div(full, two)
"""


def _rank(r: int, body: str) -> str:
    return HEADER + f"rank{r} (float[4, 8] x, float[8, 6] W) => (float[4, 6] y) {{\n{body}\n" + (
        '    y = com.microsoft.AllReduce(p)\n}\n'
    )


def _chunk(r: int) -> str:
    return _CHUNK.format(lo=4 * r, hi=4 * r + 4)


def test_each_decomposition_alone_verifies(write_models):
    for bodies in ([_chunk(0), _chunk(1)], [_HALF, _HALF]):
        result, checked, _, _ = check_text_graphs(write_models, SEQ, [_rank(r, b) for r, b in enumerate(bodies)])
        assert result.verdict == "verified", result.verdict_.discrepancies
        assert result.numeric["y"] < 1e-4


# rank 1 also computing the full product (so that y is Replicate on every rank, which the halving
# rule needs) still gives no Partial: a seq node pairs with one node per rank
_FULL_AND_CHUNK = "    unused = MatMul(x, W)\n" + _chunk(1)


@pytest.mark.parametrize(
    "bodies",
    [[_HALF, _chunk(1)], [_chunk(0), _HALF], [_HALF, _FULL_AND_CHUNK]],
    ids=["half-then-chunk", "chunk-then-half", "half-then-full-and-chunk"],
)
@pytest.mark.parametrize("triage", [False, True], ids=["rules", "rules+triage"])
def test_pieces_of_two_decompositions_do_not_make_a_partial(write_models, bodies, triage):
    result, _, _, _ = check_text_graphs(
        write_models, SEQ, [_rank(r, b) for r, b in enumerate(bodies)], triage=triage
    )
    assert result.verdict == "discrepancy"
    assert result.verdict_.outputs[0].relation is None
    assert result.numeric["y"] > 0.1  # the ranks' sum is not y


# A replicated term added on rank 0 only (rules/parallel/one_rank_term.dl): y = x @ W + b, rank 0
# adds b to its summand of x @ W, the others keep theirs. The summands must be the outputs of
# the nodes paired with the product (one decomposition). Here every rank also all-reduces its
# contraction chunk and halves the result (another Partial(sum) of x @ W, by the division rule);
# rank 0 adds b to that half while rank 1 keeps its chunk: the sum is (x @ W)/2 + b + rank 1's
# chunk, not x @ W + b.
SEQ_BIAS = HEADER + """
seq (float[4, 8] x, float[8, 6] W, float[6] b) => (float[4, 6] y) {
    p = MatMul(x, W)
    y = Add(p, b)
}
"""
_REDUCED_HALF = """
    g = com.microsoft.AllReduce(p)
    h = Div(g, two)
"""


def _bias_rank(r: int, body: str) -> str:
    head = f"rank{r} (float[4, 8] x, float[8, 6] W, float[6] b) => (float[4, 6] y)"
    head += " <float two = {2.0}, float[4, 6] g, float[4, 6] h>"
    return HEADER + head + f" {{\n{body}\n}}\n"


def test_a_term_on_rank_zero_alone_verifies(write_models):
    ranks = [
        _bias_rank(0, _chunk(0) + "    t = Add(p, b)\n    y = com.microsoft.AllReduce(t)"),
        _bias_rank(1, _chunk(1) + "    y = com.microsoft.AllReduce(p)"),
    ]
    result, _, _, _ = check_text_graphs(write_models, SEQ_BIAS, ranks, infer_shapes=True)
    assert result.verdict == "verified", result.verdict_.discrepancies
    assert result.numeric["y"] < 1e-4


def test_a_term_on_rank_zero_does_not_mix_decompositions(write_models):
    """The halves h are an even split of x @ W (Partial(sum, even), collectives/scaled_replicate.dl)
    beside its chunks p (Partial(sum)): two decompositions of one value, two relations, so that
    no rule (nor the witness, which swaps one rank's piece for another of the same relation)
    mixes them. What one_rank_term.dl adds must not mix them either: no relation of y, and no
    derived relation refuted."""
    from analyzer import check
    from analyzer.witness.check import confirm_relations

    ranks = [
        _bias_rank(0, _chunk(0) + _REDUCED_HALF + "    t = Add(h, b)\n    y = com.microsoft.AllReduce(t)"),
        _bias_rank(1, _chunk(1) + _REDUCED_HALF + "    y = com.microsoft.AllReduce(p)"),
    ]
    models = {"seq": onnx.parser.parse_model(SEQ_BIAS)}
    models.update({f"rank{r}": onnx.parser.parse_model(text) for r, text in enumerate(ranks)})
    paths = write_models(models)
    result = check(paths["seq"], [paths["rank0"], paths["rank1"]], numeric=True)
    assert result.verdict == "discrepancy"
    assert result.verdict_.outputs[0].relation is None
    assert result.numeric["y"] > 0.1
    _, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == []
    holds = set(result.derivation.derived["Holds"])
    assert {("p", "Partial", -1, "sum"), ("p", "Partial", -1, "sum:even")} <= holds


def _reduce_rank(r: int, reduced: str) -> str:
    """Rank r: its chunk p, the halves h = AllReduce(p) / 2 (two decompositions of x @ W), and y
    the all-reduce of ``reduced`` (p or h)."""
    head = f"rank{r} (float[4, 8] x, float[8, 6] W) => (float[4, 6] y)"
    head += " <float two = {2.0}, float[4, 6] g, float[4, 6] h>"
    return HEADER + head + " {\n" + _chunk(r) + _REDUCED_HALF + f"    y = com.microsoft.AllReduce({reduced})\n}}\n"


@pytest.mark.parametrize(
    "reduced", [("h", "p"), ("p", "h"), ("p", "p"), ("h", "h")], ids=["half-chunk", "chunk-half", "chunks", "halves"]
)
def test_an_all_reduce_of_pieces_of_two_decompositions_is_no_replicate(write_models, reduced):
    """Both decompositions of x @ W on every rank; the final all-reduce reads one of them per
    rank. The halves are an even split (Partial(sum, even)), the chunks a Partial(sum): the
    all-reduce of the same one on every rank is y, of a half on one rank and a chunk on the other
    is not (the rules gave it Replicate when both were Partial(sum))."""
    ranks = [_reduce_rank(r, name) for r, name in enumerate(reduced)]
    result, _, _, _ = check_text_graphs(write_models, SEQ, ranks, infer_shapes=True)
    if reduced[0] == reduced[1]:
        assert result.verdict == "verified", result.verdict_.discrepancies
        assert result.numeric["y"] < 1e-4
    else:
        assert result.verdict == "discrepancy"
        assert result.verdict_.outputs[0].relation is None
        assert result.numeric["y"] > 0.1
