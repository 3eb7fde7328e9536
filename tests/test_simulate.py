"""Tests of the numeric witness (analyzer.witness.simulate and analyzer.witness.*).

Hand-written tensor-parallel graph pairs: Megatron MLP (column- then row-parallel, with and
without the all-reduce), AllGather on both axes, ReduceScatter, AllToAll, collectives in
subgraphs and local functions, mismatched collectives, input generation and the
distribute / rebuild round trip.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import example_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from analyzer.layout import PARTIAL_SUM, REPLICATE, Layout
from analyzer.witness.check import output_layout_from_shapes
from analyzer.witness.inputs import resolve_dims
from analyzer.witness.simulate import (
    CollectiveMismatch,
    SimulationError,
    check_relations,
    distribute,
    guess_input_relations,
    max_abs_diff,
    rebuild,
    relation_error,
    relative_error,
    replicate_spread,
    run_ranks,
    witness,
)

MS = "com.microsoft"
F = TensorProto.FLOAT
N = 2


def shard(axis: int, sections: Sequence[int] | None = None) -> Layout:
    return Layout("Shard", axis=axis, sections=tuple(sections) if sections else None)


def make(
    nodes: list[onnx.NodeProto],
    inputs: list[tuple[str, int, list]],
    outputs: list[str],
    inits: dict[str, np.ndarray] | None = None,
    *,
    ms: bool = True,
    functions: list[onnx.FunctionProto] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()],
    )
    opsets = [helper.make_opsetid("", 18)] + (
        [helper.make_opsetid(MS, 1)] if ms else []
    )
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    return helper.make_model(graph, opset_imports=opsets, functions=functions or [])


RNG = np.random.default_rng(7)
W1 = RNG.standard_normal((8, 16)).astype(np.float32)
W2 = RNG.standard_normal((16, 8)).astype(np.float32)
X = [("x", F, ["batch", 8])]


def mlp_seq() -> onnx.ModelProto:
    return make(
        [
            helper.make_node("MatMul", ["x", "W1"], ["h"]),
            helper.make_node("Relu", ["h"], ["a"]),
            helper.make_node("MatMul", ["a", "W2"], ["y"]),
        ],
        X,
        ["y"],
        {"W1": W1, "W2": W2},
        ms=False,
    )


def mlp_ranks(all_reduce: bool = True) -> list[onnx.ModelProto]:
    out = []
    for r in range(N):
        nodes = [
            helper.make_node("MatMul", ["x", "W1"], ["h"]),
            helper.make_node("Relu", ["h"], ["a"]),
            helper.make_node("MatMul", ["a", "W2"], ["p" if all_reduce else "y"]),
        ]
        if all_reduce:
            nodes.append(helper.make_node("AllReduce", ["p"], ["y"], domain=MS))
        inits = {"W1": np.split(W1, N, axis=1)[r], "W2": np.split(W2, N, axis=0)[r]}
        out.append(make(nodes, X, ["y"], inits))
    return out


# --- Megatron MLP --------------------------------------------------------------------------


def test_mlp_with_all_reduce_matches_sequential():
    errors = witness(
        mlp_seq(), mlp_ranks(), {"x": REPLICATE}, {"y": (REPLICATE, ["y", "y"])}
    )
    assert errors["y"] < 1e-5


def test_mlp_intermediate_relations_hold():
    sim = run_ranks(mlp_seq(), mlp_ranks(), {"x": REPLICATE}, keep_intermediates=True)
    relations = [
        ("x", REPLICATE, ["x", "x"]),
        ("W1", shard(1), ["W1", "W1"]),
        ("W2", shard(0), ["W2", "W2"]),
        ("h", shard(1), ["h", "h"]),
        ("a", shard(1), ["a", "a"]),
        ("y", PARTIAL_SUM, ["p", "p"]),
        ("y", REPLICATE, ["y", "y"]),
    ]
    assert check_relations(sim, relations, tol=1e-5) == []
    assert len(sim.collectives) == 1 and sim.collectives[0][0].op_type == "AllReduce"
    wrong = check_relations(
        sim, [("h", REPLICATE, ["h", "h"]), ("nope", REPLICATE, ["h", "h"])], 1e-5
    )
    assert [w[0] for w in wrong] == ["h", "nope"] and wrong[1][2] == float("inf")


def test_mlp_without_all_reduce_is_partial_not_replicate():
    sim = run_ranks(mlp_seq(), mlp_ranks(all_reduce=False), {"x": REPLICATE})
    pieces = sim.pieces(["y", "y"])
    assert relation_error(PARTIAL_SUM, sim.seq["y"], pieces) < 1e-5
    assert relation_error(REPLICATE, sim.seq["y"], pieces) > 1e-1
    assert replicate_spread(pieces) > 1e-1
    assert set(sim.ranks[0]) == {"y"}  # outputs only without keep_intermediates


# --- other collectives -----------------------------------------------------------------------


def _column_parallel(gather_axis: int) -> tuple[onnx.ModelProto, list]:
    """y = x @ W1; ranks compute a shard of y then all-gather it along ``gather_axis``."""
    seq = make(
        [helper.make_node("MatMul", ["x", "W1"], ["y"])], X, ["y"], {"W1": W1}, ms=False
    )
    ranks = []
    for r in range(N):
        w = np.split(W1, N, axis=1)[r] if gather_axis == 1 else W1
        nodes = [
            helper.make_node("MatMul", ["x", "W1"], ["part"]),
            helper.make_node(
                "AllGather", ["part"], ["y"], domain=MS, group_size=N, axis=gather_axis
            ),
        ]
        ranks.append(make(nodes, X, ["y"], {"W1": w}))
    return seq, ranks


@pytest.mark.parametrize(("axis", "x_layout"), [(1, REPLICATE), (0, shard(0))])
def test_all_gather(axis, x_layout):
    seq, ranks = _column_parallel(axis)
    sim = run_ranks(seq, ranks, {"x": x_layout}, keep_intermediates=True)
    assert check_relations(sim, [("y", shard(axis), ["part", "part"])], 1e-5) == []
    assert relation_error(REPLICATE, sim.seq["y"], sim.pieces(["y", "y"])) < 1e-5
    assert sim.rank_inputs[0]["x"].shape[0] == (2 if axis == 0 else 4)


def _axis_attr(model: onnx.ModelProto) -> onnx.AttributeProto:
    return next(a for a in model.graph.node[1].attribute if a.name == "axis")


def test_all_gather_negative_axis_and_default_axis():
    seq, ranks = _column_parallel(1)
    for m in ranks:
        _axis_attr(m).i = -1
    assert (
        witness(seq, ranks, {"x": REPLICATE}, {"y": (REPLICATE, ["y", "y"])})["y"]
        < 1e-5
    )
    seq, ranks = _column_parallel(0)
    for m in ranks:
        m.graph.node[1].attribute.remove(_axis_attr(m))  # default 0, as in onnxruntime
    assert (
        witness(seq, ranks, {"x": shard(0)}, {"y": (REPLICATE, ["y", "y"])})["y"] < 1e-5
    )


def test_reduce_scatter_row_parallel():
    seq = make(
        [helper.make_node("MatMul", ["x", "W2"], ["y"])],
        [("x", F, [4, 16])],
        ["y"],
        {"W2": W2},
        ms=False,
    )
    ranks = [
        make(
            [
                helper.make_node("MatMul", ["x", "W2"], ["p"]),
                helper.make_node(
                    "ReduceScatter", ["p"], ["y"], domain=MS, group_size=N, axis=0
                ),
            ],
            [("x", F, [4, 8])],
            ["y"],
            {"W2": np.split(W2, N, axis=0)[r]},
        )
        for r in range(N)
    ]
    errors = witness(seq, ranks, {"x": shard(1)}, {"y": (shard(0), ["y", "y"])})
    assert errors["y"] < 1e-5


def test_all_to_all_exchanges_chunks():
    seq = make(
        [helper.make_node("Identity", ["x"], ["y"])],
        [("x", F, [4, 6])],
        ["y"],
        ms=False,
    )
    ranks = [
        make(
            [
                helper.make_node(
                    "AllToAll", ["x"], ["y"], domain=MS, group_size=N, axis=1
                )
            ],
            [("x", F, [2, 6])],
            ["y"],
        )
        for _ in range(N)
    ]
    sim = run_ranks(seq, ranks, {"x": shard(0)})
    x = sim.seq_inputs["x"]
    x0, x1 = x[:2], x[2:]
    for j in range(N):  # rank j receives chunk j (columns) of every rank, in rank order
        expect = np.concatenate(
            [x0[:, 3 * j : 3 * j + 3], x1[:, 3 * j : 3 * j + 3]], axis=1
        )
        np.testing.assert_array_equal(sim.ranks[j]["y"], expect)


def test_all_reduce_max_reduction_and_wait_tensor():
    seq = make([helper.make_node("Relu", ["x"], ["y"])], X, ["y"], ms=False)
    ranks = [
        make(
            [
                helper.make_node("AllReduce", ["x"], ["m"], domain=MS, reduction="max"),
                helper.make_node(
                    "wait_tensor", ["m"], ["w"], domain="_c10d_functional"
                ),
                helper.make_node("Relu", ["w"], ["y"]),
            ],
            X,
            ["y"],
        )
        for _ in range(N)
    ]
    for m in ranks:
        m.opset_import.append(helper.make_opsetid("_c10d_functional", 1))
    max_part = Layout("Partial", reduce="max")
    assert (
        witness(seq, ranks, {"x": max_part}, {"y": (REPLICATE, ["y", "y"])})["y"] == 0.0
    )


def test_collective_inside_if_and_local_function():
    then = helper.make_graph(
        [helper.make_node("AllReduce", ["x"], ["t"], domain=MS)],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", F, None)],
    )
    fn = helper.make_function(
        "local",
        "Reduce",
        ["i"],
        ["o"],
        [helper.make_node("AllReduce", ["i"], ["o"], domain=MS)],
        [helper.make_opsetid("", 18), helper.make_opsetid(MS, 1)],
    )
    seq = make(
        [
            helper.make_node("Identity", ["x"], ["y"]),
            helper.make_node("Identity", ["x"], ["z"]),
        ],
        X,
        ["y", "z"],
        ms=False,
    )
    nodes = [
        helper.make_node(
            "Constant", [], ["c"], value=numpy_helper.from_array(np.array(True))
        ),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Reduce", ["x"], ["z"], domain="local"),
    ]
    ranks = [make(nodes, X, ["y", "z"], functions=[fn]) for _ in range(N)]
    errors = witness(
        seq,
        ranks,
        {"x": PARTIAL_SUM},
        {"y": (REPLICATE, ["y", "y"]), "z": (REPLICATE, ["z", "z"])},
    )
    assert errors["y"] < 1e-5 and errors["z"] < 1e-5


# --- mismatches and errors -------------------------------------------------------------------


def _two_collectives(second: onnx.NodeProto | None) -> onnx.ModelProto:
    nodes = [helper.make_node("AllReduce", ["x"], ["a"], domain=MS)]
    if second is not None:
        nodes.append(second)
    else:
        nodes.append(helper.make_node("Identity", ["a"], ["y"]))
    return make(nodes, X, ["y"])


@pytest.mark.parametrize(
    ("second", "match"),
    [
        (
            helper.make_node("AllGather", ["a"], ["y"], domain=MS, axis=0),
            r"collective #1: rank 0 issued AllReduce.*rank 1 issued AllGather",
        ),
        (
            None,
            r"collective #1: rank\(s\) \[0\] issued AllReduce.*rank\(s\) \[1\] finished after 1",
        ),
        (
            helper.make_node("AllReduce", ["a"], ["y"], domain=MS, reduction="max"),
            r"collective #1: .*reduction=max",
        ),
    ],
)
def test_collective_mismatch_raises_without_hanging(second, match):
    seq = make([helper.make_node("Identity", ["x"], ["y"])], X, ["y"], ms=False)
    rank0 = _two_collectives(helper.make_node("AllReduce", ["a"], ["y"], domain=MS))
    start = time.perf_counter()
    with pytest.raises(CollectiveMismatch, match=match):
        run_ranks(seq, [rank0, _two_collectives(second)], {"x": REPLICATE}, timeout=5)
    assert time.perf_counter() - start < 3


def test_collective_shape_mismatch_and_group_size():
    seq = make([helper.make_node("Identity", ["x"], ["y"])], X, ["y"], ms=False)
    r0 = make([helper.make_node("AllReduce", ["x"], ["y"], domain=MS)], X, ["y"])
    r1 = make(
        [
            helper.make_node("Slice", ["x", "s", "e", "ax"], ["v"]),
            helper.make_node("AllReduce", ["v"], ["y"], domain=MS),
        ],
        X,
        ["y"],
        {"s": np.array([0]), "e": np.array([4]), "ax": np.array([1])},
    )
    with pytest.raises(
        CollectiveMismatch,
        match=r"#0: rank 0 issued AllReduce\(float32\[4, 8\]\) but rank 1 issued AllReduce\(float32\[4, 4\]\)$",
    ):
        run_ranks(seq, [r0, r1], {"x": REPLICATE}, timeout=5)
    g4 = make(
        [helper.make_node("AllGather", ["x"], ["y"], domain=MS, group_size=4)], X, ["y"]
    )
    with pytest.raises(CollectiveMismatch, match="group_size=4 but 2 rank graphs"):
        run_ranks(seq, [g4, g4], {"x": REPLICATE}, timeout=5)


def test_failing_rank_aborts_the_others():
    seq = make([helper.make_node("Identity", ["x"], ["y"])], X, ["y"], ms=False)
    good = make([helper.make_node("AllReduce", ["x"], ["y"], domain=MS)], X, ["y"])
    bad = make(
        [
            helper.make_node("Reshape", ["x", "s"], ["v"], name="bad_reshape"),
            helper.make_node("AllReduce", ["v"], ["y"], domain=MS),
        ],
        X,
        ["y"],
        {"s": np.array([3, 5])},
    )
    with pytest.raises(
        SimulationError, match=r"^rank 1: node 'bad_reshape' \(Reshape\) failed"
    ) as info:
        run_ranks(seq, [good, bad], {"x": REPLICATE}, timeout=5)
    assert "\n" not in str(info.value)


def test_unknown_op_and_bad_relation_are_simulation_errors():
    seq = make([helper.make_node("Identity", ["x"], ["y"])], X, ["y"], ms=False)
    odd = make([helper.make_node("Frobnicate", ["x"], ["y"], domain=MS)], X, ["y"])
    with pytest.raises(SimulationError, match="rank 0: cannot load the graph"):
        run_ranks(seq, [odd, odd], {"x": REPLICATE})
    ident = make([helper.make_node("Identity", ["x"], ["y"])], X, ["y"])
    with pytest.raises(
        SimulationError,
        match=r"cannot apply Shard\(1, sections=\[3, 5\]\) over 2 ranks",
    ):
        run_ranks(seq, [ident, ident], {"x": shard(1, [3, 5])})
    other = make([helper.make_node("Identity", ["q"], ["y"])], [("q", F, [4])], ["y"])
    with pytest.raises(
        SimulationError, match="'q' is not an input of the sequential graph"
    ):
        run_ranks(seq, [other, other], {})


# --- inputs ----------------------------------------------------------------------------------


def test_int_inputs_follow_gather_bounds():
    emb = RNG.standard_normal((5, 4)).astype(np.float32)
    seq = make(
        [
            helper.make_node("Cast", ["ids"], ["ids32"], to=TensorProto.INT32),
            helper.make_node("Gather", ["E", "ids32"], ["y"]),
            helper.make_node("Cast", ["k"], ["z"], to=F),
            helper.make_node("Cast", ["j"], ["w"], to=F),
            helper.make_node("Concat", ["E", "E", "E"], ["EEE"], axis=1),
            helper.make_node("Gather", ["EEE", "c"], ["v"], axis=1),
        ],
        [
            ("ids", TensorProto.INT64, [64, 8]),
            ("k", TensorProto.INT64, [64]),
            ("j", TensorProto.INT32, [64]),
            ("c", TensorProto.INT64, [64]),
        ],
        ["y", "z", "w", "v"],
        {"E": emb},
        ms=False,
    )
    ranks = [
        make(
            [helper.make_node("Gather", ["E", "ids"], ["y"])],
            [("ids", TensorProto.INT64, [64, 8])],
            ["y"],
            {"E": e},
            ms=False,
        )
        for e in np.split(emb, N, axis=1)
    ]
    sim = run_ranks(seq, ranks, {}, int_ranges={"j": (-3, -1)})
    ids = sim.seq_inputs["ids"]
    assert ids.dtype == np.int64 and ids.min() == 0 and ids.max() == 4
    assert 0 <= sim.seq_inputs["k"].min() and sim.seq_inputs["k"].max() == 7
    assert set(np.unique(sim.seq_inputs["j"])) == {-3, -2}
    assert sim.seq_inputs["c"].max() == 11  # bound of a computed Gather data (inferred)
    assert relation_error(shard(2), sim.seq["y"], sim.pieces(["y", "y"])) == 0.0


def test_symbolic_dims_and_expressions():
    model = make(
        [helper.make_node("Identity", ["x"], ["y"])],
        [("x", F, ["s0", "s1", "s0 + 2*s1"])],
        ["y"],
    )
    assert resolve_dims(model, {"s1": 3}) == {"s0": 4, "s1": 3, "s0 + 2*s1": 10}
    sim = run_ranks(model, [model], {}, dims={"s0": 1, "s1": 2})
    assert sim.seq_inputs["x"].shape == (1, 2, 5)


def test_seeds_are_reproducible_and_inputs_derived():
    seq, ranks = mlp_seq(), mlp_ranks()
    a = run_ranks(seq, ranks, {"x": shard(0)}, seed=3)
    b = run_ranks(seq, ranks, {"x": shard(0)}, seed=3)
    np.testing.assert_array_equal(a.seq_inputs["x"], b.seq_inputs["x"])
    np.testing.assert_array_equal(
        np.concatenate([f["x"] for f in a.rank_inputs]), a.seq_inputs["x"]
    )
    c = run_ranks(seq, ranks, {"x": PARTIAL_SUM}, seed=3)
    total = c.rank_inputs[0]["x"] + c.rank_inputs[1]["x"]
    assert max_abs_diff(total, c.seq_inputs["x"]) < 1e-5
    assert max_abs_diff(c.rank_inputs[1]["x"], c.seq_inputs["x"]) > 1e-2


# --- real exports (examples/<case>/, produced by scripts/export_hf_tp.py) -------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = example_cases("forward")


@pytest.mark.skipif(not CASES, reason="no examples/<case>/case.yaml exported yet")
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_example_logits_witness(case):
    yaml = pytest.importorskip("yaml")
    meta = yaml.safe_load((case / "case.yaml").read_text())
    seq = onnx.load(str(case / meta["files"]["seq"]))
    ranks = [onnx.load(str(case / f)) for f in meta["files"]["ranks"]]
    relations = guess_input_relations(seq, ranks)
    # Replicate, or Shard(1) for context-parallel ranks that return the logits of their chunk
    outputs = {o.name: (output_layout_from_shapes(seq, ranks, i), [o.name] * len(ranks))
               for i, o in enumerate(seq.graph.output)}
    if meta.get("collective_mismatch"):  # the exporter's simulation stopped at this collective too
        k = meta["collective_mismatch"].split("#")[1].split()[0]
        with pytest.raises(CollectiveMismatch, match=f"collective #{k}:"):
            witness(seq, ranks, relations, outputs)
        return
    errors = witness(seq, ranks, relations, outputs)
    if meta["expected"] == "verified":
        assert max(errors.values()) < 1e-4, errors
    else:
        assert max(errors.values()) > 1e-3, errors


# --- layouts ---------------------------------------------------------------------------------


@st.composite
def sharded_arrays(draw):
    n = draw(st.integers(1, 4))
    ndim = draw(st.integers(1, 3))
    axis = draw(st.integers(0, ndim - 1))
    sections = draw(
        st.lists(st.integers(1, 3).map(lambda k: k * n), min_size=1, max_size=4)
    )
    shape = [draw(st.integers(0, 3)) for _ in range(ndim)]
    shape[axis] = sum(sections)
    use_sections = draw(st.booleans())
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return x, shard(axis, sections if use_sections else None), n


@settings(max_examples=60, deadline=None)
@given(sharded_arrays())
def test_shard_round_trip(case):
    x, layout, n = case
    pieces = distribute(layout, x, n)
    assert len(pieces) == n
    assert all(p.shape[layout.axis] == x.shape[layout.axis] // n for p in pieces)
    np.testing.assert_array_equal(rebuild(layout, pieces), x)
    assert relation_error(layout, x, pieces) == 0.0


def test_sections_interleave_like_megatron_qkv():
    q, k, v = np.arange(4), np.arange(10, 12), np.arange(20, 22)
    layout = shard(0, [4, 2, 2])
    pieces = distribute(layout, np.concatenate([q, k, v]), 2)
    np.testing.assert_array_equal(pieces[0], [0, 1, 10, 20])
    np.testing.assert_array_equal(pieces[1], [2, 3, 11, 21])
    assert relation_error(shard(0), np.concatenate([q, k, v]), pieces) > 0


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 4),
    st.sampled_from(["sum", "max"]),
    st.sampled_from([np.float32, np.int64]),
)
def test_partial_round_trip(n, reduce, dtype):
    x = (np.random.default_rng(n).standard_normal((3, 5)) * 10).astype(dtype)
    layout = Layout("Partial", reduce=reduce)
    pieces = distribute(layout, x, n, rng=np.random.default_rng(0))
    assert relative_error(layout, x, pieces) <= (1e-6 if dtype == np.float32 else 0)


def test_error_measures_never_raise():
    s = np.ones((2, 4), dtype=np.float32)
    assert relation_error(shard(1), s, [s, s]) == float("inf")
    assert relation_error(shard(5), s, [s, s]) == float("inf")
    assert relation_error(REPLICATE, s, [s, s[:, :2]]) == float("inf")
    assert relation_error(PARTIAL_SUM, s, []) == float("inf")
    assert relation_error(shard(1, [3, 5]), np.ones((2, 8)), [s, s]) == float("inf")
    masked = np.array([0.0, -np.inf, np.nan])
    assert max_abs_diff(masked, masked.copy()) == 0.0
    assert max_abs_diff(masked, np.array([0.0, -np.inf, 1.0])) == float("inf")
    assert relative_error(
        REPLICATE, np.array([10.0, -20.0]), [np.array([10.0, -19.0])]
    ) == pytest.approx(0.05)
    assert relative_error(REPLICATE, s, [s]) == 0.0


def test_a_registered_collective_schema_lends_no_default_attributes_to_the_witness(monkeypatch):
    """`shardlog export` registers com.microsoft collective schemas (group_size default 1);
    onnx.reference then fills that default into a node that sets no group_size. The witness
    reads only what the node sets, so an AllReduce without group_size still spans all ranks."""
    import numpy as np
    import onnx.defs
    import onnx.parser
    from onnx.reference import op_run

    from analyzer.export.collectives import collective_schemas
    from analyzer.layout import PARTIAL_SUM
    from analyzer.witness.simulate import run_ranks

    # onnx.reference reads every schema once, at its import: in a process that exported first,
    # the registered one is there (keyed by op name)
    with collective_schemas():
        monkeypatch.setitem(op_run._schemas, "AllReduce", onnx.defs.get_schema("AllReduce", 1, "com.microsoft"))
    text = """<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
r (float[2] x) => (float[2] y) { y = com.microsoft.AllReduce(x) }"""
    seq = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
s (float[2] x) => (float[2] y) { y = Identity(x) }""")
    ranks = [onnx.parser.parse_model(text) for _ in range(2)]
    sim = run_ranks(seq, ranks, {"x": PARTIAL_SUM})  # rank pieces that sum to x: the all-reduce rebuilds x
    for out in sim.ranks:
        assert np.allclose(out["y"], sim.seq["y"], atol=1e-6)


def test_the_collective_schemas_of_an_export_do_not_outlive_it():
    """A schema registered while exporting would make onnx's checker refuse the attributes it
    does not declare (the fx importer's ``group``) in every later check of the process."""
    import onnx.defs

    from analyzer.export.collectives import collective_schemas

    assert not onnx.defs.has("AllReduce", "com.microsoft")
    with collective_schemas():
        assert onnx.defs.has("AllReduce", "com.microsoft")
        with collective_schemas():  # nested (an export calling another): the outer one removes them
            pass
        assert onnx.defs.has("AllReduce", "com.microsoft")
    assert not onnx.defs.has("AllReduce", "com.microsoft")
