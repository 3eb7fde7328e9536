"""Random inputs for the sequential graph and their per-rank derivation.

Graph inputs that are not initializers get random values: floats ~ N(0, 1) in the declared
dtype, bools uniform, integers uniform in a valid range — ``[0, data.shape[axis])`` when the
input feeds the indices of a ``Gather`` / ``GatherElements`` in the sequential graph
(possibly through Cast / Reshape / Unsqueeze / ...; or column k of ``GatherND`` index tuples
made by a ``Concat`` of one-wide columns: ``[0, data.shape[k])``; or the data of a ``ScatterND``,
whose output keeps the other elements), else ``int_ranges[name]`` or ``[0, 8)``.
An explicit ``int_ranges`` entry wins over the Gather bound. An integer input compared with an
integer constant by ``Equal`` (possibly through Pad / Slice / Reshape / ...: a loss's
``ignore_index``, -100 for labels) holds that constant in about a quarter of its elements (at
least one, and not all, when it has two or more), so
that the paths it selects run and counts of the other elements differ between rows; not an
input that indexes a Gather directly (token ids compared with a padding index stay valid ids).
The ``ignore_index`` of a ``SoftmaxCrossEntropyLoss`` / ``NegativeLogLikelihoodLoss`` that reads
the input as its labels counts as such a constant. Indices that reach a Gather / GatherElements /
ScatterElements through the value branch of a ``Where`` (labels masked where they equal the
ignore index) or the labels of those losses take the bound of that op's data axis and keep their
ignore-index elements. Bugs hide at the edges of a rank's piece: with a world size N > 1, an
index input bounded by V with V divisible by N holds ids at the rank boundaries of a
vocab-parallel table (0, V-1 and k*V/N - 1, k*V/N for k = 1..N-1; a random subset of them when
they are more than half its elements).
A float input that reaches a ``Sqrt`` through ``Mul``, ``Add``, a dividend of ``Div`` and ops
that keep values (an optimizer's second moment: AdamW's ``exp_avg_sq`` is scaled, added to the
squared gradient and square-rooted) holds ``|N(0, 1)|``: a negative second moment is outside
Sqrt's domain (NaN on both sides would hide any difference there) and cancels against the
squared gradient, which turns rounding into large errors.

Symbolic dimensions (``dim_param``) take the value given in ``dims``, else
:data:`DEFAULT_DIM`; a ``dim_param`` that is an arithmetic expression of other symbols
(torch.export writes ``s0 + s1``) is evaluated.

Rank inputs come from the sequential ones through the input relations
(:func:`analyzer.witness.layouts.distribute`).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper

from analyzer.layout import Layout
from analyzer.witness.errors import SimulationError
from analyzer.witness.layouts import distribute

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_INT_RANGE",
    "feed_inputs",
    "guess_input_relations",
    "random_inputs",
    "rank_inputs",
    "resolve_dims",
]

#: value of a symbolic dimension not given in ``dims``
DEFAULT_DIM = 4
#: ``[low, high)`` of an integer input that feeds no Gather and has no ``int_ranges`` entry
DEFAULT_INT_RANGE = (0, 8)

# ops whose input 0 reaches output 0 with the same values (indices keep their range)
_VALUE_PRESERVING = {
    "Cast",
    "Identity",
    "Reshape",
    "Squeeze",
    "Unsqueeze",
    "Flatten",
    "Expand",
    "Transpose",
    "Tile",
}
# op -> (data, indices, default axis); a loss's labels index its class axis 1
_INDEX_CONSUMERS = {
    "Gather": (0, 1, 0),
    "GatherElements": (0, 1, 0),
    "ScatterElements": (0, 1, 0),
    "SoftmaxCrossEntropyLoss": (0, 1, 1),
    "NegativeLogLikelihoodLoss": (0, 1, 1),
}
_LOSSES = {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}  # ignore_index is an attribute
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def feed_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that are not initializers (the values a caller must feed)."""
    inits = {t.name for t in model.graph.initializer}
    inits |= {t.values.name for t in model.graph.sparse_initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def _eval_dim(expr: str, known: Mapping[str, int]) -> int | None:
    """Evaluate ``s0 + 2*s1`` style dim_params with known symbols; None if impossible."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return int(known.get(node.id, DEFAULT_DIM))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(expr)

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError):
        return None


def resolve_dims(
    model: onnx.ModelProto, dims: Mapping[str, int] | None = None
) -> dict[str, int]:
    """Concrete values of the symbolic dimensions of a model's fed inputs.

    Args:
        model: the model whose fed inputs are inspected.
        dims: explicit values by ``dim_param`` name (win over everything).

    Returns:
        ``{dim_param: value}`` for every ``dim_param`` of the fed inputs.
    """
    known = dict(dims or {})
    params = [
        d.dim_param
        for vi in feed_inputs(model)
        for d in vi.type.tensor_type.shape.dim
        if d.dim_param
    ]
    for p in params:  # plain symbols first, expressions may refer to them
        if p not in known and p.isidentifier():
            known[p] = DEFAULT_DIM
    for p in params:
        if p not in known:
            value = _eval_dim(p, known)
            known[p] = value if value is not None and value >= 0 else DEFAULT_DIM
    return known


def _input_shape(
    vi: onnx.ValueInfoProto, dims: Mapping[str, int], where: str
) -> tuple[int, ...]:
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        raise SimulationError(
            f"{where}: input {vi.name!r} is not a tensor; cannot make it up"
        )
    if not tt.HasField("shape"):
        raise SimulationError(
            f"{where}: input {vi.name!r} has no shape; cannot make it up"
        )
    shape = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            shape.append(int(d.dim_value))
        elif d.dim_param:
            shape.append(int(dims[d.dim_param]))
        else:
            shape.append(DEFAULT_DIM)
    return tuple(shape)


def _shapes_of(
    infos: list[onnx.ValueInfoProto], dims: Mapping[str, int]
) -> dict[str, list[int | None]]:
    shapes: dict[str, list[int | None]] = {}
    for vi in infos:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            shapes[vi.name] = [
                int(d.dim_value)
                if d.HasField("dim_value")
                else (dims.get(d.dim_param) if d.dim_param else None)
                for d in vi.type.tensor_type.shape.dim
            ]
    return shapes


def _inferred_infos(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Value infos from ONNX shape inference on a weightless copy of the model."""
    light = onnx.ModelProto()
    light.CopyFrom(model)
    del light.graph.initializer[:]
    known = {vi.name for vi in light.graph.input}
    for t in model.graph.initializer:
        if t.name not in known:
            light.graph.input.append(
                helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            )
    try:
        graph = onnx.shape_inference.infer_shapes(light).graph
    except Exception:  # noqa: BLE001 - shape inference is only a convenience here
        return []
    return [*graph.value_info, *graph.input, *graph.output]


def _index_uses(model: onnx.ModelProto) -> dict[str, list[tuple[str, int, bool]]]:
    """Fed input -> ``(data value, axis, masked)`` of the ops whose indices it becomes
    (:data:`_INDEX_CONSUMERS`, through :data:`_VALUE_PRESERVING` ops, ``Pad`` and ``Slice``);
    ``masked`` when the path runs through the value branch of a
    ``Where`` (elements replaced where a mask says) or ends at a loss that skips its
    ``ignore_index``."""
    consumers = _consumers(model)
    columns = _gathernd_columns(model, consumers)
    uses: dict[str, list[tuple[str, int, bool]]] = {}
    for vi in feed_inputs(model):
        todo, seen = [(vi.name, False)], set()
        while todo:
            name, masked = todo.pop()
            if (name, masked) in seen:
                continue
            seen.add((name, masked))
            for node, idx in consumers.get(name, []):
                if idx == 0 and (node.op_type in _VALUE_PRESERVING or node.op_type in ("Pad", "Slice")):
                    todo.extend((o, masked) for o in node.output[:1])
                elif node.op_type == "Where" and idx in (1, 2):
                    todo.extend((o, True) for o in node.output[:1])
                elif node.op_type == "ScatterND" and idx == 0:  # x[mask] = c: elements replaced
                    todo.extend((o, True) for o in node.output[:1])
                elif (node.name, idx) in columns:  # column idx of GatherND index tuples
                    uses.setdefault(vi.name, []).append((columns[node.name, idx], idx, masked))
                elif node.op_type in _INDEX_CONSUMERS:
                    data_idx, ind_idx, default = _INDEX_CONSUMERS[node.op_type]
                    if idx == ind_idx:
                        axis = next((a.i for a in node.attribute if a.name == "axis"), default)
                        loss = node.op_type in _LOSSES
                        uses.setdefault(vi.name, []).append((node.input[data_idx], axis, masked or loss))
    return uses


def _gathernd_columns(model: onnx.ModelProto, consumers) -> dict[tuple[str, int], str]:
    """``(Concat node name, input k) -> GatherND data`` for a Concat of one-wide columns on its
    last axis that makes the index tuples of a ``GatherND`` (batch_dims 0): its input k indexes
    the data's axis k (advanced indexing ``w[arange(n), ids]``: Megatron-core's
    vocab_parallel_cross_entropy picks the target logits so)."""
    shapes = _shapes_of([*model.graph.value_info, *model.graph.input], {})
    shapes.update({t.name: [int(x) for x in t.dims] for t in model.graph.initializer})
    found: dict[tuple[str, int], str] = {}
    for node in model.graph.node:
        if node.op_type != "Concat" or node.domain not in ("", "ai.onnx") or not node.name:
            continue
        ins = [shapes.get(x) for x in node.input]
        axis = next((a.i for a in node.attribute if a.name == "axis"), None)
        if any(not sh or sh[-1] != 1 for sh in ins) or axis not in (-1, len(ins[0]) - 1):
            continue
        for reader, pos in consumers.get(node.output[0], []):
            batch = next((a.i for a in reader.attribute if a.name == "batch_dims"), 0)
            if reader.op_type == "GatherND" and pos == 1 and batch == 0:
                found.update({(node.name, k): reader.input[0] for k in range(len(node.input))})
    return found


def _dim(shape: list[int | None] | None, axis: int) -> int | None:
    if shape is None or not -len(shape) <= axis < len(shape):
        return None
    return shape[axis]


def _gather_bounds(model: onnx.ModelProto, dims: Mapping[str, int]) -> dict[str, tuple[int, bool]]:
    """For each fed input that reaches Gather indices: the smallest valid bound, and whether
    some path reaches the indices unmasked (see :func:`_index_uses`).

    Data shapes come from initializers and declared value infos; ONNX shape inference
    (on a weightless copy) runs only when one is missing.
    """
    uses = _index_uses(model)
    if not uses:
        return {}
    graph = model.graph
    shapes = _shapes_of([*graph.value_info, *graph.input], dims)
    shapes.update({t.name: [int(x) for x in t.dims] for t in graph.initializer})
    pairs_all = [pair for pairs in uses.values() for pair in pairs]
    if any(_dim(shapes.get(data), axis) is None for data, axis, _ in pairs_all):
        shapes = {**_shapes_of(_inferred_infos(model), dims), **shapes}
    bounds: dict[str, tuple[int, bool]] = {}
    for name, pairs in uses.items():
        found = [(d, masked) for d, masked in ((_dim(shapes.get(data), axis), m) for data, axis, m in pairs) if d]
        if found:
            bounds[name] = (min(d for d, _ in found), any(not m for _, m in found))
    return bounds


def _boundary_ids(bound: int, world_size: int) -> list[int]:
    """Ids at the edges of the rank pieces of a table of ``bound`` rows split over
    ``world_size`` ranks: 0, bound - 1, and the last and first id of each cut."""
    if world_size <= 1 or bound % world_size:
        return []
    step = bound // world_size
    cuts = [i for k in range(1, world_size) for i in (k * step - 1, k * step)]
    return sorted({0, bound - 1, *cuts})


#: normal draws made per block by :func:`_normal`
_DRAW_BLOCK = 1 << 22


def _normal(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """``rng.standard_normal(shape).astype(dtype)``, drawn in blocks into the result: the same
    values and the same generator state afterwards (the stream does not depend on how the
    draws are split), without a float64 array of the whole input (2 GB for an LM head's
    2048 x 128256 float16 weights)."""
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, _DRAW_BLOCK):
        stop = min(start + _DRAW_BLOCK, flat.size)
        flat[start:stop] = rng.standard_normal(stop - start)
    return out


def random_inputs(
    model: onnx.ModelProto,
    rng: np.random.Generator,
    *,
    dims: Mapping[str, int] | None = None,
    int_ranges: Mapping[str, tuple[int, int]] | None = None,
    world_size: int = 1,
) -> dict[str, np.ndarray]:
    """Random values for the fed inputs of the sequential model (rules in the module docstring).

    Args:
        model: the sequential model.
        rng: the random generator (inputs are drawn in graph input order).
        dims: values of symbolic dimensions (see :func:`resolve_dims`).
        int_ranges: ``{name: (low, high)}`` half-open ranges of integer inputs.
        world_size: the number of ranks N whose piece boundaries index inputs hold.

    Returns:
        ``{input name: array}``.

    Raises:
        SimulationError: an input without a tensor shape, an unsupported dtype, or an
            empty integer range.
    """
    resolved = resolve_dims(model, dims)
    bounds = _gather_bounds(model, resolved)
    ranges = dict(int_ranges or {})
    feeds: dict[str, np.ndarray] = {}
    for vi in feed_inputs(model):
        shape = _input_shape(vi, resolved, "seq")
        elem = vi.type.tensor_type.elem_type
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
        except (KeyError, TypeError, ValueError) as exc:
            raise SimulationError(
                f"seq: input {vi.name!r} has unsupported dtype {elem}"
            ) from exc
        if dtype == np.bool_:
            feeds[vi.name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            if vi.name in ranges:
                low, high = ranges[vi.name]
            elif vi.name in bounds:
                low, high = 0, bounds[vi.name][0]
            else:
                low, high = DEFAULT_INT_RANGE
            if high <= low:
                raise SimulationError(
                    f"seq: empty integer range [{low}, {high}) for {vi.name!r}"
                )
            feeds[vi.name] = rng.integers(low, high, size=shape).astype(dtype)
        elif dtype.kind in "fcV" or dtype.name.startswith(("float", "bfloat")):
            feeds[vi.name] = _normal(rng, shape, dtype)
        else:
            raise SimulationError(
                f"seq: input {vi.name!r} has unsupported dtype {dtype}"
            )
    for name in _sqrt_operands(model):  # same draws, so the other inputs' values do not change
        if name in feeds:
            feeds[name] = np.abs(feeds[name])
    # drawn after every input, so that the other inputs' values do not change; an input that
    # indexes a Gather directly (token ids) keeps its valid range
    sentinel = {}
    for name, values in _sentinels(model).items():
        if name in feeds and name not in ranges and not bounds.get(name, (0, False))[1]:
            arr = feeds[name]
            pick = rng.random(arr.shape) < 0.25
            if arr.size > 1 and pick.all() == pick.any():  # all or none: one element the other way
                pick.flat[rng.integers(arr.size)] = not pick.flat[0]
            sentinel[name] = np.asarray(values[0], dtype=arr.dtype)
            feeds[name] = np.where(pick, sentinel[name], arr)
    for name, (bound, _) in bounds.items():
        edges = _boundary_ids(bound, world_size)
        if name not in feeds or name in ranges or not edges:
            continue
        arr = feeds[name].copy()
        free = np.flatnonzero(arr != sentinel[name]) if name in sentinel else np.arange(arr.size)
        if len(edges) > free.size // 2:
            edges = sorted(rng.choice(edges, size=free.size // 2, replace=False).tolist())
        arr.flat[rng.choice(free, size=len(edges), replace=False)] = edges
        feeds[name] = arr
    return feeds


def _int_constants(model: onnx.ModelProto) -> dict[str, int]:
    """Single-element integer initializers and ``Constant`` outputs, by value name."""
    from onnx import numpy_helper

    out: dict[str, int] = {}
    tensors = [(t.name, t) for t in model.graph.initializer]
    tensors += [
        (node.output[0], a.t)
        for node in model.graph.node
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx")
        for a in node.attribute
        if a.name == "value"
    ]
    for name, tensor in tensors:
        if tensor.data_location == onnx.TensorProto.EXTERNAL or math.prod(tensor.dims) != 1:
            continue
        try:
            arr = numpy_helper.to_array(tensor)
        except (ValueError, TypeError):
            continue
        if np.issubdtype(arr.dtype, np.integer):
            out[name] = int(arr.reshape(-1)[0])
    return out


def _sentinels(model: onnx.ModelProto) -> dict[str, list[int]]:
    """Fed integer input -> the integer constants it is compared with by ``Equal``, or the
    ``ignore_index`` of a loss reading it as labels, following ops that keep its values
    (:data:`_VALUE_PRESERVING`, ``Pad``, ``Slice``) through input 0."""
    consts = _int_constants(model)
    if not consts and not any(n.op_type in _LOSSES for n in model.graph.node):
        return {}
    consumers = _consumers(model)
    out: dict[str, list[int]] = {}
    for vi in feed_inputs(model):
        if not np.issubdtype(np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)), np.integer):
            continue
        todo, seen, found = [vi.name], set(), []
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node, idx in consumers.get(name, []):
                if idx == 0 and (node.op_type in _VALUE_PRESERVING or node.op_type in ("Pad", "Slice")):
                    todo.extend(node.output[:1])
                elif node.op_type == "Equal" and len(node.input) == 2 and node.input[1 - idx] in consts:
                    found.append(consts[node.input[1 - idx]])
                elif node.op_type in _LOSSES and idx == 1:
                    found.extend(a.i for a in node.attribute if a.name == "ignore_index")
        if found:
            out[vi.name] = sorted(set(found))
    return out


# op -> the input positions through which a nonnegative operand of Sqrt stays one (for nonnegative
# other operands): a scale, a sum with the squared gradient, a division by a bias correction
_SQRT_OPERAND_PATH = {"Mul": (0, 1), "Add": (0, 1), "Div": (0,), "Slice": (0,), "Pad": (0,)}


def _sqrt_operands(model: onnx.ModelProto) -> list[str]:
    """Fed float inputs that reach input 0 of a ``Sqrt`` through :data:`_SQRT_OPERAND_PATH` and
    :data:`_VALUE_PRESERVING` ops (input 0 of the latter), not through a square ``Mul(g, g)``
    (nonnegative whatever the signs of g)."""
    consumers = _consumers(model)
    out = []
    for vi in feed_inputs(model):
        if not np.issubdtype(np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)), np.floating):
            continue
        todo, seen = [vi.name], set()
        while todo and vi.name not in out:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node, idx in consumers.get(name, []):
                if node.op_type == "Sqrt":
                    out.append(vi.name)
                    break
                square = node.op_type == "Mul" and node.input[0] == node.input[1]  # nonnegative anyway
                if square:
                    continue
                if idx in _SQRT_OPERAND_PATH.get(node.op_type, ()) or (idx == 0 and node.op_type in _VALUE_PRESERVING):
                    todo.extend(node.output[:1])
    return out


