"""Canonical forms (analyzer/rewrite/canonical.py): each rewrite fires on the pattern it names,
leaves the graph's results unchanged (checked with ONNX's reference evaluator), and leaves
near misses alone."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from analyzer.rewrite.canonical import canonicalize


def _model(nodes, inputs, outputs, inits=(), value_info=()):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in inits],
        value_info=[helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in value_info],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def _same_results(a: onnx.ModelProto, b: onnx.ModelProto, feeds: dict) -> None:
    for x, y in zip(ReferenceEvaluator(a).run(None, feeds), ReferenceEvaluator(b).run(None, feeds)):
        np.testing.assert_array_equal(x, y)


def _split_through_views(back_shape=(6, 4), extra_reader=False):
    """DTensor's Replicate -> Shard(1) of a [6, 8] gradient: view [2, 3, 8], split on 8, view back."""
    nodes = [
        helper.make_node("Reshape", ["x", "v_shape"], ["v"]),
        helper.make_node("Split", ["v"], ["p0", "p1"], axis=2, num_outputs=2),
        helper.make_node("Reshape", ["p1", "back_shape"], ["y"]),
    ]
    outputs = [("y", list(back_shape))]
    if extra_reader:
        nodes.append(helper.make_node("Neg", ["p1"], ["z"]))
        outputs.append(("z", [2, 3, 4]))
    return _model(
        nodes, [("x", [6, 8])], outputs,
        inits=[("v_shape", [2, 3, 8]), ("back_shape", list(back_shape))],
        value_info=[("v", [2, 3, 8]), ("p0", [2, 3, 4]), ("p1", [2, 3, 4])],
    )


def _feeds(model):
    rng = np.random.default_rng(0)
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in model.graph.input
    }


def test_split_through_views_splits_the_unviewed_tensor():
    model = _split_through_views()
    out = canonicalize(model)
    splits = [n for n in out.graph.node if n.op_type == "Split"]
    assert len(splits) == 1 and splits[0].input[0] == "x"
    assert next(a.i for a in splits[0].attribute if a.name == "axis") == 1
    assert splits[0].output[1] == "y"  # the view back is gone: the piece is produced directly
    assert not any(n.op_type == "Reshape" and n.output[0] == "y" for n in out.graph.node)
    _same_results(model, out, _feeds(model))


def test_split_through_views_keeps_the_old_split_for_its_other_readers():
    model = _split_through_views(extra_reader=True)
    out = canonicalize(model)
    splits = [n for n in out.graph.node if n.op_type == "Split"]
    assert sorted(s.input[0] for s in splits) == ["v", "x"]
    _same_results(model, out, _feeds(model))


def test_split_through_views_leaves_a_view_back_of_another_shape_alone():
    model = _split_through_views(back_shape=(3, 8))  # [2, 3, 4] -> [3, 8]: not x's rows
    out = canonicalize(model)
    assert [n.input[0] for n in out.graph.node if n.op_type == "Split"] == ["v"]
    _same_results(model, out, _feeds(model))


@pytest.mark.parametrize("heads", [1, 2])
def test_flattened_linear_whose_input_has_a_heads_axis(heads):
    """[B, S, heads, d] flattened to [B*S, heads*d] for a linear and viewed back to [B, S, N]
    (a k/v projection's input gradient; one kv head per rank gives a size-1 axis)."""
    d, n = 4, 5
    model = _model(
        [
            helper.make_node("Reshape", ["x", "flat"], ["v"]),
            helper.make_node("MatMul", ["v", "w"], ["u"]),
            helper.make_node("Reshape", ["u", "back"], ["y"]),
        ],
        [("x", [2, 3, heads, d]), ("w", [heads * d, n])], [("y", [2, 3, n])],
        inits=[("flat", [6, heads * d]), ("back", [2, 3, n])],
        value_info=[("v", [6, heads * d]), ("u", [6, n])],
    )
    out = canonicalize(model)
    mm = next(node for node in out.graph.node if node.op_type == "MatMul")
    assert mm.output[0] == "y"  # one 3-D MatMul, on both sides of a TP pair alike
    _same_results(model, out, _feeds(model))


def test_flattened_linear_view_back_into_heads_is_left_alone():
    """[B, S, H] -> [B*S, H] @ W -> [B, S, heads, d]: the view back splits features into heads."""
    model = _model(
        [
            helper.make_node("Reshape", ["x", "flat"], ["v"]),
            helper.make_node("MatMul", ["v", "w"], ["u"]),
            helper.make_node("Reshape", ["u", "back"], ["y"]),
        ],
        [("x", [2, 3, 8]), ("w", [8, 8])], [("y", [2, 3, 2, 4])],
        inits=[("flat", [6, 8]), ("back", [2, 3, 2, 4])],
        value_info=[("v", [6, 8]), ("u", [6, 8])],
    )
    out = canonicalize(model)
    assert [n.op_type for n in out.graph.node] == ["Reshape", "MatMul", "Reshape"]
    assert next(n for n in out.graph.node if n.op_type == "MatMul").input[0] == "v"


