"""Kv heads replicated over groups of ranks (``Shard(axis, replicas=k)``, vLLM/Megatron-LM GQA
with fewer kv heads than ranks) and weights checked by value: the layout, its numeric meaning,
its inference and spec form, the reshape oracles, HF's repeat_kv on a small hand-written graph
(every derived relation confirmed on numbers), and misplaced weight chunks."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import model_from_text
from onnx import helper, numpy_helper

from analyzer import check
from analyzer.errors import InputError
from analyzer.facts import FactTables
from analyzer.inputs.infer import load_spec
from analyzer.layout import Layout
from analyzer.solve.oracles import replica_reshape_maps, replica_shard_shapes
from analyzer.witness.check import confirm_relations
from analyzer.witness.layouts import distribute, rebuild, relation_error

HEADER = '<ir_version: 8, opset_import: ["" : 18]>'


# --- the layout ---------------------------------------------------------------------------------


def test_param_text_round_trips_and_bad_combinations_are_refused():
    rep = Layout("Shard", axis=0, replicas=2)
    inner = Layout("Shard", axis=1, replicas=2, inner=2)
    assert (rep.param, inner.param) == ("rep2", "rep2/2")
    assert Layout.from_row("Shard", 0, "rep2") == rep and Layout.from_row("Shard", 1, "rep2/2") == inner
    assert str(rep) == "Shard(0, replicas=2)" and str(inner) == "Shard(1, replicas=2, inner=2)"
    assert Layout.from_row("Shard", 0, "8,4,4").sections == (8, 4, 4)
    with pytest.raises(ValueError):
        Layout("Shard", axis=0, sections=(4, 4), replicas=2)
    with pytest.raises(ValueError):
        Layout("Shard", axis=0, inner=1)
    with pytest.raises(ValueError):
        Layout("Shard", axis=0, replicas=2, inner=0)


def test_replica_pieces_rebuild_from_every_member_of_a_group():
    value = np.arange(2 * 8 * 3, dtype=np.float32).reshape(2, 8, 3)
    lay = Layout("Shard", axis=1, replicas=2)
    pieces = distribute(lay, value, 4)
    # ranks 0, 1 hold heads 0..3; ranks 2, 3 hold heads 4..7
    assert np.array_equal(pieces[1], value[:, :4]) and np.array_equal(pieces[2], value[:, 4:])
    assert np.array_equal(rebuild(lay, pieces), value)
    assert relation_error(lay, value, pieces) == 0.0
    # rank r holding chunk r % 2 (the misassignment): ranks 1 and 2 swapped
    swapped = [pieces[0], pieces[2], pieces[1], pieces[3]]
    assert relation_error(lay, value, swapped) == 12.0
    # rank 1 alone wrong: rebuilding from ranks 0, 2 would not see it, from 1, 3 does
    assert relation_error(lay, value, [pieces[0], pieces[0] + 1, pieces[2], pieces[3]]) == 1.0


def test_inner_split_is_a_plain_shard_of_the_merged_axes():
    value = np.arange(2 * 4 * 3, dtype=np.float32).reshape(1, 2, 4, 3)
    lay = Layout("Shard", axis=1, replicas=2, inner=2)
    pieces = distribute(lay, value, 4)
    assert [p.shape for p in pieces] == [(1, 1, 2, 3)] * 4
    assert np.array_equal(rebuild(lay, pieces), value)
    merged = [p.reshape(1, 2, 3) for p in pieces]
    assert np.array_equal(rebuild(Layout("Shard", axis=1), merged), value.reshape(1, 8, 3))


# --- inference, spec and oracles --------------------------------------------------------------


def _graph(name: str, w_shape: list[int], out_shape: list[int], body: str, w: str = "w") -> str:
    dims = ", ".join(map(str, w_shape))
    out = ", ".join(map(str, out_shape))
    return f"{HEADER}\n{name} (float[1, 6, 4] x, float[{dims}] {w}) => (float[{out}] y) {{\n{body}\n}}"


def test_spec_takes_replicas_and_refuses_what_does_not_fit(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("relations:\n  w: {shard: 0, replicas: 2}\n")
    assert load_spec(spec).relations["w"][0] == Layout("Shard", axis=0, replicas=2)
    for bad in ("{shard: 0, replicas: 1}", "{shard: 0, replicas: true}", "{shard: 0, replicas: 2, sections: [4, 4]}"):
        spec.write_text(f"relations:\n  w: {bad}\n")
        with pytest.raises(InputError, match="replicas"):
            load_spec(spec)


def _input_relation(facts: FactTables, layout: Layout) -> None:
    """Rank 0's input piece of seq weight w under ``layout``, with the typed fields of its param
    (as analyzer/solve/check_facts.py writes them)."""
    facts.add("InputPiece", s="w", r=0, d="w", kind=layout.kind, axis=layout.axis, param=layout.param)
    for name, row in layout.param_facts():
        facts.add(name, **row)


def test_reshape_oracles_map_replicated_groups_and_merge_the_inner_split():
    facts = FactTables()
    _input_relation(facts, Layout("Shard", axis=0, replicas=2))
    for value, shape in {"k": "1,6,8", "k4": "1,6,2,4", "ke": "1,2,4,6,4", "kr": "1,8,6,4"}.items():
        facts.add("Value_Shape", g="seq", value=value, shape=shape)
    for node, src, dst in (("view", "k", "k4"), ("merge", "ke", "kr")):
        facts.add("Node_Input", g="seq", node=node, pos=0, value=src)
        facts.add("Node_Output", g="seq", node=node, pos=0, value=dst)
    maps = {(r["n"], r["in_axis"], r["in_param"], r["out_axis"], r["out_param"])
            for r in replica_reshape_maps(facts, 4).rows("ReshapeStridedMap")}
    assert ("view", 2, "rep2", 2, "rep2") in maps
    assert ("merge", 1, "rep2/2", 1, "") in maps
    # a group holding its kv head with all 4 repeats holds 4 of the 8 heads: still replicated groups
    assert ("merge", 1, "rep2", 1, "rep2") in maps
    assert not any(m[0] == "view" and m[2] == "rep2/2" for m in maps)
    rows = replica_shard_shapes(facts, 4).rows("ParamShardShape")
    shapes = {(r["s"], r["axis"], r["param"]): r["shape"] for r in rows}
    assert shapes[("ke", 1, "rep2/2")] == "1,1,2,6,4"
    assert shapes[("k", 2, "rep2")] == "1,6,4"
    assert not replica_reshape_maps(FactTables(), 4).rows("ReshapeStridedMap")  # no replicas, no rows


# --- HF repeat_kv on the ranks (the transformers code path, hand-written) ------------------------

# sequential: 2 kv heads of size 4, repeated 4 times (8 query heads); rank: its one kv head, repeated 2 times
_REPEAT_KV = """
  wt = Transpose<perm = [1, 0]>(w)
  k = MatMul(x, wt)
  k4 = Reshape(k, shape4)
  kt = Transpose<perm = [0, 2, 1, 3]>(k4)
  ku = Unsqueeze(kt, two)
  ke = Expand(ku, shape5)
  y = Reshape(ke, shape_out)