def _static_mismatch(shape: Sequence[int], vi: onnx.ValueInfoProto) -> bool:
    declared = vi.type.tensor_type.shape.dim
    if not vi.type.tensor_type.HasField("shape"):
        return False
    if len(declared) != len(shape):
        return True
    return any(
        d.HasField("dim_value") and d.dim_value != s for d, s in zip(declared, shape)
    )


def rank_inputs(
    seq_feeds: Mapping[str, np.ndarray],
    ranks: Sequence[onnx.ModelProto],
    input_relations: Mapping[str, Layout],
    rng: np.random.Generator,
    aliases: Mapping[str, tuple[str, Layout]] | None = None,
) -> list[dict[str, np.ndarray]]:
    """Derive every rank's fed inputs from the sequential ones.

    Args:
        seq_feeds: the sequential inputs by name.
        ranks: the rank models (rank order).
        input_relations: layout by input name; names that are initializers of a rank
            (or absent from it) are ignored for that rank.
        rng: randomness for Partial relations.
        aliases: ``{rank input name: (sequential input name, layout)}`` for rank inputs named
            otherwise than their sequential value (a micro-batch fed as an input of its own:
            the spec's ``micro_batches``, ``Shard(axis, micro=(M, k))``).

    Returns:
        One ``{input name: array}`` per rank. A related input gets its piece of
        ``distribute(layout, seq value, N)``; an unrelated input with the same name and
        shape as a sequential input gets the same array.

    Raises:
        SimulationError: a rank input with no sequential counterpart, a relation that
            does not apply, or a derived shape that contradicts the declared static shape.
    """
    n = len(ranks)
    pieces: dict[str, list[np.ndarray]] = {}
    feeds: list[dict[str, np.ndarray]] = []
    for r, model in enumerate(ranks):
        mine: dict[str, np.ndarray] = {}
        for vi in feed_inputs(model):
            name = vi.name
            if aliases and name in aliases and aliases[name][0] in seq_feeds:
                source, layout = aliases[name]
                key = f"{source} as {name}"
                if key not in pieces:
                    try:
                        pieces[key] = distribute(layout, seq_feeds[source], n, rng=rng)
                    except ValueError as exc:
                        raise SimulationError(f"input {name!r}: cannot apply {layout} of {source!r}: {exc}") from exc
                if _static_mismatch(pieces[key][r].shape, vi):
                    raise SimulationError(
                        f"rank {r}: input {name!r} under {layout} of {source!r} has shape "
                        f"{list(pieces[key][r].shape)}, which contradicts its declared shape"
                    )
                mine[name] = pieces[key][r]
                continue
            if name not in seq_feeds:
                raise SimulationError(
                    f"rank {r}: input {name!r} is not an input of the sequential graph"
                )
            layout = input_relations.get(name)
            if layout is None:
                value = seq_feeds[name]
                if _static_mismatch(value.shape, vi):
                    raise SimulationError(
                        f"rank {r}: input {name!r} has no relation and its declared shape "
                        f"differs from the sequential {list(value.shape)}"
                    )
                mine[name] = value
                continue
            if name not in pieces:
                try:
                    pieces[name] = distribute(layout, seq_feeds[name], n, rng=rng)
                except ValueError as exc:
                    raise SimulationError(
                        f"input {name!r}: cannot apply {layout} over {n} ranks: {exc}"
                    ) from exc
            value = pieces[name][r]
            if _static_mismatch(value.shape, vi):
                raise SimulationError(
                    f"rank {r}: input {name!r} under {layout} has shape {list(value.shape)}, "
                    f"which contradicts its declared shape"
                )
            mine[name] = value
        feeds.append(mine)
    return feeds


