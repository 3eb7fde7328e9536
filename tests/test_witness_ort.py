"""The numeric witness on onnxruntime, cut at the collectives (analyzer/witness/segments.py):
the same errors as onnx.reference on the bundled cases, a fallback where ORT cannot run a
segment, collectives that do not pair stopped alike."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import EXAMPLES
from onnx import helper, numpy_helper

import analyzer.witness.segments as segments
from analyzer import check
from analyzer.witness.check import run_witness

pytestmark = pytest.mark.skipif(not segments.available(), reason="onnxruntime is not installed")

CASES = [
    "llama_tp2",  # AllGather, AllReduce
    "llama_tp2_bug_missing_allreduce",
    "llama_tp2_sp",  # ReduceScatter, AllGather
    "mixtral_ep2",  # expert parallel
    "llama_tp2_adamw_full_state",  # a training step: gradient all-reduces
]


def _inputs(case):
    folder = EXAMPLES / case
    if not folder.is_dir():
        pytest.skip(f"examples/{case} not present")
    return check(folder / "seq.onnx", [folder / "rank0.onnx", folder / "rank1.onnx"])


def _errors(result, monkeypatch, runtime):
    monkeypatch.setenv("SHARDLOG_WITNESS_RUNTIME", runtime)
    run = run_witness(result.inputs, result.verdict_, seed=0, seeds=1, intermediates=False)
    assert not run.skipped, run.skipped
    return {name: out.error for name, out in run.outputs.items()}


@pytest.mark.parametrize("case", CASES)
def test_onnxruntime_gives_the_errors_onnx_reference_gives(case, monkeypatch):
    result = _inputs(case)
    runs = []
    real = segments._run_ort
    monkeypatch.setattr(segments, "_run_ort", lambda seg, feeds: runs.append(1) or real(seg, feeds))
    ort = _errors(result, monkeypatch, "onnxruntime")
    assert runs, "onnxruntime ran no segment"
    ref = _errors(result, monkeypatch, "reference")
    assert ort.keys() == ref.keys()
    for name in ref:
        assert (ort[name] <= 1e-3) == (ref[name] <= 1e-3), (name, ort[name], ref[name])
        if ref[name] > 1e-3:  # a bug: the same size of error
            assert ort[name] == pytest.approx(ref[name], rel=1e-3), (name, ort[name], ref[name])


def test_a_segment_onnxruntime_cannot_run_falls_back_to_onnx_reference(monkeypatch):
    result = _inputs("llama_tp2_bug_missing_allreduce")

    def refuse(seg, feeds):
        raise RuntimeError("NOT_IMPLEMENTED: no CPU kernel")

    monkeypatch.setattr(segments, "_run_ort", refuse)
    fallback = _errors(result, monkeypatch, "onnxruntime")
    assert fallback == _errors(result, monkeypatch, "reference")  # onnx.reference, segment by segment


def test_collectives_that_do_not_pair_stop_at_the_same_call(monkeypatch):
    folder = EXAMPLES / "llama_tp2_sp_bug_collective_order"
    if not folder.is_dir():
        pytest.skip("examples/llama_tp2_sp_bug_collective_order not present")
    messages = []
    for runtime in ("onnxruntime", "reference"):
        monkeypatch.setenv("SHARDLOG_WITNESS_RUNTIME", runtime)
        result = check(folder / "seq.onnx", [folder / "rank0.onnx", folder / "rank1.onnx"], numeric=True)
        assert "collective #8" in result.witness.skipped  # the witness says why it could not run
        messages.append(result.witness.skipped)
    assert messages[0] == messages[1]


def _mlp(rank: int | None, hidden: int) -> onnx.ModelProto:
    """x + AllReduce(relu(x @ w1) @ w2), the weights cut column- then row-parallel on rank r."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((hidden, 4 * hidden)).astype(np.float32) * 0.02
    w2 = rng.standard_normal((4 * hidden, hidden)).astype(np.float32) * 0.02
    if rank is not None:
        w1, w2 = np.split(w1, 2, axis=1)[rank], np.split(w2, 2, axis=0)[rank]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["z"], name="mm2"),
        helper.make_node("AllReduce", ["z"], ["s"], domain="com.microsoft", name="ar", group_size=2, reduction="sum")
        if rank is not None
        else helper.make_node("Identity", ["z"], ["s"], name="id"),
        helper.make_node("Add", ["x", "s"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, hidden])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [8, hidden])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    ops = [helper.make_opsetid("", 18)] + ([helper.make_opsetid("com.microsoft", 1)] if rank is not None else [])
    return helper.make_model(graph, opset_imports=ops)


def test_large_graphs_run_on_onnxruntime_by_default_small_ones_on_onnx_reference(monkeypatch):
    from analyzer.layout import REPLICATE
    from analyzer.witness.simulate import witness

    monkeypatch.delenv("SHARDLOG_WITNESS_RUNTIME", raising=False)
    small, large = 64, 512  # 64 * 256 * 2 weights < 2**20 <= 512 * 2048 * 2
    assert not segments.worth_it(_mlp(None, small)) and segments.worth_it(_mlp(None, large))
    real = segments._run_ort
    for hidden, expect_ort in ((small, False), (large, True)):
        runs: list[int] = []
        monkeypatch.setattr(segments, "_run_ort", lambda seg, feeds, runs=runs: runs.append(1) or real(seg, feeds))
        err = witness(
            _mlp(None, hidden), [_mlp(0, hidden), _mlp(1, hidden)], {"x": REPLICATE}, {"y": (REPLICATE, ["y", "y"])}
        )
        assert err["y"] < 1e-4
        assert bool(runs) == expect_ort