"""


def _repeat_kv(heads: int, kv: int, n_rep: int) -> str:
    return (
        _REPEAT_KV.replace("shape4", "s4")
        .replace("shape5", "s5")
        .replace("shape_out", "so")
        .replace(
            "  wt =",
            f"  s4 = Constant<value = int64[4] {{1, 6, {kv}, 4}}>()\n"
            f"  two = Constant<value = int64[1] {{2}}>()\n"
            f"  s5 = Constant<value = int64[5] {{1, {kv}, {n_rep}, 6, 4}}>()\n"
            f"  so = Constant<value = int64[4] {{1, {heads}, 6, 4}}>()\n  wt =",
            1,
        )
    )


def _check(write_models, seq: str, ranks: list[str]):
    models = {"seq": model_from_text(seq), **{f"rank{r}": model_from_text(t) for r, t in enumerate(ranks)}}
    paths = write_models(models)
    return check(paths["seq"], [paths[f"rank{r}"] for r in range(len(ranks))], numeric=True)


def test_repeat_kv_of_a_replicated_kv_head_is_a_plain_shard_of_the_query_heads(write_models):
    seq = _graph("seq", [8, 4], [1, 8, 6, 4], _repeat_kv(8, 2, 4))
    rank = _graph("rank", [4, 4], [1, 2, 6, 4], _repeat_kv(2, 1, 2))
    result = _check(write_models, seq, [rank] * 4)
    rels = {r.seq_value: str(r.layout) for r in result.inputs.relations}
    assert rels["w"] == "Shard(0, replicas=2)"
    assert result.verdict == "verified"
    assert result.verdict_.outputs[0].relation == "Shard(1)"
    assert result.numeric["y"] < 1e-5
    holds = {(s, k, a, p) for s, k, a, p in result.derivation.derived["Holds"]}
    assert ("k", "Shard", 2, "rep2") in holds and ("ke", "Shard", 1, "rep2/2") in holds
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [] and checked >= 7


def test_repeat_kv_with_the_sequential_repeat_count_keeps_the_groups_replicated(write_models):
    # each rank repeats its kv head n_rep = 4 times (the sequential count): the group's 4 heads
    seq = _graph("seq", [8, 4], [1, 8, 6, 4], _repeat_kv(8, 2, 4))
    rank = _graph("rank", [4, 4], [1, 4, 6, 4], _repeat_kv(4, 1, 4))
    result = _check(write_models, seq, [rank] * 4)
    assert result.verdict == "verified" and result.verdict_.outputs[0].relation == "Shard(1, replicas=2)"
    assert result.numeric["y"] < 1e-5


def test_repeat_kv_with_a_repeat_count_that_fits_no_layout_is_flagged_at_the_expand(write_models):
    seq = _graph("seq", [8, 4], [1, 8, 6, 4], _repeat_kv(8, 2, 4))
    rank = _graph("rank", [4, 4], [1, 3, 6, 4], _repeat_kv(3, 1, 3))
    result = _check(write_models, seq, [rank] * 4)
    assert result.verdict == "discrepancy"
    assert result.verdict_.discrepancies[0].op_type == "Expand"
    assert result.numeric["y"] == float("inf")


# --- weights checked by value -------------------------------------------------------------------


def _linear(name: str, w: np.ndarray) -> onnx.ModelProto:
    """y = x @ w.T with w an initializer (Linear as torch exports it)."""
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), helper.make_node("MatMul", ["x", "wt"], ["y"])],
        name,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 6, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 6, w.shape[0]])],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    ("chunk_of_rank", "hint"),
    [
        ([0, 0, 1, 1], None),  # rank r: kv head r // 2 (vLLM)
        ([0, 1, 0, 1], "kv-heads-misassigned"),  # rank r: kv head r % 2
    ],
)
def test_replicated_weight_chunks_are_checked_by_value(write_models, chunk_of_rank, hint):
    w = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    chunks = np.split(w, 2)
    models = {"seq": _linear("seq", w), **{f"rank{r}": _linear("rank", chunks[c]) for r, c in enumerate(chunk_of_rank)}}
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(4)], numeric=True)
    if hint is None:
        assert result.verdict == "verified" and result.verdict_.outputs[0].relation == "Shard(2, replicas=2)"
        assert result.numeric["y"] < 1e-5
        return
    assert result.verdict == "discrepancy" and result.numeric["y"] > 0.1
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Transpose" and hint in first.hint_ids and "no-rank-counterpart" not in first.hint_ids
    notes = result.inputs.notes
    assert any("refute Shard(0, replicas=2)" in note and "rank 1 holds chunk 1 of 2" in note for note in notes)


def test_plain_shard_weight_of_another_rank_and_a_foreign_weight_are_named(write_models):
    w = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
    chunks = np.split(w, 2)
    seq = _linear("seq", w)
    swapped = write_models({"seq": seq, "rank0": _linear("rank", chunks[1]), "rank1": _linear("rank", chunks[0])})
    result = check(swapped["seq"], [swapped["rank0"], swapped["rank1"]])
    assert result.verdict == "discrepancy"
    assert "weight-chunk-misplaced" in result.verdict_.discrepancies[0].hint_ids
    foreign = write_models({"seq": seq, "rank0": _linear("rank", chunks[0]), "rank1": _linear("rank", chunks[1] + 1)})
    result = check(foreign["seq"], [foreign["rank0"], foreign["rank1"]])
    assert result.verdict == "discrepancy"
    assert "weight-not-a-chunk" in result.verdict_.discrepancies[0].hint_ids


# --- vLLM's fused qkv_proj with replicated kv heads ----------------------------------------------


def test_fused_sections_with_replicated_sections():
    lay = Layout("Shard", axis=0, sections=(8, 4, 4), replicas=(1, 2, 2))
    assert lay.param == "8,4:rep2,4:rep2" and Layout.from_row("Shard", 0, lay.param) == lay
    value = np.arange(16, dtype=np.float32)
    pieces = distribute(lay, value, 4)
    # rank 2: q rows 4..5, kv head 1 of k (12..13 -> 10, 11) and of v (14, 15)
    assert pieces[2].tolist() == [4, 5, 10, 11, 14, 15]
    assert np.array_equal(rebuild(lay, pieces), value) and relation_error(lay, value, pieces) == 0.0
    wrong = [pieces[0], pieces[2], pieces[1], pieces[3]]
    assert relation_error(lay, value, wrong) > 1


def test_spec_takes_one_replica_count_per_section(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("relations:\n  w: {shard: 0, sections: [8, 4, 4], replicas: [1, 2, 2]}\n")
    assert load_spec(spec).relations["w"][0] == Layout("Shard", axis=0, sections=(8, 4, 4), replicas=(1, 2, 2))
    spec.write_text("relations:\n  w: {shard: 0, sections: [8, 4, 4], replicas: [1, 2]}\n")
    with pytest.raises(InputError, match="one rank count >= 1 per section"):
        load_spec(spec)


def test_section_oracles_place_replicated_sections_in_the_rank_piece():
    from analyzer.solve.oracles import section_spans

    facts = FactTables()
    _input_relation(facts, Layout("Shard", axis=0, sections=(8, 4, 4), replicas=(1, 2, 2)))
    assert facts.rows("InputPiece")[0]["param"] == "8,4:rep2,4:rep2"
    facts.add("Value_Shape", g="seq", value="y", shape="6,16")
    facts.add("Value_Shape", g="seq", value="tail", shape="6,8")
    spans = section_spans(facts, 4)
    local = {(r["start"], r["end"]): (r["local_start"], r["local_end"]) for r in spans.rows("SectionLocalSpan")}
    assert local[(8, 16)] == (2, 6) and local[(12, 16)] == (4, 6) and local[(0, 8)] == (0, 2)
    of = {r["index"]: (r["sizes"], r["span"]) for r in spans.rows("SectionOf")}
    assert of == {0: ("8,4,4", ""), 1: ("8,4,4", "rep2"), 2: ("8,4,4", "rep2")}
    text = {(r["start"], r["end"]): r["span"] for r in spans.rows("SectionSpan")}
    assert text[(8, 16)] == "4:rep2,4:rep2" and text[(12, 16)] == "rep2"
    rows = replica_shard_shapes(facts, 4).rows("ParamShardShape")
    shapes = {(r["s"], r["axis"], r["param"]): r["shape"] for r in rows}
    assert shapes[("y", 1, "8,4:rep2,4:rep2")] == "6,6" and shapes[("tail", 1, "4:rep2,4:rep2")] == "6,4"
    assert ("y", 1, "4:rep2,4:rep2") not in shapes  # only on axes of the run's total size


def _fused_qkv(name: str, q: int, kv: int) -> str:
    """vLLM Qwen2Attention.forward up to the attention kernel, with its rotary embedding replaced
    by a scaling: qkv = linear(x); q, k, v = qkv.split(...); q, k rotated in place (torch's
    slice_scatter: Concat of the new q with a Slice of the rest, then of a Slice of q, the new k
    and a Slice of v); the fused tensor split again."""
    total = q + 2 * kv
    return f"""{HEADER}
{name} (float[6, 4] x, float[{total}, 4] w) => (float[6, {q}] q2, float[6, {kv}] k2, float[6, {kv}] v2) {{
  sizes = Constant<value = int64[3] {{{q}, {kv}, {kv}}}>()
  st1 = Constant<value = int64[1] {{{q}}}>()
  en1 = Constant<value = int64[1] {{{total}}}>()
  st2 = Constant<value = int64[1] {{0}}>()
  en2 = Constant<value = int64[1] {{{q}}}>()
  st3 = Constant<value = int64[1] {{{q + kv}}}>()
  ax = Constant<value = int64[1] {{1}}>()
  two = Constant<value = float {{2.0}}>()
  wt = Transpose<perm = [1, 0]>(w)
  qkv = MatMul(x, wt)
  q, k, v = Split<axis = 1>(qkv, sizes)
  qr = Mul(q, two)
  kr = Mul(k, two)
  tail = Slice(qkv, st1, en1, ax)
  s1 = Concat<axis = 1>(qr, tail)
  head = Slice(s1, st2, en2, ax)
  rest = Slice(s1, st3, en1, ax)
  s2 = Concat<axis = 1>(head, kr, rest)
  q2, k2, v2 = Split<axis = 1>(s2, sizes)
}}"""


def test_fused_qkv_with_replicated_kv_heads_is_cut_and_glued_section_by_section(write_models, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: {shard: 0, sections: [8, 4, 4], replicas: [1, 2, 2]}\n")
    models = {"seq": model_from_text(_fused_qkv("seq", 8, 4))}
    models.update({f"rank{r}": model_from_text(_fused_qkv("rank", 2, 2)) for r in range(4)})
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(4)], relations=spec, numeric=True)
    assert result.verdict == "verified", [(d.node, d.hints) for d in result.verdict_.discrepancies]
    assert [o.relation for o in result.verdict_.outputs] == ["Shard(1)", "Shard(1, replicas=2)", "Shard(1, replicas=2)"]
    assert max(result.numeric.values()) < 1e-5
    holds = {(s, p) for s, k, a, p in result.derivation.derived["Holds"]}
    assert ("s1", "8,4:rep2,4:rep2") in holds and ("tail", "4:rep2,4:rep2") in holds
    checked, refuted = confirm_relations(result.inputs, result.derivation.derived, result.derivation.decls)
    assert refuted == [] and checked >= 15


def test_rotated_key_glued_back_in_the_value_slot_is_flagged_at_the_concat(write_models, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: {shard: 0, sections: [8, 4, 4], replicas: [1, 2, 2]}\n")
    glue = "s2 = Concat<axis = 1>(head, {}, {})"
    bad = _fused_qkv("rank", 2, 2).replace(glue.format("kr", "rest"), glue.format("rest", "kr"))
    assert bad != _fused_qkv("rank", 2, 2)
    models = {"seq": model_from_text(_fused_qkv("seq", 8, 4)), **{f"rank{r}": model_from_text(bad) for r in range(4)}}
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(4)], relations=spec, numeric=True)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Concat" and "s2" in first.outputs
    assert max(result.numeric.values()) > 0.1


def _slice_of_fused(name: str, rows: int, start: int, end: int, out: int) -> str:
    return f"""{HEADER}
{name} (float[6, 4] x, float[{rows}, 4] w) => (float[6, {out}] y) {{
  st = Constant<value = int64[1] {{{start}}}>()
  en = Constant<value = int64[1] {{{end}}}>()
  ax = Constant<value = int64[1] {{1}}>()
  wt = Transpose<perm = [1, 0]>(w)
  f = MatMul(x, wt)
  y = Slice(f, st, en, ax)
}}"""


@pytest.mark.parametrize(("local", "verdict"), [((4, 6), "verified"), ((2, 4), "discrepancy")])
def test_a_plain_section_after_replicated_ones_is_sliced_where_it_lies_in_the_piece(
    write_models, tmp_path, local, verdict
):
    # sections [4, 4, 8] with replicas [2, 2, 1] over 4 ranks: each rank's piece is 2 + 2 + 2
    # rows, so the plain section [8, 16) is at [4, 6) of a piece, not at [8 / 4, 16 / 4)
    spec = tmp_path / "spec.yaml"
    spec.write_text("relations:\n  w: {shard: 0, sections: [4, 4, 8], replicas: [2, 2, 1]}\n")
    models = {"seq": model_from_text(_slice_of_fused("seq", 16, 8, 16, 8))}
    models.update({f"rank{r}": model_from_text(_slice_of_fused("rank", 6, *local, 2)) for r in range(4)})
    paths = write_models(models)
    result = check(paths["seq"], [paths[f"rank{r}"] for r in range(4)], relations=spec, numeric=True)
    assert result.verdict == verdict
    if verdict == "verified":
        assert result.verdict_.outputs[0].relation == "Shard(1)" and result.numeric["y"] < 1e-5
    else:
        assert result.verdict_.discrepancies[0].op_type == "Slice" and result.numeric["y"] > 0.1
