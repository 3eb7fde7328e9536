"""Rules for the DTensor parallel forms, on small hand-written graphs (ONNX text) shaped like
what ``torch.onnx`` exports for PyTorch's parallel styles; every derived relation is confirmed
on numbers:

* DTensor's vocab-parallel lookup (``RowwiseParallel(input_layouts=Replicate())`` on an
  embedding: ``x[mask] = 0`` exported as ``ScatterND(x, Transpose(NonZero(mask)), fill)``),
  ``rules/parallel/vocab_dtensor.dl``;
* a reduce-scatter onto axis 1 (chunk along 1, stack along 0, ``ReduceScatter`` on 0),
  ``rules/collectives/reduce_scatter_dim.dl``;
* collectives whose k-th calls differ in shape across ranks, ``rules/collectives/order_shape.dl``.
"""

from __future__ import annotations

import onnx
from conftest import check_text_graphs, model_from_text

from analyzer import check

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'


def _run(write_models, seq: str, ranks: list[str], numeric: bool = True):
    result, checked, _, _ = check_text_graphs(write_models, HEADER + seq, [HEADER + t for t in ranks], numeric=numeric)
    return result, checked


SEQ_EMBED = """
embed (int64[2, 3] ids, float[8, 4] table) => (float[2, 3, 4] y) {
  y = Gather(table, ids)
}
"""


def _dtensor_embed(lo: int, hi: int, off: int | None = None) -> str:
    """One rank of DTensor's _MaskPartial lookup (torch/distributed/tensor/_ops/_embedding_ops.py)
    as torch.onnx exports it: ids - lo (folded away when lo = 0), masked ids set to 0, the
    lookup, masked rows set to 0, all-reduce."""
    off = lo if off is None else off
    shift, local_in = ("", "ids") if off == 0 else ("local_in = Sub(ids, off)", "local_in")
    return f"""
embed (int64[2, 3] ids, float[4, 4] table) => (float[2, 3, 4] y)
    <int64 lo = {{{lo}}}, int64 hi = {{{hi}}}, int64 off = {{{off}}}, int64 zero = {{0}}, float fzero = {{0.0}},
     int64[1] flat = {{-1}}, int64[1] last = {{-1}}, int64[3] rows_shape = {{2, 3, 4}}, int64[1] width = {{4}}> {{
  lt = Less(ids, lo)
  ge = GreaterOrEqual(ids, hi)
  mask = Or(lt, ge)
  {shift}
  nz = NonZero(mask)
  idx = Transpose<perm = [1, 0]>(nz)
  mask_flat = Reshape(mask, flat)
  mask_int = Cast<to = 7>(mask_flat)
  count = ReduceSum<keepdims = 1>(mask_int)
  fill = Expand(zero, count)
  fill_flat = Reshape(fill, flat)
  local = ScatterND({local_in}, idx, fill_flat)
  rows = Gather(table, local)
  mask3 = Unsqueeze(mask, last)
  mask_rows = Expand(mask3, rows_shape)
  nz_rows = NonZero(mask_rows)
  idx_rows = Transpose<perm = [1, 0]>(nz_rows)
  fill_shape = Concat<axis = 0>(count, width)
  fill_rows = Expand(fzero, fill_shape)
  fill_rows_flat = Reshape(fill_rows, flat)
  part = ScatterND(rows, idx_rows, fill_rows_flat)
  y = com.microsoft.AllReduce<reduction = "sum">(part)
}}
"""


def test_dtensor_vocab_parallel_lookup_is_verified(write_models):
    result, checked = _run(write_models, SEQ_EMBED, [_dtensor_embed(0, 4), _dtensor_embed(4, 8)])
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Replicate"
    assert result.numeric["y"] < 1e-5
    assert checked >= 3


def test_dtensor_vocab_lookup_with_rank1_one_row_early_is_flagged_with_the_range_hint(write_models):
    result, _ = _run(write_models, SEQ_EMBED, [_dtensor_embed(0, 4), _dtensor_embed(3, 7)])
    assert result.verdict == "discrepancy"
    assert "vocab-range" in result.verdict_.discrepancies[0].hint_ids
    assert result.numeric["y"] > 1e-3


