"""Canonical forms: one computation that exporters write in two ways is rewritten to one way.

The rewrite keeps the graph's semantics exactly (ONNX MatMul broadcasting, Reshape's
row-major order); it runs on a copy of each graph before its facts are extracted, so that
the sequential graph and the ranks can be paired node by node. The user's files are never
touched.

Rewrites:
- *flattened linear*: ``y = Reshape(MatMul(Reshape(x, [P, K]), W[K, N]), Y)`` with
  ``Y = [..., N]`` and ``prod(Y[:-1]) == P`` becomes ``y = MatMul(Reshape(x, Y[:-1] + [K]), W)``
  (the reshape is dropped when ``x`` already has that shape). torch decomposes ``aten.linear``
  on a 3-D input into ``view -> mm -> view`` on one side and into one ``matmul`` on the other
  (e.g. a DTensor row-parallel linear), and the exporter's optimizer may fold the first view
  into a preceding reshape.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
from onnx import helper, numpy_helper

__all__ = ["canonicalize"]


def _shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    g = model.graph
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims) and vi.type.tensor_type.HasField("shape"):
            out[vi.name] = [d.dim_value for d in dims]
    for init in g.initializer:
        out[init.name] = list(init.dims)
    return out


def _flattened_linear(model: onnx.ModelProto) -> bool:
    g = model.graph
    shapes = _shapes(model)
    uses = Counter(v for n in g.node for v in n.input)
    uses.update(o.name for o in g.output)
    producer = {o: n for n in g.node for o in n.output}
    consumer = {n.input[0]: n for n in g.node if n.input}
    for mm in g.node:
        if mm.op_type != "MatMul" or mm.domain not in ("", "ai.onnx") or len(mm.input) != 2:
            continue
        v, w = mm.input
        u = mm.output[0]
        r1, r2 = producer.get(v), consumer.get(u)
        if r1 is None or r2 is None or r1.op_type != "Reshape" or r2.op_type != "Reshape":
            continue
        if uses[v] != 1 or uses[u] != 1:
            continue
        x, y = r1.input[0], r2.output[0]
        sv, sw, su, sy, sx = (shapes.get(k) for k in (v, w, u, y, x))
        if None in (sv, sw, su, sy, sx) or len(sv) != 2 or len(sw) != 2 or len(su) != 2 or len(sy) < 2:
            continue
        if sy[-1] != su[1] or math.prod(sy[:-1]) != sv[0] or sw[0] != sv[1]:
            continue
        target = [*sy[:-1], sv[1]]
        index = list(g.node).index(mm)
        if sx == target:
            new_in = x
            g.node.remove(r1)
        else:
            new_in = f"{v}::canonical"
            const = f"{v}::canonical_shape"
            g.initializer.append(numpy_helper.from_array(np.array(target, dtype=np.int64), const))
            reshape = helper.make_node("Reshape", [x, const], [new_in], name=f"{r1.name}::canonical")
            reshape.metadata_props.extend(r1.metadata_props)
            g.node.remove(r1)
            g.node.insert(index - 1 if index > 0 else 0, reshape)
            g.value_info.append(helper.make_tensor_value_info(new_in, onnx.TensorProto.FLOAT, target))
        new_mm = helper.make_node("MatMul", [new_in, w], [y], name=mm.name)
        new_mm.metadata_props.extend(mm.metadata_props)
        pos = list(g.node).index(mm)
        g.node.remove(mm)
        g.node.remove(r2)
        g.node.insert(pos, new_mm)
        return True
    return False


def _topological(model: onnx.ModelProto) -> None:
    g = model.graph
    ready = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    pending = list(g.node)
    ordered = []
    while pending:
        progressed = False
        for n in list(pending):
            if all(i in ready for i in n.input):
                ordered.append(n)
                ready.update(n.output)
                pending.remove(n)
                progressed = True
        if not progressed:  # leave graphs with cycles or dangling inputs as they were
            ordered.extend(pending)
            break
    del g.node[:]
    g.node.extend(ordered)


def canonicalize(model: onnx.ModelProto) -> onnx.ModelProto:
    """A rewritten copy of ``model`` in canonical form (see the module docstring)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    changed = False
    while _flattened_linear(out):
        changed = True
    if changed:
        _topological(out)
    return out
