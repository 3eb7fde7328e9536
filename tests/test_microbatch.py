"""Micro-batch gradient accumulation on small hand-written graphs (ONNX text), every derived
relation confirmed on numbers: each data-parallel rank cuts its rows into M = 2 micro-batches
(rules/parallel/microbatch.dl), runs the same computation on each, adds the micro-batch terms
and all-reduces the sum; the sequential graph runs once on the whole batch."""

from __future__ import annotations

import onnx
from conftest import check_text_graphs, model_from_text

from analyzer.layout import Layout

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'

# rows of the batch x [8, 4], token weights |m| [8] (a mask); a "gradient" g = x^T tanh(x w) and a loss
# (sum of masked row sums) / (token count)
SEQ = """
step (float[8, 4] x, float[8] m, float[4, 3] w) => (float[4, 3] out, float loss)
    <int64[1] one = {1}> {
  xw = MatMul(x, w)
  h = Tanh(xw)
  xt = Transpose<perm = [1, 0]>(x)
  g = MatMul(xt, h)
  out = Sub(w, g)
  ma = Abs(m)
  rows = ReduceSum<keepdims = 0>(h, one)
  masked = Mul(rows, ma)
  s = ReduceSum<keepdims = 0>(masked)
  cnt = ReduceSum<keepdims = 0>(ma)
  loss = Div(s, cnt)
}
"""


def _micro(k: int, count: str) -> str:
    """Micro-batch k (rows [2k, 2k+2) of the rank's 4 rows): its gradient and loss terms."""
    return f"""
  x{k} = Slice(x, st{k}, en{k}, ax)
  m{k} = Slice(ma, st{k}, en{k}, ax)
  xw{k} = MatMul(x{k}, w)
  h{k} = Tanh(xw{k})
  xt{k} = Transpose<perm = [1, 0]>(x{k})
  g{k} = MatMul(xt{k}, h{k})
  rows{k} = ReduceSum<keepdims = 0>(h{k}, one)
  masked{k} = Mul(rows{k}, m{k})
  s{k} = ReduceSum<keepdims = 0>(masked{k})
  {count}
  l{k} = Div(s{k}, {"c" + str(k) if count else "cnt"})
"""


def _rank(count: str, tail: str = "", acc: str = "ga = Add(g0, g1)") -> str:
    """One rank: the global token count (local counts all-reduced) unless each micro-batch
    counts its own (``count``), the two micro-batches, the accumulation and the all-reduces."""
    total = "" if count else 'cl = ReduceSum<keepdims = 0>(ma)\n  cnt = com.microsoft.AllReduce<reduction = "sum">(cl)'
    return f"""
step (float[4, 4] x, float[4] m, float[4, 3] w) => (float[4, 3] out, float loss)
    <int64[1] one = {{1}}, int64[1] ax = {{0}}, int64[1] st0 = {{0}}, int64[1] en0 = {{2}},
     int64[1] st1 = {{2}}, int64[1] en1 = {{4}}, float half = {{0.5}}, float cnt> {{
  ma = Abs(m)
  {total}
{_micro(0, count.format(k=0))}
{_micro(1, count.format(k=1))}
  {acc}
  gr = com.microsoft.AllReduce<reduction = "sum">(ga)
  out = Sub(w, gr)
  la = Add(l0, l1)
  {tail}
  loss = com.microsoft.AllReduce<reduction = "sum">(la)
}}
"""


def _run(write_models, ranks: list[str]):
    # shapes inferred on the ranks: the micro-batch terms are intermediates
    ranks = [HEADER + t for t in ranks]
    result, checked, _, _ = check_text_graphs(write_models, HEADER + SEQ, ranks, infer_shapes=True)
    return result, checked


def _pieces(result, s: str) -> set[tuple[int, str, str]]:
    cols = list(result.derivation.decls["Piece"].column_names)
    rows = [dict(zip(cols, row)) for row in result.derivation.derived["Piece"]]
    return {(p["r"], p["d"], str(Layout.from_row(p["kind"], p["axis"], p["param"]))) for p in rows if p["s"] == s}


# every micro-batch's term divided by the global token count (the all-reduced local counts)
CORRECT = _rank("")


def test_accumulated_microbatches_are_verified(write_models):
    result, checked = _run(write_models, [CORRECT, CORRECT])
    assert result.verdict == "verified", [d.message for d in result.verdict_.discrepancies]
    assert {o.name: o.relation for o in result.verdict_.outputs} == {"out": "Replicate", "loss": "Replicate"}
    assert max(result.numeric.values()) < 1e-4, result.numeric
    # rank r's slice k holds rows [(2r + k) * 2, ...) of the batch, its gradient term is the
    # (r, k) term of the sum, and the added terms are the rank's Partial(sum)
    for r in range(2):
        assert {(r, "x0", "Shard(0, micro=0/2)"), (r, "x1", "Shard(0, micro=1/2)")} <= _pieces(result, "x")
        assert {(r, "g0", "Partial(sum, micro=0/2)"), (r, "g1", "Partial(sum, micro=1/2)")} <= _pieces(result, "g")
        assert (r, "ga", "Partial(sum)") in _pieces(result, "g")
        assert (r, "gr", "Replicate") in _pieces(result, "g")
    assert checked > 20