def test_dtensor_vocab_lookup_with_a_wrong_id_offset_is_flagged(write_models):
    """The range is right but the ids are shifted by another offset: no masked lookup of row chunk 1."""
    result, _ = _run(write_models, SEQ_EMBED, [_dtensor_embed(0, 4), _dtensor_embed(4, 8, off=3)])
    assert result.verdict == "discrepancy"
    # rank 1 looks up id - 3: the witness's ids at the table's end (7) index past its 4 rows; it
    # stops there and says so, the verdict standing
    assert "(Gather) failed: IndexError" in result.witness.skipped and not result.numeric, result.witness


SEQ_RS = """
rs (float[2, 4, 3] x, float[2, 4, 3] r) => (float[2, 4, 3] y) {
  y = Add(x, r)
}
"""


def _rank_rs(order: tuple[int, int] = (0, 1)) -> str:
    """Rank r holds x / 2 (Partial(sum) of x) and Shard(1) of r; torch's
    reduce_scatter_tensor(x, scatter_dim=1): chunk on 1, cat on 0, ReduceScatter on 0."""
    a, b = (f"c{order[0]}", f"c{order[1]}")
    return f"""
rs (float[2, 4, 3] x, float[2, 2, 3] r) => (float[2, 2, 3] y) <float two = {{2.0}}> {{
  half = Div(x, two)
  c0, c1 = Split<axis = 1, num_outputs = 2>(half)
  stacked = Concat<axis = 0>({a}, {b})
  part = com.microsoft.ReduceScatter<reduction = "sum", axis = 0>(stacked)
  y = Add(part, r)
}}
"""


def test_reduce_scatter_onto_axis_1_is_a_sequence_shard(write_models):
    result, checked = _run(write_models, SEQ_RS, [_rank_rs(), _rank_rs()])
    assert checked >= 4
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"
    assert result.numeric["y"] < 1e-5


def test_reduce_scatter_of_chunks_stacked_out_of_order_is_flagged(write_models):
    result, _ = _run(write_models, SEQ_RS, [_rank_rs((1, 0)), _rank_rs((1, 0))])
    assert result.verdict == "discrepancy"
    assert result.numeric["y"] > 1e-3


SEQ_AR = """
ar (float[2, 4] x) => (float[2, 4] y) {
  y = Relu(x)
}
"""


def _rank_ar(rows: int) -> str:
    """Rank-local: all-reduce x / 2, then its first `rows` rows (added as their max); `p` gets
    a value_info (no shape inference for contrib ops), so the slice's shape is known."""
    return f"""
ar (float[2, 4] x) => (float[2, 4] y) <int64[1] st = {{0}}, int64[1] en = {{{rows}}}, int64[1] ax = {{0}},
                                        float half = {{2.0}}, float[2, 4] p> {{
  h = Div(x, half)
  p = com.microsoft.AllReduce<reduction = "sum">(h)
  s = Slice(p, st, en, ax)
  t = com.microsoft.AllReduce<reduction = "sum">(s)
  m = ReduceMax<keepdims = 0>(t)
  q = Relu(p)
  y = Add(q, m)
}}
"""


def test_collectives_of_different_shapes_are_reported_with_both_calls(write_models):
    """Rank 1's second all-reduce sends one row where rank 0 sends two: the report names
    collective #1, both calls and their shapes, and the fix."""
    models = {"seq": model_from_text(HEADER + SEQ_AR)}
    models["rank0"] = onnx.parser.parse_model(HEADER + _rank_ar(2))
    models["rank1"] = onnx.parser.parse_model(HEADER + _rank_ar(1))
    paths = write_models(models)
    result = check(paths["seq"], [paths["rank0"], paths["rank1"]])
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.kind == "collective" and first.graph == "r1"
    assert "collective #1 differs" in first.message
    assert "AllReduce(float[2,4])" in first.message and "AllReduce(float[1,4])" in first.message
    assert "collective-order" in first.hint_ids
