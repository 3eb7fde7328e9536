"""Layer memoization: same verdicts and reports with it on and off; a bug in a middle layer
is reported in that layer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, ROOT, smoke_or_slow

from analyzer import check

DEEP = ROOT / "tests" / "data"
CASES = sorted(
    p
    for p in [*EXAMPLES.glob("*"), *DEEP.glob("llama6_*")]
    # pipeline cases: test_pipeline.py; XLA HLO cases: test_hlo_import.py
    if (p / "case.yaml").is_file() and not (p / "stage0.onnx").is_file() and not (p / "seq.hlo").is_file()
)


def _files(case: Path):
    n = yaml.safe_load((case / "case.yaml").read_text())["world_size"]
    return case / "seq.onnx", [case / f"rank{r}.onnx" for r in range(n)]


def _spec(case: Path) -> dict:
    """``relations=`` for a case checked with a spec (a mesh case: files.spec, docs/mesh.md)."""
    spec = yaml.safe_load((case / "case.yaml").read_text()).get("files", {}).get("spec")
    return {"relations": case / spec} if spec else {}


def _summary(result):
    v = result.verdict_
    return (
        v.verdict,
        [(o.name, o.relation, o.rank_values) for o in v.outputs],
        [(d.kind, d.node, d.scope, d.source, d.hint_ids, d.origin_scope) for d in v.discrepancies[:1]],
    )


@pytest.mark.parametrize("case", smoke_or_slow(CASES, [p.name for p in CASES]))
def test_memoization_does_not_change_the_result(case):
    seq, ranks = _files(case)
    on = check(seq, ranks, memoize=True, **_spec(case))
    off = check(seq, ranks, memoize=False, **_spec(case))
    assert _summary(on) == _summary(off)


def test_identical_layers_are_solved_once():
    seq, ranks = _files(DEEP / "llama6_tp2")
    result = check(seq, ranks)
    assert result.verdict == "verified"
    assert result.derivation.memo.startswith("layers 1..5 solved once")


def test_bug_in_a_middle_layer_is_reported_in_that_layer():
    seq, ranks = _files(DEEP / "llama6_tp2_bug_layer3")
    result = check(seq, ranks)
    assert "1..2" in result.derivation.memo and "4..5" in result.derivation.memo
    first = result.verdict_.discrepancies[0]
    assert first.scope == "model.layers.3"
    assert first.origin_scope == "model.layers.3.mlp.down_proj"


@pytest.mark.slow
def test_identical_rank_graphs_give_the_same_derivation_when_clingo_reads_their_facts_once(monkeypatch):
    from analyzer.engines.clingo_engine import ClingoEngine
    from analyzer.inputs.load import load_inputs
    from analyzer.solve.derive import derive

    case = EXAMPLES / "llama_dp2_sgd_bug_missing_grad_allreduce"
    seq, ranks = _files(case)
    inp = load_inputs(seq, ranks)
    assert inp.same_graph == [0, 1, 1]  # the two rank files hold the same graph
    once = derive(inp)
    monkeypatch.setattr(ClingoEngine, "graph_copies", False)
    every = derive(inp)
    assert once.derived == every.derived and once.facts == every.facts
    assert once.derived["Frontier"]  # the bug is found either way


def _layered_model(path: Path, layers: int, *, identity_at_end: bool) -> None:
    """x -> layers of Relu (+ Identity) named model.layers.K.* -> y (ONNX helper, unit test)."""
    from onnx import TensorProto, helper, save

    nodes, prev = [], "x"
    for k in range(layers):
        nodes.append(helper.make_node("Relu", [prev], [f"relu_{k}"], name=f"model.layers.{k}.act"))
        prev = f"relu_{k}"
        if identity_at_end:
            nodes.append(helper.make_node("Identity", [prev], [f"out_{k}"], name=f"model.layers.{k}.out"))
            prev = f"out_{k}"
    nodes.append(helper.make_node("Neg", [prev], ["y"], name="head.neg"))
    value = [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, 4]) for n in nodes[:-1] for o in n.output]
    graph = helper.make_graph(
        nodes,
        "layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        value_info=value,
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)


def test_a_boundary_value_the_canonical_rewrite_removes_makes_the_whole_graph_checked(tmp_path):
    # layers are collapsed as exported, then rewritten: an Identity ending every layer is
    # dropped, so the boundary test would compare two missing values; the check falls back
    for name, identity in (("plain", False), ("identity", True)):
        for f in ("seq", "rank0", "rank1"):
            _layered_model(tmp_path / f"{name}_{f}.onnx", 4, identity_at_end=identity)
        result = check(tmp_path / f"{name}_seq.onnx", [tmp_path / f"{name}_rank{r}.onnx" for r in range(2)])
        assert result.verdict == "verified"
        if identity:
            assert result.derivation.memo.startswith("a boundary value of the collapsed layers is rewritten away")
        else:
            assert result.derivation.memo.startswith("layers 1..3 solved once")


def _sharded_layers(path: Path, layers: int, width: int, *, odd_layer: int | None = None) -> None:
    """x [2, width] -> layers of Relu named model.layers.K.* -> y (layer ``odd_layer``: Neg)."""
    from onnx import TensorProto, helper, save

    nodes, prev = [], "x"
    for k in range(layers):
        op = "Neg" if k == odd_layer else "Relu"
        nodes.append(helper.make_node(op, [prev], [f"act_{k}"], name=f"model.layers.{k}.act"))
        prev = f"act_{k}"
    nodes.append(helper.make_node("Abs", [prev], ["y"], name="head.abs"))
    value = [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, width]) for n in nodes[:-1] for o in n.output]
    graph = helper.make_graph(
        nodes,
        "layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, width])],
        value_info=value,
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)


@pytest.mark.parametrize("odd_layer", [None, 3])
def test_the_rank_graph_collapsed_in_a_child_gives_the_same_result(tmp_path, monkeypatch, odd_layer, fork_possible):
    import sys

    import analyzer.speedups.memo as memo

    _sharded_layers(tmp_path / "seq.onnx", 6, 8)
    for r in range(2):  # identical rank files: one distinct rank graph
        _sharded_layers(tmp_path / f"rank{r}.onnx", 6, 4, odd_layer=odd_layer)
    seq, ranks = tmp_path / "seq.onnx", [tmp_path / "rank0.onnx", tmp_path / "rank1.onnx"]
    serial = check(seq, ranks)
    monkeypatch.setattr(memo, "BESIDE_MIN_NODES", 0)
    received = []
    real = memo._receive
    monkeypatch.setattr(memo, "_receive", lambda fd: received.append(fd) or real(fd))
    beside = check(seq, ranks)
    if sys.platform.startswith("linux"):
        # the parent receives the child's repeat (analyzer/speedups/repeats.py), its side, its collapse
        assert len(received) == 3, "the rank graph was not collapsed in a child"
    assert beside.derivation.derived == serial.derivation.derived
    assert beside.derivation.memo == serial.derivation.memo
    assert _summary(beside) == _summary(serial)
    if odd_layer is None:
        assert serial.verdict == "verified" and serial.derivation.memo.startswith("layers 1..5 solved once")
    else:
        assert serial.verdict == "discrepancy" and "layers.3" in serial.verdict_.discrepancies[0].node

    def no_fork():
        raise OSError("no fork here")

    monkeypatch.setattr("os.fork", no_fork)
    assert check(seq, ranks).derivation.derived == serial.derivation.derived  # done in one process
