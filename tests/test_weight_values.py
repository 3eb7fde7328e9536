"""Weights compared by value wherever both sides store them (issue 22, item 1): every relation,
``Replicate`` included and whatever the size, is checked against the stored arrays; a weight
whose values refute it has no relation and its reader is reported with a hint naming the
weight, the rank and what the rank holds instead.

Hand graphs ``y_i = x @ W_i`` at 4096 (64 x 64) and 4160 (64 x 65) elements, the sizes on
either side of the old limit below which constants were compared, and real exports
(``examples/llama_dp2_sgd``, a data-parallel training step where every weight is replicated;
``examples/llama_tp2``) with one initializer edited in a copy under ``tmp_path``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import EXAMPLES
from onnx import helper, numpy_helper

from analyzer import check

# --- mutations of one array ------------------------------------------------------------------------


def _negate(w: np.ndarray, other: np.ndarray) -> np.ndarray:
    return -w


def _permute_rows(w: np.ndarray, other: np.ndarray) -> np.ndarray:
    return w[np.random.default_rng(7).permutation(w.shape[0])]


def _swap(w: np.ndarray, other: np.ndarray) -> np.ndarray:
    return other


MUTATIONS = {"negated": _negate, "rows permuted": _permute_rows, "swapped": _swap}


# --- the hand graph ------------------------------------------------------------------------------


def _two_linears(weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    """``y1 = x @ W1``, ``y2 = z @ W2`` with x, z ``[4, 64]`` (two inputs: a seq MatMul pairs
    with the rank MatMul that reads the same input, so swapped weights change the outputs)."""
    cols = weights["W1"].shape[1]
    ins = [helper.make_tensor_value_info(v, onnx.TensorProto.FLOAT, [4, 64]) for v in ("x", "z")]
    outs = [helper.make_tensor_value_info(f"y{i}", onnx.TensorProto.FLOAT, [4, cols]) for i in (1, 2)]
    nodes = [helper.make_node("MatMul", [v, f"W{i}"], [f"y{i}"], name=f"mm{i}") for i, v in ((1, "x"), (2, "z"))]
    inits = [numpy_helper.from_array(weights[k], k) for k in ("W1", "W2")]
    graph = helper.make_graph(nodes, "linears", ins, outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _hand_case(write_models, cols: int, where: str, mutate) -> tuple:
    rng = np.random.default_rng(cols)
    w = {k: rng.standard_normal((64, cols)).astype(np.float32) for k in ("W1", "W2")}
    bad = {**w, "W1": mutate(w["W1"], w["W2"]), "W2": mutate(w["W2"], w["W1"]) if mutate is _swap else w["W2"]}
    seq = bad if where == "seq" else w
    ranks = [bad if where == "every rank" or (where == "one rank" and r == 1) else w for r in range(2)]
    paths = write_models({"seq": _two_linears(seq), **{f"rank{r}": _two_linears(m) for r, m in enumerate(ranks)}})
    return paths["seq"], [paths["rank0"], paths["rank1"]]


EXPECTED_HINT = {
    # where the change is -> (hint id when the rank holds nothing known, the rank named)
    "seq": ("seq-weight-differs", "on every rank"),
    "every rank": ("seq-weight-differs", "on every rank"),
    "one rank": ("weight-replica-differs", "on rank 1"),
}


@pytest.mark.parametrize("cols", [64, 65], ids=["4096", "4160"])
@pytest.mark.parametrize("where", ["seq", "every rank", "one rank"])
@pytest.mark.parametrize("kind", list(MUTATIONS))
def test_replicated_weight_changed_is_flagged_with_weight_and_rank(write_models, cols, where, kind):
    seq, ranks = _hand_case(write_models, cols, where, MUTATIONS[kind])
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    # W1 (and W2 when swapped) refuted: no relation
    assert {r.seq_value for r in result.inputs.relations} == ({"x", "z"} if kind == "swapped" else {"x", "z", "W2"})
    first = result.verdict_.discrepancies[0]
    assert first.node == "mm1" and first.op_type == "MatMul"
    hint = next(h for h in first.hints if "W1" in h)
    if kind == "swapped":
        assert first.hint_ids == ["weight-holds-other-weight"]
        rank = "on every rank" if where != "one rank" else "on rank 1"
        assert f"W1 {rank} holds the values of W2" in hint
    else:
        want, rank = EXPECTED_HINT[where]
        assert first.hint_ids == [want]
        assert f"W1 {rank}" in hint or f"W1 differs from the sequential weight {rank}" in hint
    assert any(note.startswith("W1: its values refute Replicate") for note in result.inputs.notes)


def test_unchanged_hand_graph_verifies_with_values_as_evidence(write_models):
    seq, ranks = _hand_case(write_models, 65, "seq", lambda w, other: w)
    result = check(seq, ranks, numeric=True)
    assert result.verdict == "verified" and max(result.numeric.values()) < 1e-5
    evidence = {r.seq_value: r.evidence for r in result.inputs.relations}
    assert evidence == {"x": "", "z": "", "W1": "values equal on every rank", "W2": "values equal on every rank"}


def test_weight_free_export_stays_shape_only(write_models):
    """Weights stored outside the file (not loaded) are not compared: their relation is the shapes'."""
    model = _two_linears({k: np.ones((64, 65), np.float32) for k in ("W1", "W2")})
    for init in model.graph.initializer:
        init.ClearField("raw_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        init.external_data.add(key="location", value="weights.bin")
    paths = write_models({"seq": model, "rank0": model, "rank1": model})
    result = check(paths["seq"], [paths["rank0"], paths["rank1"]])
    assert result.verdict == "verified"
    assert all(r.evidence == "" for r in result.inputs.relations) and len(result.inputs.relations) == 4


# --- real exports, one initializer edited -----------------------------------------------------------


def _copy_case(case: str, tmp_path: Path) -> tuple[Path, list[Path]]:
    folder = tmp_path / case
    shutil.copytree(EXAMPLES / case, folder)
    ranks = sorted(folder.glob("rank*.onnx"))
    return folder / "seq.onnx", ranks


def _edit(path: Path, name: str, mutate) -> None:
    """Replace initializer ``name`` of the model at ``path`` by ``mutate(array, twin)``; for a
    swap (``mutate`` is :func:`_swap`) the twin (``up_proj`` for ``gate_proj``) gets ``name``'s."""
    model = onnx.load(str(path))
    arrays = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    twin = name.replace("gate_proj", "up_proj")
    new = {name: mutate(arrays[name], arrays.get(twin))}
    if mutate is _swap:
        new[twin] = arrays[name]
    for init in model.graph.initializer:
        if init.name in new:
            init.CopyFrom(numpy_helper.from_array(new[init.name], init.name))
    onnx.save(model, str(path))


DP_WEIGHTS = {
    "model.layers.0.self_attn.q_proj.weight": 4096,  # 64 x 64, replicated on both data-parallel ranks
    "model.layers.1.mlp.gate_proj.weight": 8192,  # 128 x 64
}


@pytest.mark.parametrize(
    ("name", "where", "kind", "hint"),
    [
        ("model.layers.0.self_attn.q_proj.weight", "seq", "negated", "seq-weight-differs"),
        ("model.layers.0.self_attn.q_proj.weight", "one rank", "rows permuted", "weight-replica-differs"),
        ("model.layers.1.mlp.gate_proj.weight", "every rank", "rows permuted", "seq-weight-differs"),
        ("model.layers.1.mlp.gate_proj.weight", "seq", "swapped", "weight-holds-other-weight"),
        ("model.layers.1.mlp.gate_proj.weight", "one rank", "negated", "weight-replica-differs"),
    ],
)
def test_data_parallel_step_weight_changed_is_flagged(tmp_path, name, where, kind, hint):
    seq, ranks = _copy_case("llama_dp2_sgd", tmp_path)
    sizes = {i.name: int(np.prod(i.dims)) for i in onnx.load(str(seq)).graph.initializer}
    assert sizes[name] == DP_WEIGHTS[name]
    targets = {"seq": [seq], "every rank": ranks, "one rank": ranks[1:]}[where]
    for path in targets:
        _edit(path, name, MUTATIONS[kind])
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert name not in {r.seq_value for r in result.inputs.relations}
    flagged = [d for d in result.verdict_.discrepancies if hint in d.hint_ids]
    assert flagged, [(d.node, d.hint_ids) for d in result.verdict_.discrepancies[:5]]
    text = " ".join(h for d in flagged for h in d.hints)
    assert name in text
    rank = "on rank 1" if where == "one rank" else "on every rank"
    assert rank in text
    if kind == "swapped":
        assert "holds the values of model.layers.1.mlp.up_proj.weight" in text


def test_data_parallel_step_unchanged_verifies_with_every_weight_checked(tmp_path):
    seq, ranks = _copy_case("llama_dp2_sgd", tmp_path)
    result = check(seq, ranks)
    assert result.verdict == "verified"
    checked = {r.seq_value for r in result.inputs.relations if r.evidence == "values equal on every rank"}
    assert set(DP_WEIGHTS) <= checked


def test_context_parallel_replicated_embedding_changed_on_one_rank(tmp_path):
    """``llama_cp2`` (context parallel: every weight replicated): the embedding (128 x 64)
    negated on rank 0 only."""
    seq, ranks = _copy_case("llama_cp2", tmp_path)
    name = "model.embed_tokens.weight"
    before = {r.seq_value: r.layout for r in check(seq, ranks).inputs.relations}
    assert str(before[name]) == "Replicate"
    _edit(ranks[0], name, _negate)
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "Gather" and "weight-replica-differs" in first.hint_ids
    assert f"{name} on rank 0 differs from the sequential weight" in " ".join(first.hints)


def _swap_layers(path: Path, a: str, b: str) -> None:
    """Swap initializers ``a`` and ``b`` (same shape) of the model at ``path``."""
    model = onnx.load(str(path))
    arrays = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for init in model.graph.initializer:
        if init.name in (a, b):
            init.CopyFrom(numpy_helper.from_array(arrays[b if init.name == a else a], init.name))
    onnx.save(model, str(path))


def test_sharded_weight_changed_in_the_sequential_file_or_swapped_with_another_layers(tmp_path):
    """``llama_tp2`` (column-parallel q_proj, Shard(0)): q_proj negated in the sequential file ->
    seq-weight-differs; layers 0 and 1 of q_proj swapped on rank 1 -> weight-holds-other-weight
    naming the other layer's weight."""
    name, other = "model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.q_proj.weight"
    seq, ranks = _copy_case("llama_tp2", tmp_path / "a")
    _edit(seq, name, _negate)
    result = check(seq, ranks)
    first = result.verdict_.discrepancies[0]
    assert result.verdict == "discrepancy" and first.hint_ids == ["seq-weight-differs"]
    assert f"{name} differs from the sequential weight on every rank" in first.hints[0]
    seq, ranks = _copy_case("llama_tp2", tmp_path / "b")
    _swap_layers(ranks[1], name, other)
    result = check(seq, ranks)
    first = result.verdict_.discrepancies[0]
    assert result.verdict == "discrepancy" and first.hint_ids == ["weight-holds-other-weight"]
    assert f"{name} on rank 1 holds the values of {other}" in first.hints[0]
    assert any(
        note.startswith(f"{name}: its values refute Shard(0) (rank 1 holds the values of {other})")
        for note in result.inputs.notes
    )
