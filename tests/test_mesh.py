"""Collectives over a sub-group of the ranks (docs/mesh.md).

Until meshes are supported, a collective whose ``group_size`` is not the world size (the TP
group of a TP x DP mesh) must not be read as one over all ranks: the chain of relations stops
at it. Before ``CollSubGroup`` (rules/collectives/order.dl) the pair below was "verified".
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from analyzer import check

W = np.arange(16, dtype=np.float32).reshape(4, 4) / 10


def _model(nodes, x_shape, w, msft=False) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "w")],
        value_info=[helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4])],
    )
    opsets = [helper.make_opsetid("", 18)] + ([helper.make_opsetid("com.microsoft", 1)] if msft else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _row_parallel(tmp_path, group_size: int, op: str = "AllReduce"):
    """y = x @ w; rank r holds columns r of x and rows r of w, then an all-reduce."""
    seq = _model([helper.make_node("MatMul", ["x", "w"], ["y"])], [2, 4], W)
    files = [tmp_path / "seq.onnx"]
    onnx.save(seq, str(files[0]))
    for r in range(2):
        nodes = [
            helper.make_node("MatMul", ["x", "w"], ["z"]),
            helper.make_node(op, ["z"], ["y"], domain="com.microsoft", group_size=group_size, reduction="sum"),
        ]
        path = tmp_path / f"rank{r}.onnx"
        onnx.save(_model(nodes, [2, 2], W[2 * r : 2 * r + 2], msft=True), str(path))
        files.append(path)
    return files[0], files[1:]


def test_allreduce_over_the_world_is_verified(tmp_path):
    seq, ranks = _row_parallel(tmp_path, group_size=2)
    assert check(seq, ranks).verdict == "verified"


@pytest.mark.parametrize("group_size", [1, 4])
def test_allreduce_over_another_group_size_is_not_read_as_world_wide(tmp_path, group_size):
    seq, ranks = _row_parallel(tmp_path, group_size=group_size)
    result = check(seq, ranks)
    assert result.verdict == "discrepancy"
    assert result.verdict_.outputs[0].relation is None
    collectives = result.tables()["Collective"]
    assert len(collectives) == 2  # still paired by issue order; only their effect is withheld
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "com.microsoft::AllReduce" and "subgroup-collective" in first.hint_ids