def test_one_microbatch_added_twice_is_not_verified(write_models):
    wrong = _rank("", acc="ga = Add(g0, g0)")
    result, _ = _run(write_models, [wrong, wrong])
    assert result.verdict == "discrepancy"
    assert {o.name: o.relation for o in result.verdict_.outputs}["out"] is None
    assert result.numeric["out"] > 1e-2
    assert (0, "ga", "Partial(sum)") not in _pieces(result, "g")


def test_mean_of_microbatch_means_is_flagged_with_its_fix(write_models):
    # each micro-batch divided by its own token count, the two means averaged (then summed over
    # ranks, as the gradients): not the mean over the batch when the counts differ
    bug = _rank("c{k} = ReduceSum<keepdims = 0>(m{k})", tail="la = Mul(la0, half)").replace(
        "la = Add(l0, l1)", "la0 = Add(l0, l1)"
    )
    result, _ = _run(write_models, [bug, bug])
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.node == "loss" or first.op_type == "Div", (first.node, first.op_type)
    assert "micro-batch-mean" in first.hint_ids and "local-normalizer" not in first.hint_ids, first.hint_ids
    assert result.numeric["loss"] > 1e-2


def test_microbatch_layout_round_trip_and_numbers():
    import numpy as np

    from analyzer.witness.layouts import distribute, rebuild_micro, relation_error

    shard = Layout.from_row("Shard", 0, "mb2:1")
    assert shard == Layout("Shard", axis=0, micro=(2, 1)) and shard.param == "mb2:1"
    assert Layout.from_row("Partial", -1, "mb3:2") == Layout("Partial", reduce="sum", micro=(3, 2))
    s = np.arange(16.0).reshape(8, 2)
    # 2 ranks x 2 micro-batches: rank r's micro-batch k is chunk 2r + k of 4
    pieces = [[distribute(Layout("Shard", axis=0, micro=(2, k)), s, 2)[r] for k in range(2)] for r in range(2)]
    assert np.array_equal(pieces[1][0], s[4:6]) and np.array_equal(pieces[0][1], s[2:4])
    assert np.array_equal(rebuild_micro("Shard", 0, pieces), s)
    assert relation_error(shard, s, [s[2:4], s[6:8]]) == 0.0
    assert relation_error(shard, s, [s[0:2], s[4:6]]) > 1  # micro-batch 0's rows, not 1's
    terms = [[s * 0.1, s * 0.2], [s * 0.3, s * 0.4]]
    assert np.allclose(rebuild_micro("Partial", None, terms), s)
    # one micro-batch's terms alone do not determine the sum
    assert relation_error(Layout("Partial", reduce="sum", micro=(2, 0)), s, [s, s]) == float("inf")


def test_ignore_index_appears_in_random_labels():
    """An integer input compared with a constant (a loss's ignore_index) holds it sometimes, so a
    token count over it differs between rows of the random inputs."""
    import numpy as np

    from analyzer.witness.inputs import random_inputs

    model = model_from_text(HEADER + """
loss (int64[4, 8] labels) => (float[4] count) <int64[4] pads = {0, 0, 0, 1}, int64 ignore = {-100},
    int64[1] one = {1}, int64[1] big = {9}, int64[1] last = {1}> {
  padded = Pad(labels, pads, ignore)
  shifted = Slice(padded, one, big, last)
  same = Equal(shifted, ignore)
  keep = Not(same)
  f = Cast<to = 1>(keep)
  count = ReduceSum<keepdims = 0>(f, one)
}
""")
    labels = random_inputs(model, np.random.default_rng(0))["labels"]
    assert (labels == -100).any() and (labels != -100).any()
    assert len({int((row != -100).sum()) for row in labels}) > 1


def test_microbatch_counts_come_from_slices_of_rank_inputs():
    from analyzer.facts import FactTables, extract_graph_facts
    from analyzer.solve.oracles import microbatch_counts

    def rank(body: str):
        text = HEADER + f"""
g (float[4, 4] x) => (float[2, 4] y)
    <int64[1] ax = {{0}}, int64[1] st = {{2}}, int64[1] en = {{4}}> {{
  {body}
}}
"""
        facts = FactTables()
        facts.extend(extract_graph_facts(onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text)), "r0"))
        return facts

    assert microbatch_counts(rank("y = Slice(x, st, en, ax)")) == {2}
    # a slice of an intermediate (a cache, a position table) says nothing about micro-batches
    assert microbatch_counts(rank("a = Abs(x)\n  y = Slice(a, st, en, ax)")) == set()
