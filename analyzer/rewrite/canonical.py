"""Canonical forms: one computation that exporters write in two ways is rewritten to one way.

The rewrite keeps the graph's semantics exactly (ONNX MatMul broadcasting, Reshape's
row-major order); it runs on a copy of each graph before its facts are extracted, so that
the sequential graph and the ranks can be paired node by node. The user's files are never
touched.

Rewrites:
- *fused ops expanded*: the op types the driver chose are replaced by their ONNX function
  bodies, first (:mod:`analyzer.rewrite.functions`).
- *a factor divided back out*: a constant ``c`` whose every use along one edge is linear and
  ends in a division by ``c`` is divided there instead (:mod:`analyzer.rewrite.scale`: the
  Hugging Face Trainer's ``loss *= num_processes`` cancelled by DDP's average).
- *no-op removal*: ``Identity``, and ``Reshape``/``Expand``/``Cast``/``Slice`` (step 1) whose
  output has the input's static shape and dtype, are dropped and their readers read the input (kept when
  the output is a graph output). Traced graphs are full of them (``aten.clone``,
  ``aten.copy`` of a collective's result, ``view`` to the same shape, ``wait_tensor``), and
  one side often has one where the other has none.
- *transpose chains*: ``Transpose(Transpose(x, p1), p2)`` becomes one ``Transpose(x, q)``,
  ``q[j] = p1[p2[j]]``; a round trip becomes a Transpose with the identity permutation (the
  value keeps its name; on a rank, ``rules/core/rank_views.dl`` sees through it).
- *reshape chains*: ``Reshape(Reshape(x, s1), s2)`` becomes ``Reshape(x, s2)`` (row-major
  order makes the middle shape irrelevant; the inner Reshape stays while something else reads
  it); e.g. apex's per-row statistics flattened after the forward kernel and unflattened for
  the backward one.
- *flattened linear*: ``y = Reshape(MatMul(Reshape(x, [P, K]), W[K, N]), Y)`` with
  ``Y = [..., N]`` and ``prod(Y[:-1]) == P`` becomes ``y = MatMul(Reshape(x, Y[:-1] + [K]), W)``
  (the reshape is dropped when ``x`` already has that shape; with no view back, the product
  read flat, the result takes x's leading axes and the flat product becomes a view of it).
  torch decomposes ``aten.linear``
  on a 3-D input into ``view -> mm -> view`` on one side and into one ``matmul`` on the other
  (e.g. a DTensor row-parallel linear), and the exporter's optimizer may fold the first view
  into a preceding reshape.
- *bias added before the view back*: ``Reshape(Add(MatMul(a, W), c), Y)`` with a 2-D product
  ``[P, N]``, ``c`` of shape ``[N]`` (or ``[1, N]``) and ``Y[-1] == N`` becomes
  ``Add(Reshape(MatMul(a, W), Y), c)`` (a reshape that keeps the last axis commutes with adding
  a row vector), so that the product is a flattened linear (next). ``F.linear(x, W, b)`` on a
  3-D input is ``view -> addmm -> view`` once traced, ``Gemm`` expanded to ``MatMul + Add``
  (:mod:`analyzer.rewrite.functions`); a rank that adds no bias writes ``matmul``.
- *split through views*: ``Reshape(Split(Reshape(x, V), axis=k)[j], Y_j)`` where axis ``k`` of
  ``V`` is an axis ``k'`` of ``x`` left intact by the view (the axes before it only split or
  merged) and each ``Y_j`` is ``x``'s shape with axis ``k'`` cut to the piece, becomes
  ``Split(x, axis=k')[j]``. DTensor's backward of a column-parallel linear writes the
  rank's chunk of a replicated ``[B*S, V]`` gradient as view ``[B, S, V]``, split on ``V``,
  view ``[B*S, V/N]``.
- *per-axis ops through views*: ``Softmax``/``LogSoftmax`` along axis ``a`` of a view of ``y``
  (``Transpose(y, p)``, or a ``Reshape`` whose axis ``a`` is an axis ``k`` of ``y`` left intact),
  read only by the view back to ``y``'s layout, becomes the op on ``y`` itself along ``p[a]``
  (or ``k``). ONNX's own function body of ``SoftmaxCrossEntropyLoss`` computes its log-softmax
  so (``[N, C]`` viewed ``[N, C, 1]``, transposed to ``[N, 1, C]``, and back), where a program
  that spells the loss out calls ``LogSoftmax`` on ``[N, C]``.

One pass over the nodes finds every match (matches never overlap); when the flattened input
or the 2-D product has other readers, they keep reading it (the input's Reshape stays; the
product becomes a view of the 3-D result), so a pass costs time linear in the graph size. The
flattened-linear pass repeats while it rewrites something: on one side ``view(_unsafe_view(mm))``
folds back to the flat product, so the next linear reads a flat value that becomes a view of a
3-D one only once the first linear is rewritten (Megatron's backward in GraphGuard's layer-norm
case), while on the other side the same linear matches in the first pass.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from analyzer.facts.extract import with_graph
from analyzer.rewrite.functions import expand_calls
from analyzer.rewrite.scale import cancel_divided_factors

__all__ = ["canonical_forms", "canonicalize"]


class _Types:
    """Static shapes and element types by value name (initializers over value infos), read
    once per :func:`canonicalize` and kept up to date by the rewrites, which add values and
    initializers through :meth:`add_value` and :meth:`add_initializer` (and never remove a
    value info). Equal types serialize to equal bytes, so each distinct type is decoded once
    (the shape lists are shared: read only)."""

    def __init__(self, model: onnx.ModelProto) -> None:
        g = model.graph
        self.graph = g
        self.shapes: dict[str, list[int]] = {}
        self.dtypes: dict[str, int] = {}
        static: dict[bytes, list[int] | None] = {}
        for vi in list(g.value_info) + list(g.input) + list(g.output):
            key = vi.type.SerializeToString()
            if key not in static:
                static[key] = _static_dims(vi.type.tensor_type)
            if static[key] is not None:
                self.shapes[vi.name] = static[key]
            self.dtypes[vi.name] = vi.type.tensor_type.elem_type
        for init in g.initializer:
            self.shapes[init.name] = list(init.dims)
            self.dtypes[init.name] = init.data_type
        self._ones: dict[str, bool] = {}

    def add_value(self, name: str, dtype: int, dims: list[int]) -> None:
        """Declare a new value ``name`` of static shape ``dims`` (a value info of the graph)."""
        self.graph.value_info.append(helper.make_tensor_value_info(name, dtype, dims))
        self.shapes[name] = list(dims)
        self.dtypes[name] = dtype

    def declare(self, name: str, dims: list[int], dtype: int) -> None:
        """Give ``name`` the static shape ``dims``: its value info is rewritten, or one is added."""
        vi = next((v for v in self.graph.value_info if v.name == name), None)
        if vi is None:
            self.add_value(name, dtype, dims)
            return
        shape = vi.type.tensor_type.shape
        del shape.dim[:]
        for d in dims:
            shape.dim.add().dim_value = d
        self.shapes[name] = list(dims)

    def add_value_info(self, vi: onnx.ValueInfoProto) -> None:
        """Declare a new value from its value info (a fused op's expanded body)."""
        self.graph.value_info.append(vi)
        dims = _static_dims(vi.type.tensor_type)
        if dims is not None:
            self.shapes[vi.name] = dims
        self.dtypes[vi.name] = vi.type.tensor_type.elem_type

    def add_initializer(self, tensor: onnx.TensorProto) -> None:
        """Add an initializer to the graph."""
        self.graph.initializer.append(tensor)
        self.shapes[tensor.name] = list(tensor.dims)
        self.dtypes[tensor.name] = tensor.data_type

    def all_ones(self, name: str) -> bool:
        """``name`` is a small int64 initializer of ones (a Slice's steps)."""
        if name not in self._ones:
            init = next((t for t in self.graph.initializer if t.name == name), None)
            self._ones[name] = init is not None and init.data_type == onnx.TensorProto.INT64 and _all_ones(init)
        return self._ones[name]


def _static_dims(t: onnx.TypeProto.Tensor) -> list[int] | None:
    dims = t.shape.dim
    return [d.dim_value for d in dims] if t.HasField("shape") and all(d.HasField("dim_value") for d in dims) else None


def _is_op(node: onnx.NodeProto, op: str) -> bool:
    return node.op_type == op and node.domain in ("", "ai.onnx")


_SHAPE_KEEPING = ("Reshape", "Expand", "Cast")  # Slice too, when its steps are all 1
_NOOP_CANDIDATES = frozenset({"Identity", "Slice", *_SHAPE_KEEPING})


def _is_noop(node: onnx.NodeProto, types: _Types) -> bool:
    if node.op_type not in _NOOP_CANDIDATES or len(node.output) != 1 or not node.input:
        return False
    if _is_op(node, "Identity"):
        return True
    if _is_op(node, "Slice"):
        if len(node.input) > 4 and node.input[4] and not types.all_ones(node.input[4]):
            return False
    elif not any(_is_op(node, op) for op in _SHAPE_KEEPING):
        return False
    x, y = node.input[0], node.output[0]
    shapes, dtypes = types.shapes, types.dtypes
    return shapes.get(x) is not None and shapes.get(x) == shapes.get(y) and dtypes.get(x) == dtypes.get(y) != 0


def _all_ones(t: onnx.TensorProto) -> bool:
    if t.data_location == onnx.TensorProto.EXTERNAL or math.prod(t.dims) > 64:
        return False
    try:
        return bool(np.all(numpy_helper.to_array(t) == 1))
    except Exception:  # malformed data: not a steps constant we can read
        return False


def _fold_reshape_chains(model: onnx.ModelProto) -> int:
    """Fold reshape chains of ``model`` in place (module docstring); returns how many readers
    were rewired. An inner Reshape left without readers is dropped."""
    g = model.graph
    producer = {n.output[0]: n for n in g.node if _is_op(n, "Reshape") and len(n.output) == 1 and n.input}
    folded = 0
    for node in g.node:
        if _is_op(node, "Reshape") and node.input and node.input[0] in producer:
            node.input[0] = producer[node.input[0]].input[0]
            folded += 1
    if folded:
        _drop_unread(g, producer)
    return folded


def _drop_unread(g: onnx.GraphProto, producer: dict[str, onnx.NodeProto]) -> None:
    """Drop the nodes of ``producer`` (by output) that nothing reads any more after a fold."""
    uses = Counter(v for n in g.node for v in n.input)
    uses.update(o.name for o in g.output)
    kept = [n for n in g.node if not (n.output and n.output[0] in producer and uses[n.output[0]] == 0)]
    del g.node[:]
    g.node.extend(kept)


def _perm(node: onnx.NodeProto, types: _Types) -> list[int] | None:
    """The permutation of a Transpose (reversed axes without a ``perm``), or None when unknown."""
    for a in node.attribute:
        if a.name == "perm":
            return list(a.ints)
    shape = types.shapes.get(node.input[0]) if node.input else None
    return list(range(len(shape)))[::-1] if shape is not None else None


def _fold_transpose_chains(model: onnx.ModelProto, types: _Types) -> int:
    """Fold ``Transpose(Transpose(x, p1), p2)`` into one ``Transpose(x, q)`` with
    ``q[j] = p1[p2[j]]`` (ONNX: output axis j of a Transpose is input axis ``perm[j]``); a round
    trip (``q`` the identity, e.g. ``[B, S, H]`` to ``[S, B, H]`` and back) becomes a Transpose
    with the identity permutation, which keeps the value's name for the report and which
    ``rules/core/rank_views.dl`` sees through on a rank. Returns how many were folded; an inner
    Transpose left without readers is dropped."""
    g = model.graph
    producer = {n.output[0]: n for n in g.node if _is_op(n, "Transpose") and len(n.output) == 1 and n.input}
    folded = 0
    for node in g.node:
        if not (_is_op(node, "Transpose") and node.input and node.input[0] in producer):
            continue
        inner = producer[node.input[0]]
        p1, p2 = _perm(inner, types), _perm(node, types)
        if p1 is None or p2 is None or len(p1) != len(p2):
            continue
        node.input[0] = inner.input[0]
        del node.attribute[:]
        node.attribute.append(helper.make_attribute("perm", [p1[j] for j in p2]))
        folded += 1
    if folded:
        _drop_unread(g, producer)
    return folded


def _drop_noops(model: onnx.ModelProto, types: _Types) -> int:
    """Remove no-op nodes of ``model`` in place (module docstring); returns how many."""
    g = model.graph
    outputs = {o.name for o in g.output}
    alias: dict[str, str] = {}
    kept = []
    for node in g.node:
        if alias and not alias.keys().isdisjoint(node.input):
            for i, name in enumerate(node.input):
                if name in alias:
                    node.input[i] = alias[name]
        if _is_noop(node, types) and node.output[0] not in outputs:
            alias[node.output[0]] = node.input[0]
        else:
            kept.append(node)
    if not alias:
        return 0
    del g.node[:]
    g.node.extend(kept)
    return len(alias)


def _views_before_bias(model: onnx.ModelProto, types: _Types) -> int:
    """Move the view back of ``Add(MatMul(a, W), c)`` before the Add (module docstring) in place;
    returns how many. The Add's output must be read by that Reshape alone."""
    g = model.graph
    shapes = types.shapes
    nodes = list(g.node)
    uses = Counter(v for n in nodes for v in n.input)
    uses.update(o.name for o in g.output)
    producer = {o: n for n in nodes for o in n.output}
    moved: dict[int, tuple[onnx.NodeProto, onnx.NodeProto]] = {}
    for i, view in enumerate(nodes):
        if not _is_op(view, "Reshape") or len(view.input) != 2 or len(view.output) != 1:
            continue
        add = producer.get(view.input[0])
        if add is None or not _is_op(add, "Add") or len(add.input) != 2 or uses[add.output[0]] != 1:
            continue
        p, c = add.input
        mm = producer.get(p)
        if mm is None or not _is_op(mm, "MatMul"):
            continue
        sp, sc, sy = shapes.get(p), shapes.get(c), shapes.get(view.output[0])
        if None in (sp, sc, sy) or len(sp) != 2 or len(sy) < 2 or sy[-1] != sp[1]:
            continue
        if not sc or sc[-1] != sp[1] or any(d != 1 for d in sc[:-1]) or len(sc) > 2:
            continue
        y = view.output[0]
        mid = f"{y}::canonical_before_bias"
        types.add_value(mid, types.dtypes.get(p) or onnx.TensorProto.FLOAT, list(sy))
        new_view = helper.make_node("Reshape", [p, view.input[1]], [mid], name=view.name)
        new_view.attribute.extend(view.attribute)
        new_view.metadata_props.extend(view.metadata_props)
        new_add = helper.make_node("Add", [mid, c], [y], name=add.name)
        new_add.metadata_props.extend(add.metadata_props)
        moved[i] = (new_view, new_add)
    if not moved:
        return 0
    dropped = {producer[nodes[i].input[0]].output[0] for i in moved}
    out = []
    for i, n in enumerate(nodes):
        if i in moved:
            out.extend(moved[i])
        elif not (_is_op(n, "Add") and n.output and n.output[0] in dropped):
            out.append(n)
    del g.node[:]
    g.node.extend(out)
    return len(moved)


def _flattened_linears(model: onnx.ModelProto, types: _Types) -> int:
    """Rewrite every flattened linear of ``model`` in place; returns how many."""
    g = model.graph
    shapes, dtypes = types.shapes, types.dtypes
    nodes = list(g.node)
    uses = Counter(v for n in nodes for v in n.input)
    uses.update(o.name for o in g.output)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    consumer: dict[str, int] = {}  # value -> the first Reshape reading it as its data
    for i, n in enumerate(nodes):
        if n.input and _is_op(n, "Reshape"):
            consumer.setdefault(n.input[0], i)
    replace: dict[int, list[onnx.NodeProto]] = {}
    drop: set[int] = set()
    for j, mm in enumerate(nodes):
        if not _is_op(mm, "MatMul") or len(mm.input) != 2 or len(mm.output) != 1:
            continue
        v, w = mm.input
        u = mm.output[0]
        i1, i2 = producer.get(v), consumer.get(u)
        if i1 is None or i1 == i2 or {i1, i2, j} & (drop | set(replace)):
            continue
        r1 = nodes[i1]
        if not _is_op(r1, "Reshape") or not r1.input:
            continue
        x = r1.input[0]
        if i2 is None:  # no view back: the product is read flat; give the rows x's leading axes
            sx, sv, sw = shapes.get(x), shapes.get(v), shapes.get(w)
            if None in (sx, sv, sw) or len(sx) < 3 or len(sv) != 2 or len(sw) != 2:
                continue
            rows = _rows(sx, sv[0])
            if rows < 2 or rows == len(sx):  # the rows are not two or more whole leading axes of x
                continue
            y = f"{u}::canonical_rows"
            types.add_value(y, dtypes.get(u) or onnx.TensorProto.FLOAT, [*sx[:rows], sw[1]])
        else:
            r2 = nodes[i2]
            if len(r2.output) != 1:
                continue
            y = r2.output[0]
        sv, sw, su, sy, sx = (shapes.get(k) for k in (v, w, u, y, x))
        if None in (sv, sw, su, sy, sx) or len(sv) != 2 or len(sw) != 2 or len(su) != 2 or len(sy) < 2:
            continue
        if sy[-1] != su[1] or math.prod(sy[:-1]) != sv[0] or sw[0] != sv[1]:
            continue
        if i2 is not None and sx[-1] == sv[1] and sy[:-1] not in (sx[:-1], sx[: _rows(sx, sv[0])]):
            continue  # the view back also splits the features (e.g. into heads): not the input's rows
        target = [*sy[:-1], sv[1]]
        new_nodes = []
        if sx == target:
            new_in = x
        else:
            new_in = f"{v}::canonical"
            const = f"{v}::canonical_shape"
            types.add_initializer(numpy_helper.from_array(np.array(target, dtype=np.int64), const))
            reshape = helper.make_node("Reshape", [x, const], [new_in], name=f"{r1.name}::canonical")
            reshape.metadata_props.extend(r1.metadata_props)
            new_nodes.append(reshape)
            types.add_value(new_in, dtypes.get(x) or onnx.TensorProto.FLOAT, target)
        new_mm = helper.make_node("MatMul", [new_in, w], [y], name=mm.name)
        new_mm.metadata_props.extend(mm.metadata_props)
        new_nodes.append(new_mm)
        if uses[u] > 1 or i2 is None:  # other readers of the 2-D product get it back as a view of y
            const = f"{u}::canonical_shape"
            types.add_initializer(numpy_helper.from_array(np.array(su, dtype=np.int64), const))
            flat = helper.make_node("Reshape", [y, const], [u], name=f"{mm.name}::canonical_flat")
            flat.metadata_props.extend(mm.metadata_props)
            new_nodes.append(flat)
        # at the MatMul's place: x and w are defined before it, y's readers come after it
        replace[j] = new_nodes
        if i2 is not None:
            drop.add(i2)
        if uses[v] == 1:  # the flattened input has other readers: its reshape stays
            drop.add(i1)
    if not replace:
        return 0
    out = []
    for i, n in enumerate(nodes):
        if i in replace:
            out.extend(replace[i])
        elif i not in drop:
            out.append(n)
    del g.node[:]
    g.node.extend(out)
    return len(replace)


def _rows(shape: list[int], rows: int) -> int:
    """The fewest leading axes of ``shape`` whose product is ``rows`` (len(shape) if none)."""
    return next((p for p in range(1, len(shape)) if math.prod(shape[:p]) == rows), len(shape))


def _intact_axis(before: list[int], after: list[int], k: int) -> int | None:
    """The axis of ``before`` that axis ``k`` of ``after`` (a row-major view of it) is, or None."""
    lead = math.prod(after[:k])
    for kk, size in enumerate(before):
        if size == after[k] and math.prod(before[:kk]) == lead:
            return kk
    return None


def _splits_through_views(model: onnx.ModelProto, types: _Types) -> int:
    """Rewrite splits through views of ``model`` in place (module docstring); returns how many.

    The new Split reads ``x`` and takes the views' output names; the old one stays while
    other nodes read its pieces."""
    g = model.graph
    shapes, dtypes = types.shapes, types.dtypes
    producer = {n.output[0]: n for n in g.node if _is_op(n, "Reshape") and len(n.output) == 1 and n.input}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for v in n.input:
            readers.setdefault(v, []).append(n)
    outputs = {o.name for o in g.output}
    dropped: set[int] = set()
    added: dict[int, onnx.NodeProto] = {}
    for node in g.node:
        if not _is_op(node, "Split") or not node.input or node.input[0] not in producer:
            continue
        x = producer[node.input[0]].input[0]
        sx, sv = shapes.get(x), shapes.get(node.input[0])
        pieces = [shapes.get(o) for o in node.output]
        if not sx or not sv or any(p is None for p in pieces):
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        axis = axis + len(sv) if axis < 0 else axis
        k = _intact_axis(sx, sv, axis)
        if k is None:
            continue
        targets = [[*sx[:k], p[axis], *sx[k + 1 :]] for p in pieces]
        backs = [
            [r for r in readers.get(o, []) if _is_op(r, "Reshape") and shapes.get(r.output[0]) == t]
            for o, t in zip(node.output, targets)
        ]
        if not any(backs):
            continue
        names = []
        for o, t, rs in zip(node.output, targets, backs):
            if rs:
                names.append(rs[0].output[0])
                dropped.add(id(rs[0]))
                for r in rs[1:]:
                    if r.output[0] in outputs:  # a graph output keeps its own (now redundant) view
                        continue
                    for reader in readers.get(r.output[0], []):
                        reader.input[:] = [rs[0].output[0] if i == r.output[0] else i for i in reader.input]
                    dropped.add(id(r))
            else:
                names.append(f"{o}.flat")
                types.add_value(names[-1], dtypes.get(o, onnx.TensorProto.UNDEFINED), t)
        split = helper.make_node("Split", [x, *node.input[1:]], names, name=f"{node.name}.flat")
        split.attribute.extend(a for a in node.attribute if a.name != "axis")
        split.attribute.append(helper.make_attribute("axis", k))
        split.metadata_props.extend(node.metadata_props)
        added[id(node)] = split
        if all(o not in outputs and all(id(r) in dropped for r in readers.get(o, [])) for o in node.output):
            dropped.add(id(node))
    if not added:
        return 0
    kept = []
    for n in g.node:
        if id(n) in added:
            kept.append(added[id(n)])
        if id(n) not in dropped:
            kept.append(n)
    del g.node[:]
    g.node.extend(kept)
    return len(added)


_PER_AXIS = ("Softmax", "LogSoftmax")  # the op along one axis, each slice along it alone


def _axis_through_view(view: onnx.NodeProto, axis: int, types: _Types) -> int | None:
    """The axis of ``view``'s input that axis ``axis`` of its output is, when ``view`` is a
    Transpose or a Reshape that leaves that axis intact (same size, same elements before it)."""
    if _is_op(view, "Transpose"):
        perm = _perm(view, types)
        return perm[axis] if perm is not None and axis < len(perm) else None
    before, after = types.shapes.get(view.input[0]), types.shapes.get(view.output[0])
    if not _is_op(view, "Reshape") or not before or not after:
        return None
    return _intact_axis(before, after, axis)


def _undoes(back: onnx.NodeProto, view: onnx.NodeProto, types: _Types, producer: dict[str, onnx.NodeProto]) -> bool:
    """``back`` restores the layout ``view`` changed: the inverse permutation, or a Reshape to
    the shape of ``view``'s input (static, or read from it by a whole ``Shape``)."""
    if _is_op(view, "Transpose") and _is_op(back, "Transpose"):
        p, q = _perm(view, types), _perm(back, types)
        return p is not None and q is not None and len(p) == len(q) and [p[j] for j in q] == list(range(len(p)))
    if _is_op(view, "Reshape") and _is_op(back, "Reshape"):
        shape = types.shapes.get(view.input[0])
        if shape is not None and types.shapes.get(back.output[0]) == shape:
            return True
        of = producer.get(back.input[1]) if len(back.input) > 1 else None
        return of is not None and _is_op(of, "Shape") and of.input[0] == view.input[0] and not of.attribute
    return False


def _per_axis_ops_through_views(model: onnx.ModelProto, types: _Types) -> int:
    """Rewrite per-axis ops through views of ``model`` in place (module docstring), repeated
    while one is found (a Reshape around a Transpose around the op takes two); returns how
    many. The new op takes the back view's output name; the views left unread are dropped."""
    g = model.graph
    outputs = {o.name for o in g.output}
    done = 0
    while True:
        producer = {n.output[0]: n for n in g.node if len(n.output) == 1}
        readers: dict[str, list[onnx.NodeProto]] = {}
        for n in g.node:
            for v in n.input:
                readers.setdefault(v, []).append(n)
        replaced: dict[int, onnx.NodeProto] = {}
        left: dict[str, onnx.NodeProto] = {}  # the old op and its view, dropped when unread
        for node in g.node:
            if not any(_is_op(node, op) for op in _PER_AXIS) or len(node.output) != 1 or not node.input:
                continue
            view = producer.get(node.input[0])
            back = readers.get(node.output[0], [])
            if view is None or len(back) != 1 or node.output[0] in outputs:
                continue
            if not _undoes(back[0], view, types, producer):
                continue
            rank = len(types.shapes.get(node.input[0]) or [])
            axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
            k = _axis_through_view(view, axis + rank if axis < 0 else axis, types) if rank else None
            if k is None or id(back[0]) in replaced:
                continue
            op = helper.make_node(node.op_type, [view.input[0]], [back[0].output[0]], name=node.name, axis=k)
            op.metadata_props.extend(node.metadata_props)
            replaced[id(back[0])] = op
            feeding = [producer.get(v) for v in [*view.input[1:], *back[0].input[1:]]]
            left.update({n.output[0]: n for n in [node, view, *feeding] if n is not None})
            if back[0].output[0] not in types.shapes and view.input[0] in types.shapes:
                types.declare(back[0].output[0], types.shapes[view.input[0]], types.dtypes.get(view.input[0], 0))
        if not replaced:
            return done
        kept = [replaced.get(id(n), n) for n in g.node]
        del g.node[:]
        g.node.extend(kept)
        while True:  # the old op, then the views it read, then their shape inputs
            before = len(g.node)
            _drop_unread(g, left)
            if len(g.node) == before:
                break
        done += len(replaced)


_MAX_LINEAR_ROUNDS = 8  # a chain of k flattened linears folded into each other takes k rounds


def canonicalize(model: onnx.ModelProto, expand: frozenset[tuple[str, str]] = frozenset()) -> onnx.ModelProto:
    """A rewritten copy of ``model`` in canonical form (see the module docstring); the op types in
    ``expand`` (domain, op type) are first replaced by their function bodies
    (:mod:`analyzer.rewrite.functions`)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    types = _Types(out)
    if expand:
        expand_calls(out, set(expand), types)
    cancel_divided_factors(out, types.add_initializer)  # sinks become Identity: dropped next
    _drop_noops(out, types)
    if _fold_reshape_chains(out):
        _drop_noops(out, types)
    _fold_transpose_chains(out, types)
    _per_axis_ops_through_views(out, types)
    _splits_through_views(out, types)  # first: the views it removes would otherwise look like a flattened linear's
    _views_before_bias(out, types)  # before: it makes the product a flattened linear
    # again while something was rewritten: a product read flat by the next linear becomes a view
    # of the 3-D result, which makes that linear a flattened one too (a chain of linears whose
    # views were folded on one side and not on the other must end in the same form on both)
    for _ in range(_MAX_LINEAR_ROUNDS):
        if not _flattened_linears(out, types):
            break
    return out


def canonical_forms(
    models: Sequence[onnx.ModelProto], same: Sequence[int], expand: frozenset[tuple[str, str]] = frozenset()
) -> list[onnx.ModelProto]:
    """:func:`canonicalize` each model (``expand``: op types replaced by their function bodies);
    a model whose graph is stored like an earlier one's reuses that one's rewrite: the model
    itself when the rewrite changed nothing, else a copy with the rewritten graph."""
    out: list[onnx.ModelProto] = []
    unchanged: dict[int, bool] = {}
    for i, model in enumerate(models):
        j = same[i] if same else i
        if j == i:
            out.append(canonicalize(model, expand))
            continue
        if model is models[j]:  # the same model object (rank files differing only in metadata)
            out.append(out[j])
            continue
        if j not in unchanged:
            unchanged[j] = out[j].graph == models[j].graph
        out.append(model if unchanged[j] else with_graph(model, out[j].graph))
    return out