def _chained_linears():
    """Megatron's backward as the sequential side writes it: the first linear's product is
    viewed to 3-D and straight back to 2-D for the next one (view(_unsafe_view(mm))), which the
    reshape-chain fold turns into the flat product itself."""
    nodes = [
        helper.make_node("Reshape", ["x", "flat"], ["xf"]),
        helper.make_node("MatMul", ["xf", "w1"], ["u1"]),
        helper.make_node("Reshape", ["u1", "rows1"], ["y1"]),
        helper.make_node("Reshape", ["y1", "flat1"], ["y1f"]),
        helper.make_node("MatMul", ["y1f", "w2"], ["u2"]),
        helper.make_node("Reshape", ["u2", "rows2"], ["y2"]),
    ]
    return _model(
        nodes, [("x", [2, 3, 4]), ("w1", [4, 5]), ("w2", [5, 6])], [("y1", [2, 3, 5]), ("y2", [2, 3, 6])],
        inits=[("flat", [6, 4]), ("rows1", [2, 3, 5]), ("flat1", [6, 5]), ("rows2", [2, 3, 6])],
        value_info=[("xf", [6, 4]), ("u1", [6, 5]), ("y1f", [6, 5]), ("u2", [6, 6])],
    )


def test_chained_flattened_linears_both_become_3d():
    model = _chained_linears()
    out = canonicalize(model)
    matmuls = [n for n in out.graph.node if n.op_type == "MatMul"]
    assert [(n.input[0], n.output[0]) for n in matmuls] == [("x", "y1"), ("y1", "y2")]
    _same_results(model, out, _feeds(model))


def _transposes(p1, p2, *, extra_reader=False, out_shape=(2, 3, 4)):
    """x [2, 3, 4] -> Transpose(p1) -> Neg -> ... the round trip under test is t2 = T(T(x, p1), p2)."""
    mid = [[2, 3, 4][a] for a in p1]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t1"], perm=list(p1)),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=list(p2)),
        helper.make_node("Relu", ["t2"], ["y"]),
    ]
    outputs = [("y", list(out_shape))]
    if extra_reader:
        nodes.append(helper.make_node("Neg", ["t1"], ["z"]))
        outputs.append(("z", mid))
    return _model(nodes, [("x", [2, 3, 4])], outputs, value_info=[("t1", mid), ("t2", list(out_shape))])


def test_transpose_round_trip_becomes_an_identity_transpose():
    # [B, S, H] -> [S, B, H] -> [B, S, H]: one Transpose of x with the identity permutation
    model = _transposes([1, 0, 2], [1, 0, 2])
    out = canonicalize(model)
    assert [(n.op_type, list(n.input), list(n.output)) for n in out.graph.node] == [
        ("Transpose", ["x"], ["t2"]),
        ("Relu", ["t2"], ["y"]),
    ]
    assert list(out.graph.node[0].attribute[0].ints) == [0, 1, 2]
    _same_results(model, out, _feeds(model))


def test_transpose_chain_becomes_one_transpose_and_keeps_the_inner_for_its_other_readers():
    model = _transposes([1, 0, 2], [0, 2, 1], extra_reader=True, out_shape=(3, 4, 2))
    out = canonicalize(model)
    ops = [(n.op_type, list(n.input)) for n in out.graph.node]
    assert ("Transpose", ["x"]) in ops and ops.count(("Transpose", ["x"])) == 2  # the inner one stays for Neg
    outer = next(n for n in out.graph.node if n.output[0] == "t2")
    assert list(outer.attribute[0].ints) == [1, 2, 0]  # q[j] = p1[p2[j]]
    _same_results(model, out, _feeds(model))


def test_transposes_that_are_no_chain_are_left_alone():
    model = _transposes([1, 0, 2], [1, 0, 2])
    model.graph.node[1].input[0] = "x"  # both read x: nothing to fold
    out = canonicalize(model)
    assert [n.op_type for n in out.graph.node] == ["Transpose", "Transpose", "Relu"]