def _declared(vi: onnx.ValueInfoProto) -> list[int | str]:
    return [
        int(d.dim_value) if d.HasField("dim_value") else d.dim_param
        for d in vi.type.tensor_type.shape.dim
    ]


def guess_input_relations(
    seq: onnx.ModelProto, ranks: Sequence[onnx.ModelProto]
) -> dict[str, Layout]:
    """Input relations from declared shapes alone (a default for real exports).

    Args:
        seq: the sequential model.
        ranks: the rank models.

    Returns:
        For each fed input of rank 0 that the sequential graph also feeds: ``Replicate``
        when the declared shapes are equal, ``Shard(axis)`` when exactly one static axis is
        ``N`` times smaller on the rank; other inputs are left out.
    """
    seq_shapes = {vi.name: _declared(vi) for vi in feed_inputs(seq)}
    n = len(ranks)
    relations: dict[str, Layout] = {}
    for vi in feed_inputs(ranks[0]) if ranks else []:
        s, r = seq_shapes.get(vi.name), _declared(vi)
        if s is None or len(s) != len(r):
            continue
        if s == r:
            relations[vi.name] = Layout("Replicate")
            continue
        diff = [i for i, (a, b) in enumerate(zip(s, r)) if a != b]
        if len(diff) == 1:
            a, b = s[diff[0]], r[diff[0]]
            if isinstance(a, int) and isinstance(b, int) and a == n * b:
                relations[vi.name] = Layout("Shard", axis=diff[0])
    return relations


def _consumers(model: onnx.ModelProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    """Value name -> the standard-domain nodes reading it, with the input position."""
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in model.graph.node:
        if node.domain in ("", "ai.onnx"):
            for i, name in enumerate(node.input):
                consumers.setdefault(name, []).append((node, i))
    return consumers
