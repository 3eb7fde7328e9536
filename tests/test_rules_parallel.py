"""Rules for parallel forms beyond column/row-parallel linears, on small hand-written graphs
(ONNX text), every derived relation confirmed on numbers: vocab-parallel lookups, sequence-
parallel slices, strided shards through reshapes, reduction-aware all-reduce."""

from __future__ import annotations

import onnx
import pytest
from conftest import model_from_text

from analyzer import check
from analyzer.witness import confirm_relations

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'


def _run(write_models, seq: str, ranks: list[str]):
    models = {"seq": model_from_text(HEADER + seq)}
    for r, text in enumerate(ranks):
        models[f"rank{r}"] = onnx.parser.parse_model(HEADER + text)  # contrib ops: no checker
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(len(ranks))], numeric=True)
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [], refuted
    return result


SEQ_EMBED = """
embed (int64[2, 3] ids, float[8, 4] table) => (float[2, 3, 4] y) {
  y = Gather(ids_table_dummy_fix, ids)
}
""".replace("ids_table_dummy_fix", "table")


def _megatron_embed(lo: int, hi: int) -> str:
    """Megatron-LM VocabParallelEmbedding.forward (tensor_parallel/layers.py), one rank."""
    return f"""
embed (int64[2, 3] ids, float[4, 4] table) => (float[2, 3, 4] y)
    <int64 lo = {{{lo}}}, int64 hi = {{{hi}}}, int64 zero = {{0}}, float fzero = {{0.0}}, int64[1] last = {{-1}}> {{
  below = Less(ids, lo)
  above = GreaterOrEqual(ids, hi)
  mask = Or(below, above)
  shifted = Sub(ids, lo)
  local = Where(mask, zero, shifted)
  rows = Gather(table, local)
  mask3 = Unsqueeze(mask, last)
  part = Where(mask3, fzero, rows)
  y = com.microsoft.AllReduce<reduction = "sum">(part)
}}
"""


def _vllm_embed(lo: int, hi: int) -> str:
    """vLLM get_masked_input_and_mask (vocab_parallel_embedding.py), one rank, no added vocab."""
    return f"""
embed (int64[2, 3] ids, float[4, 4] table) => (float[2, 3, 4] y)
    <int64 lo = {{{lo}}}, int64 hi = {{{hi}}}, int64 end = {{8}}, float fzero = {{0.0}}, int64[1] last = {{-1}}> {{
  ge = GreaterOrEqual(ids, lo)
  lt = Less(ids, hi)
  org = And(ge, lt)
  ge2 = GreaterOrEqual(ids, end)
  lt2 = Less(ids, end)
  added = And(ge2, lt2)
  org_i = Cast<to = 7>(org)
  added_i = Cast<to = 7>(added)
  off_org = Mul(org_i, lo)
  off_added = Mul(added_i, end)
  off = Add(off_org, off_added)
  valid = Or(org, added)
  valid_i = Cast<to = 7>(valid)
  shifted = Sub(ids, off)
  local = Mul(valid_i, shifted)
  invalid = Not(valid)
  rows = Gather(table, local)
  mask3 = Unsqueeze(invalid, last)
  part = Where(mask3, fzero, rows)
  y = com.microsoft.AllReduce<reduction = "sum">(part)
}}
"""


@pytest.mark.parametrize("rank_text", [_megatron_embed, _vllm_embed], ids=["megatron", "vllm"])
def test_vocab_parallel_embedding_is_verified(write_models, rank_text):
    result = _run(write_models, SEQ_EMBED, [rank_text(0, 4), rank_text(4, 8)])
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Replicate"
    assert result.numeric["y"] < 1e-5


@pytest.mark.parametrize("rank_text", [_megatron_embed, _vllm_embed], ids=["megatron", "vllm"])
def test_vocab_parallel_embedding_with_a_wrong_offset_is_flagged(write_models, rank_text):
    result = _run(write_models, SEQ_EMBED, [rank_text(0, 4), rank_text(3, 7)])
    assert result.verdict == "discrepancy"
    assert result.numeric["y"] > 1e-3


SEQ_SP = """
sp (float[4, 3] x) => (float[4, 3] y) {
  y = Relu(x)
}
"""


def _rank_sp(start: int, length: int = 2) -> str:
    return f"""
sp (float[4, 3] x) => (float[2, 3] y)
    <int64[1] st = {{{start}}}, int64[1] en = {{{start + length}}}, int64[1] ax = {{0}}> {{
  xs = Slice(x, st, en, ax)
  y = Relu(xs)
}}
"""


def test_sequence_parallel_slice_is_a_shard(write_models):
    result = _run(write_models, SEQ_SP, [_rank_sp(0), _rank_sp(2)])
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(0)"


def test_sequence_parallel_slice_at_the_wrong_offset_is_flagged(write_models):
    result = _run(write_models, SEQ_SP, [_rank_sp(0), _rank_sp(1)])
    assert result.verdict == "discrepancy"


def _heads(h: int, bad_view: bool = False) -> str:
    """Megatron's attention view: [B, heads, d] -> [B * heads, d] -> batched op -> view back."""
    back = f"[{h}, 2, 3]" if bad_view else f"[2, {h}, 3]"
    return f"""
heads (float[2, {h}, 3] x, float[1, 3] s) => (float{back} y)
    <int64[2] flat = {{{2 * h}, 3}}, int64[3] unflat = {{{back[1:-1]}}}> {{
  f = Reshape(x, flat)
  g = Mul(f, s)
  y = Reshape(g, unflat)
}}
"""


def test_heads_through_a_merged_batch_axis_come_back_sharded(write_models):
    rank = _heads(2)
    result = _run(write_models, _heads(4), [rank, rank])
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"


def test_a_view_back_that_lands_the_shard_elsewhere_is_flagged(write_models):
    rank = _heads(2, bad_view=True)
    result = _run(write_models, _heads(4, bad_view=True), [rank, rank])
    assert result.verdict == "discrepancy"


SEQ_MAX = """
mx (float[4, 8] x) => (float[4] y) <int64[1] axes = {1}> {
  y = ReduceMax<keepdims = 0>(x, axes)
}
"""


def _rank_max(reduction: str) -> str:
    return f"""
mx (float[4, 4] x) => (float[4] y) <int64[1] axes = {{1}}> {{
  m = ReduceMax<keepdims = 0>(x, axes)
  y = com.microsoft.AllReduce<reduction = "{reduction}">(m)
}}
"""


def test_max_allreduce_of_a_partial_max_is_replicate(write_models):
    result = _run(write_models, SEQ_MAX, [_rank_max("max"), _rank_max("max")])
    assert result.verdict == "verified"


def test_sum_allreduce_of_a_partial_max_is_flagged(write_models):
    result = _run(write_models, SEQ_MAX, [_rank_max("sum"), _rank_max("sum")])
    assert result.verdict == "discrepancy"
    assert result.numeric["y"] > 1e-3