def _softmax_through_views(op="LogSoftmax", view_shape=(4, 16, 1), back="reshape", extra_reader=False):
    """ONNX's body of SoftmaxCrossEntropyLoss: [4, 16] viewed [4, 16, 1], transposed to [4, 1, 16],
    the op along axis 2, transposed and viewed back."""
    nodes = [
        helper.make_node("Reshape", ["x", "v_shape"], ["v"]),
        helper.make_node("Transpose", ["v"], ["t"], perm=[0, 2, 1]),
        helper.make_node(op, ["t"], ["s"], axis=2),
        helper.make_node("Transpose", ["s"], ["u"], perm=[0, 2, 1]),
    ]
    if back == "reshape":
        nodes.append(helper.make_node("Reshape", ["u", "x_shape"], ["y"]))
    else:  # the shape read from x at run time, as the function body does
        nodes += [helper.make_node("Shape", ["x"], ["xs"]), helper.make_node("Reshape", ["u", "xs"], ["y"])]
    outputs = [("y", [4, 16])] + ([("s", [4, 1, 16])] if extra_reader else [])
    inits = [("v_shape", list(view_shape)), ("x_shape", [4, 16])]
    info = [("v", list(view_shape)), ("t", [view_shape[0], view_shape[2], view_shape[1]]), ("s", [4, 1, 16]),
            ("u", list(view_shape))]
    return _model(nodes, [("x", [4, 16])], outputs, inits, info)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("back", ["reshape", "shape_of_input"])
def test_a_per_axis_op_through_views_runs_on_the_input(op, back):
    model = _softmax_through_views(op, back=back)
    out = canonicalize(model)
    assert [(n.op_type, list(n.input)) for n in out.graph.node] == [(op, ["x"])]
    assert helper.get_attribute_value(out.graph.node[0].attribute[0]) == 1
    _same_results(model, out, {"x": np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)})


def test_a_per_axis_op_whose_axis_the_view_mixes_is_left_alone():
    """Viewed [4, 8, 2]: the op's axis (8) is not an axis of x, the views stay."""
    nodes = [
        helper.make_node("Reshape", ["x", "v_shape"], ["v"]),
        helper.make_node("Softmax", ["v"], ["s"], axis=1),
        helper.make_node("Reshape", ["s", "x_shape"], ["y"]),
    ]
    model = _model(nodes, [("x", [4, 16])], [("y", [4, 16])], [("v_shape", [4, 8, 2]), ("x_shape", [4, 16])],
                   [("v", [4, 8, 2]), ("s", [4, 8, 2])])
    out = canonicalize(model)
    assert [n.op_type for n in out.graph.node] == ["Reshape", "Softmax", "Reshape"]


def test_a_per_axis_op_read_elsewhere_keeps_its_views():
    model = _softmax_through_views(extra_reader=True)
    out = canonicalize(model)
    assert "Transpose" in [n.op_type for n in out.graph.node]
    _same_results(model, out, {"x": np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)})


def _linear_with_bias(bias_shape=(16,), extra_reader=False):
    """``F.linear(x, W, b)`` on a 3-D input as traced: view [6, 8], MatMul, Add b, view [2, 3, 16]."""
    nodes = [
        helper.make_node("Reshape", ["x", "flat"], ["v"]),
        helper.make_node("MatMul", ["v", "w"], ["p"]),
        helper.make_node("Add", ["p", "b"], ["a"]),
        helper.make_node("Reshape", ["a", "back"], ["y"]),
    ]
    outputs = [("y", [2, 3, 16])] + ([("a", [6, 16])] if extra_reader else [])
    return _model(
        nodes, [("x", [2, 3, 8]), ("w", [8, 16]), ("b", list(bias_shape))], outputs,
        inits=[("flat", [6, 8]), ("back", [2, 3, 16])],
        value_info=[("v", [6, 8]), ("p", [6, 16]), ("a", [6, 16])],
    )


def _linear_feeds(bias_shape=(16,)):
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((2, 3, 8)).astype(np.float32),
        "w": rng.standard_normal((8, 16)).astype(np.float32),
        "b": rng.standard_normal(bias_shape).astype(np.float32),
    }


def test_view_back_moves_before_a_bias_add_and_the_linear_unflattens():
    model = _linear_with_bias()
    out = canonicalize(model)
    ops = [(n.op_type, list(n.input), list(n.output)) for n in out.graph.node]
    # the product is taken on the 3-D input (flattened linear), the bias added to it
    assert [op for op, _, _ in ops] == ["MatMul", "Add"], ops
    assert ops[0][1] == ["x", "w"] and ops[1][1][1] == "b" and ops[1][2] == ["y"]
    _same_results(model, out, _linear_feeds())


@pytest.mark.parametrize("bias_shape, extra_reader", [((6, 16), False), ((16,), True)])
def test_view_back_stays_after_an_add_that_is_no_row_bias_or_is_read_flat(bias_shape, extra_reader):
    model = _linear_with_bias(bias_shape, extra_reader)
    out = canonicalize(model)
    adds = [n for n in out.graph.node if n.op_type == "Add"]
    assert [list(n.input) for n in adds] == [["p", "b"]]
    _same_results(model, out, _linear_feeds(bias_shape))
