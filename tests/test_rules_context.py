"""Context parallelism on small hand-written graphs (ONNX text) shaped like what ``torch.onnx``
exports for ``scripts/export_cp.py``: each rank holds its chunk of the sequence, and the
exporter folds the rank's rotary positions and causal-mask rows into constants. A rank constant
that equals chunk r of the seq constant is rank r's ``Shard`` piece of it (``Const_ChunkHash``,
``rules/parallel/sequence.dl``); another rank's chunk is flagged, with ``rotary-offset`` when it
feeds the rotary table (``rules/diagnose/hints_forms.dl``). Every derived relation is confirmed
on numbers.
"""

from __future__ import annotations

from conftest import model_from_text

from analyzer import check
from analyzer.witness.check import confirm_relations, output_layout_from_shapes
from analyzer.witness.simulate import witness

HEADER = '<ir_version: 8, opset_import: ["" : 18]>'


def _floats(values) -> str:
    return ", ".join(f"{float(v)}" for v in values)


def _rotary(positions: list[int]) -> str:
    """x * cos(positions * inv_freq): HF's rotary table with positions folded to a constant."""
    n = len(positions)
    return HEADER + f"""
rot (float[1, {n}, 2] x, float[2] inv) => (float[1, {n}, 2] y) <float[1, {n}, 1] pos_c = {{{_floats(positions)}}}> {{
  freqs = Mul(pos_c, inv)
  cos = Cos(freqs)
  y = Mul(x, cos)
}}
"""


# causal mask of 4 query rows over 4 keys, additive (0 / -1e9)
_MASK = [[0.0 if k <= q else -1e9 for k in range(4)] for q in range(4)]


def _masked(rows: list[list[float]]) -> str:
    n = len(rows)
    return HEADER + f"""
att (float[1, {n}, 4] s) => (float[1, {n}, 4] p) <float[1, {n}, 4] mask_c = {{{_floats(sum(rows, []))}}}> {{
  m = Add(s, mask_c)
  p = Softmax<axis = -1>(m)
}}
"""


def _check(write_models, seq: str, ranks: list[str]):
    models = {"seq": model_from_text(seq), **{f"rank{r}": model_from_text(t) for r, t in enumerate(ranks)}}
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(len(ranks))], numeric=True)
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [], refuted
    return result, checked


def _rank_chunks_error(result) -> float:
    """Max abs error of the seq output rebuilt by concatenating the ranks' outputs (the chunks
    of the sequence they return: the layout their shapes say, Shard(1))."""
    inp = result.inputs
    layout = output_layout_from_shapes(inp.seq, inp.ranks, 0)
    assert str(layout) == "Shard(1)"
    name = inp.seq.graph.output[0].name
    fed = {r.seq_value: r.layout for r in inp.relations if r.seq_value in {i.name for i in inp.seq.graph.input}}
    return witness(inp.seq, inp.ranks, fed, {name: (layout, [name] * len(inp.ranks))})[name]


def _renamed(text: str, r: int) -> str:
    """The rank's constants carry other names than the seq's (the exporter numbers them per graph)."""
    return text.replace("pos_c", f"pos_r{r}").replace("mask_c", f"mask_r{r}")


def test_rank_positions_offset_by_the_rank_chunk_are_a_sequence_shard(write_models):
    ranks = [_renamed(_rotary([0, 1]), 0), _renamed(_rotary([2, 3]), 1)]
    result, checked = _check(write_models, _rotary([0, 1, 2, 3]), ranks)
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"
    assert result.numeric["y"] < 1e-6 and _rank_chunks_error(result) < 1e-6
    assert checked >= 3


def test_rank_positions_starting_at_zero_on_every_rank_are_flagged_at_the_rotary(write_models):
    ranks = [_renamed(_rotary([0, 1]), 0), _renamed(_rotary([0, 1]), 1)]
    result, _ = _check(write_models, _rotary([0, 1, 2, 3]), ranks)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Mul" and "pos_c" in [i.name for i in first.inputs], first
    assert first.hint_ids == ["rotary-offset"]
    assert _rank_chunks_error(result) > 1e-3


def test_same_named_positions_of_another_rank_get_the_rotary_hint_not_the_weight_hint(write_models):
    """Equal names: the input relation is inferred (Shard(1)) and refuted by value (a misplaced chunk)."""
    result, _ = _check(write_models, _rotary([0, 1, 2, 3]), [_rotary([0, 1]), _rotary([0, 1])])
    assert result.verdict == "discrepancy"
    assert result.verdict_.discrepancies[0].hint_ids == ["rotary-offset"]


def test_causal_mask_rows_of_the_rank_chunk_are_a_sequence_shard(write_models):
    ranks = [_renamed(_masked(_MASK[:2]), 0), _renamed(_masked(_MASK[2:]), 1)]
    result, _ = _check(write_models, _masked(_MASK), ranks)
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"
    assert result.numeric["p"] < 1e-6


def test_causal_mask_rows_of_another_rank_are_flagged_as_a_misplaced_chunk(write_models):
    ranks = [_renamed(_masked(_MASK[:2]), 0), _renamed(_masked(_MASK[:2]), 1)]
    result, _ = _check(write_models, _masked(_MASK), ranks)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Add"
    assert first.hint_ids == ["weight-chunk-misplaced"]
    assert _rank_chunks_error(result) > 1e-3
