"""HLO instructions -> ONNX nodes, one handler per ``kind`` of ``ops.yaml``.

Semantics: XLA's operation semantics (https://openxla.org/xla/operation_semantics); ONNX's
operator pages. Decisions worth knowing:

- ``broadcast`` is not written where it is read by elementwise ops: its operand, with size-1
  axes where the result broadcasts (and transposed when ``dimensions`` is not increasing),
  meets the other operands through ONNX's numpy broadcasting, as a torch export writes
  ``cos[S, 1, D] * q[S, H, D]``. Read by anything else it is ``Expand``.
- ``dot`` with any dimension numbers: each side transposed to (batch, free, contracting) /
  (batch, contracting, free), flattened to one free and one contracting axis where there are
  several, ``MatMul``, and viewed back to (batch, lhs free, rhs free), XLA's result order.
- ``reduce`` by its ``to_apply`` computation: a computation whose ROOT is ``add``/``maximum``/
  ``minimum``/``multiply`` of its two parameters is ``ReduceSum``/... over ``dimensions``; an
  init value other than the reduction's identity is combined with the result.
- ``gather``: the form that takes whole slices along one axis (``start_index_map`` = the
  collapsed axis, full slice sizes elsewhere) is ``Gather`` on that axis (then a Transpose
  when the batch axes are not where ONNX puts them). XLA clamps out-of-range indices; ONNX
  leaves them undefined.
- collectives: ``all-reduce`` -> ``com.microsoft::AllReduce`` (``reduction`` from
  ``to_apply``), ``all-gather`` / ``reduce-scatter`` on ``dimensions`` -> ``AllGather`` /
  ``ReduceScatter`` with ``axis``, ``all-to-all`` (split and concat on one dimension) ->
  ``AllToAll`` on axis 0 (transposed there and back); ``group_size`` = the size of this rank's
  replica group (``{}``: every rank). With ``world_size=1`` they are the identity.
- ``partition-id`` / ``replica-id`` are the rank, a constant (``u32``), so what they compute
  folds (:mod:`analyzer.importers.hlo.fold`).
- ``AwsNeuronRmsNorm(x, w, eps)``: ``x / sqrt(mean(x^2, dim) + eps) * w``, ``dim`` from
  ``backend_config``, in x's type, converted to the result's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analyzer.importers.fx.emit import ONNX_DTYPES
from analyzer.importers.fx.parse import TensorType
from analyzer.importers.hlo import attrs as A
from analyzer.importers.hlo.context import Const, Ctx, Lazy

__all__ = ["HANDLERS"]

_FLOAT = ("f16", "bf16", "f32", "f64")


def _is_float(dtype: str) -> bool:
    return dtype in _FLOAT


# --- elementwise ------------------------------------------------------------------------


def _implicit(cx: Ctx, shape: tuple) -> list[str]:
    """The operands as ONNX names for an op with numpy broadcasting to ``shape``: broadcasts
    stay their base where the operands still broadcast to ``shape``."""
    args = list(cx.args)
    reduced = [a.base if isinstance(a, Lazy) else a for a in args]

    def fits() -> bool:
        try:
            return tuple(np.broadcast_shapes(*(tuple(cx.type_of(v).shape) for v in reduced))) == tuple(shape)
        except ValueError:
            return False

    for k, a in enumerate(args):
        if fits():
            break
        if isinstance(a, Lazy):
            reduced[k] = a  # written out in full (Expand)
    return [cx.imp.write(v) for v in reduced]


def _elementwise(cx: Ctx) -> str:
    out = cx.type
    op = cx.spec["onnx"]
    if "int_onnx" in cx.spec and out.dtype != "b8" and not _is_float(out.dtype):
        op = cx.spec["int_onnx"]
    return cx.op(op, _implicit(cx, out.shape), out, **cx.spec.get("attrs", {}))


def _compare(cx: Ctx) -> str:
    direction = cx.attr("direction", A.scalar)
    chain = cx.imp.table["directions"].get(direction)
    if chain is None:
        raise cx.fail(f"unsupported direction {direction}")
    inputs = _implicit(cx, cx.type.shape)
    if len(chain) == 1:
        return cx.op(chain[0], inputs, cx.type)
    eq = cx.op(chain[0], inputs, cx.type, hint="eq")
    return cx.op(chain[1], [eq], cx.type)


def _clamp(cx: Ctx) -> str:
    lo, x, hi = (cx.value(k) for k in range(3))
    upper = cx.op("Min", [x, hi], cx.type, hint="min")
    return cx.op("Max", [upper, lo], cx.type)


def _unary(cx: Ctx) -> str:
    out = cx.type
    chain = cx.spec["onnx"]
    if "int_onnx" in cx.spec and out.dtype != "b8" and not _is_float(out.dtype):
        chain = cx.spec["int_onnx"]
    x = cx.value(0)
    for op in chain[:-1]:
        x = cx.op(op, [x], out, hint=op.lower())
    return cx.op(chain[-1], [x], out)


def _convert(cx: Ctx) -> str:
    return cx.op("Cast", [cx.value(0)], cx.type, to=ONNX_DTYPES[cx.type.dtype])


# --- shapes -----------------------------------------------------------------------------


def _reshape(cx: Ctx) -> str:
    x = cx.value(0)
    if int(np.prod(cx.type_of(x).shape)) != int(np.prod(cx.type.shape)):
        raise cx.fail(f"cannot reshape {cx.type_of(x)} to {cx.type}")
    return cx.op("Reshape", [x, cx.ints(cx.type.shape, "shape")], cx.type)


def _transpose(cx: Ctx) -> str:
    perm = cx.attr("dimensions", A.int_list)
    if sorted(perm) != list(range(len(cx.type.shape))):
        raise cx.fail(f"dimensions {perm} are not a permutation")
    return cx.op("Transpose", [cx.value(0)], cx.type, perm=perm)


def _broadcast(cx: Ctx):
    out = cx.type
    dims = cx.attr("dimensions", A.int_list)
    x = cx.args[0]
    xt = cx.type_of(x)
    if len(dims) != len(xt.shape) or any(not 0 <= d < len(out.shape) for d in dims) or len(set(dims)) != len(dims):
        raise cx.fail(f"dimensions {dims} do not fit operand {xt} and result {out}")
    for d, size in zip(dims, xt.shape):
        if size not in (1, out.shape[d]):
            raise cx.fail(f"operand axis of size {size} cannot broadcast to {out.shape[d]}")
    order = sorted(range(len(dims)), key=lambda k: dims[k])  # operand axes in result order
    base_shape = [1] * len(out.shape)
    for d, size in zip(dims, xt.shape):
        base_shape[d] = size
    if isinstance(x, Lazy):
        x = cx.imp.write(x)
    if isinstance(x, Const):
        arr = x.array.transpose(order).reshape(base_shape)
        first = next((i for i, s in enumerate(base_shape) if s != 1), len(base_shape))
        base = Const(arr.reshape(base_shape[first:]), x.dtype, f"{cx.name}/base")
    else:
        base = cx.transpose(x, order, "perm")
        right_aligned = sorted(dims) == list(range(len(out.shape) - len(dims), len(out.shape)))
        if not right_aligned:
            base = cx.reshape(base, base_shape, "base")
    if tuple(cx.type_of(base).shape) == tuple(out.shape):
        return base
    return Lazy(base, out, cx.name, cx.source)


def _slice_node(cx: Ctx, x: str, ranges: list[tuple[int, int, int]]) -> str:
    shape = cx.type_of(x).shape
    if len(ranges) != len(shape):
        raise cx.fail(f"{len(ranges)} ranges for an operand of rank {len(shape)}")
    axes = [k for k, (a, b, s) in enumerate(ranges) if (a, b, s) != (0, shape[k], 1)]
    if not axes:
        return cx.op("Identity", [x], cx.type)
    starts = [ranges[k][0] for k in axes]
    ends = [ranges[k][1] for k in axes]
    steps = [ranges[k][2] for k in axes]
    inputs = [x, cx.ints(starts, "starts"), cx.ints(ends, "ends"), cx.ints(axes, "axes")]
    if any(s != 1 for s in steps):
        inputs.append(cx.ints(steps, "steps"))
    return cx.op("Slice", inputs, cx.type)


def _slice(cx: Ctx) -> str:
    return _slice_node(cx, cx.value(0), cx.attr("slice", A.slice_ranges))


def _dynamic_slice(cx: Ctx) -> str:
    sizes = cx.attr("dynamic_slice_sizes", A.int_list)
    offsets = cx.args[1:]
    if not all(isinstance(o, Const) for o in offsets):
        raise cx.fail("unsupported dynamic-slice: its offsets are not constants (nor derived from partition-id)")
    x = cx.value(0)
    shape = cx.type_of(x).shape
    if len(offsets) != len(shape) or len(sizes) != len(shape):
        raise cx.fail(f"{len(offsets)} offsets and {len(sizes)} sizes for an operand of rank {len(shape)}")
    starts = [int(np.clip(int(o.array), 0, d - s)) for o, d, s in zip(offsets, shape, sizes)]
    return _slice_node(cx, x, [(st, st + s, 1) for st, s in zip(starts, sizes)])


def _concatenate(cx: Ctx) -> str:
    axis = cx.attr("dimensions", A.int_list)
    if len(axis) != 1:
        raise cx.fail(f"dimensions {axis}: expected one axis")
    return cx.op("Concat", [cx.value(k) for k in range(len(cx.args))], cx.type, axis=axis[0])


def _pad(cx: Ctx) -> str:
    raw = cx.attr("padding", lambda v: "".join(str(t) for t in v))
    lo, hi = [], []
    for part in raw.split("x"):
        nums = part.split("_")
        if len(nums) not in (2, 3) or not all(n.lstrip("-").isdigit() for n in nums):
            raise cx.fail(f"padding {raw!r}")
        if len(nums) == 3 and int(nums[2]) != 0:
            raise cx.fail("unsupported interior padding")
        lo.append(int(nums[0]))
        hi.append(int(nums[1]))
    if min(lo + hi, default=0) < 0:
        raise cx.fail("unsupported negative padding")
    value = cx.value(1)
    return cx.op("Pad", [cx.value(0), cx.ints(lo + hi, "pads"), value], cx.type, mode="constant")


def _gather(cx: Ctx) -> str:
    offset_dims = cx.attr("offset_dims", A.int_list)
    collapsed = cx.attr("collapsed_slice_dims", A.int_list)
    index_map = cx.attr("start_index_map", A.int_list)
    ivd = int(cx.attr("index_vector_dim", A.scalar))
    sizes = cx.attr("slice_sizes", A.int_list)
    batch = cx.inst.attrs.get("operand_batching_dims")
    x, idx = cx.value(0), cx.value(1)
    xs, ids = cx.type_of(x).shape, cx.type_of(idx).shape
    if batch or len(index_map) != 1 or collapsed != index_map:
        raise cx.fail("unsupported gather: only whole slices along one axis are supported")
    axis = index_map[0]
    if any(s != (1 if k == axis else xs[k]) for k, s in enumerate(sizes)):
        raise cx.fail("unsupported gather: slice sizes are not the whole operand along the other axes")
    if ivd < len(ids):
        if ids[ivd] != 1:
            raise cx.fail("unsupported gather: index vectors of more than one element")
        idx = cx.reshape(idx, [d for k, d in enumerate(ids) if k != ivd], "indices")
        ids = cx.type_of(idx).shape
    nb = len(ids)
    # ONNX Gather: x.shape[:axis] + ids + x.shape[axis+1:]; XLA: offset axes at offset_dims,
    # batch axes (in order) in the remaining result positions
    onnx_shape = tuple(xs[:axis]) + tuple(ids) + tuple(xs[axis + 1 :])
    offsets_onnx = list(range(axis)) + list(range(axis + nb, len(onnx_shape)))
    batch_out = [k for k in range(len(cx.type.shape)) if k not in offset_dims]
    perm = [0] * len(cx.type.shape)
    for src, dst in zip(offsets_onnx, offset_dims):
        perm[dst] = src
    for j, dst in enumerate(batch_out):
        perm[dst] = axis + j
    if perm == list(range(len(perm))):
        return cx.op("Gather", [x, idx], cx.type, axis=axis)
    g = cx.op("Gather", [x, idx], TensorType(cx.type.dtype, onnx_shape), hint="gather", axis=axis)
    return cx.op("Transpose", [g], cx.type, perm=perm)


def _iota(cx: Ctx):
    out = cx.type
    axis = int(cx.attr("iota_dimension", A.scalar))
    if not 0 <= axis < len(out.shape):
        raise cx.fail(f"iota_dimension {axis} out of range")
    from analyzer.importers.hlo.fold import NUMPY_DTYPES

    ramp = np.arange(out.shape[axis]).astype(NUMPY_DTYPES[out.dtype])
    base_shape = [out.shape[axis] if k == axis else 1 for k in range(len(out.shape))]
    if list(base_shape) == list(out.shape):
        return Const(ramp.reshape(base_shape), out.dtype, cx.name)
    return Lazy(Const(ramp.reshape(base_shape[axis:]), out.dtype, f"{cx.name}/base"), out, cx.name, cx.source)


def _flat_numbers(value) -> list[str] | None:
    """Number tokens of a literal, in order; None when it holds ``...`` (elided)."""
    from lark import Token

    from analyzer.importers.hlo.parse import Group

    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Group):
            stack.extend(reversed(item.items))
        elif isinstance(item, Token):
            if item.type == "ELLIPSIS":
                return None
            if item.type in ("NUMBER", "NAME"):
                out.append(str(item))
    return out


def _number(text: str) -> float | int | bool:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low.lstrip("-") in ("inf", "nan"):
        return float(low)
    if low.lstrip("-").startswith("0x"):
        return int(low, 16)
    return float(text) if any(c in low for c in ".en") else int(text)


def _constant(cx: Ctx):
    from analyzer.importers.hlo.fold import NUMPY_DTYPES

    out = cx.type
    literal = cx.inst.literal if cx.inst.literal is not None else (cx.inst.operands[0] if cx.inst.operands else None)
    if literal is None:
        raise cx.fail("no literal")
    texts = _flat_numbers(literal) if not isinstance(literal, str) else [literal]
    if texts is None:  # printed as {...}: the value is not in the text
        cx.imp.b.add_input(cx.name, out)
        return cx.name
    try:
        values = [_number(t) for t in texts]
    except ValueError:
        raise cx.fail(f"literal {texts[:3]} is not a number") from None
    size = int(np.prod(out.shape, dtype=np.int64))
    if len(values) != size:
        raise cx.fail(f"literal of {len(values)} values for a result of {size} elements")
    return Const(np.asarray(values).astype(NUMPY_DTYPES[out.dtype]).reshape(out.shape), out.dtype, cx.name)


def _tuple(cx: Ctx):
    return tuple(cx.args)


def _get_tuple_element(cx: Ctx):
    index = int(cx.attr("index", A.scalar))
    value = cx.args[0]
    if not isinstance(value, tuple) or not 0 <= index < len(value):
        raise cx.fail(f"no element {index}")
    return value[index]


# --- computation ------------------------------------------------------------------------


def _dot(cx: Ctx) -> str:
    out = cx.type
    lb = cx.attr("lhs_batch_dims", A.int_list, required=False) or []
    rb = cx.attr("rhs_batch_dims", A.int_list, required=False) or []
    lc = cx.attr("lhs_contracting_dims", A.int_list, required=False) or []
    rc = cx.attr("rhs_contracting_dims", A.int_list, required=False) or []
    lhs, rhs = cx.cast(cx.value(0), out.dtype), cx.cast(cx.value(1), out.dtype)
    ls, rs = cx.type_of(lhs).shape, cx.type_of(rhs).shape
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise cx.fail("batch or contracting dimensions do not pair up")
    lf = [k for k in range(len(ls)) if k not in lb and k not in lc]
    rf = [k for k in range(len(rs)) if k not in rb and k not in rc]
    bshape = [ls[k] for k in lb]
    lfs, rfs = [ls[k] for k in lf], [rs[k] for k in rf]
    csize = int(np.prod([ls[k] for k in lc], dtype=np.int64))
    if [ls[k] for k in lc] != [rs[k] for k in rc] or bshape != [rs[k] for k in rb]:
        raise cx.fail("contracting or batch dimensions differ in size")
    if list(out.shape) != bshape + lfs + rfs:
        raise cx.fail(f"result {out} is not batch + lhs free + rhs free {bshape + lfs + rfs}")
    lhs = cx.transpose(lhs, lb + lf + lc, "lhs_t")
    rhs = cx.transpose(rhs, rb + rc + rf, "rhs_t")
    m, n = int(np.prod(lfs, dtype=np.int64)), int(np.prod(rfs, dtype=np.int64))
    # MatMul needs exactly one free and one contracting axis per side (a vector side is
    # given a unit axis, dropped again by the final view)
    lhs = cx.reshape(lhs, bshape + [m, csize], "lhs_2d") if len(lf) != 1 or len(lc) != 1 else lhs
    rhs = cx.reshape(rhs, bshape + [csize, n], "rhs_2d") if len(rf) != 1 or len(rc) != 1 else rhs
    mm_shape = tuple(bshape + [m, n])
    if mm_shape == tuple(out.shape):
        return cx.op("MatMul", [lhs, rhs], out)
    mm = cx.op("MatMul", [lhs, rhs], TensorType(out.dtype, mm_shape), hint="matmul")
    return cx.op("Reshape", [mm, cx.ints(out.shape, "shape")], out)


def _reducer(cx: Ctx, key: str = "to_apply") -> dict:
    """The ``reducers`` entry of the computation named by attribute ``key``."""
    comp_name = cx.attr(key, A.name_ref)
    comp = cx.imp.module.computations.get(comp_name)
    if comp is None:
        raise cx.fail(f"no computation {comp_name}")
    params = {i.name for i in comp.instructions if i.opcode == "parameter"}
    root = comp.root
    entry = cx.imp.table["reducers"].get(root.opcode)
    if entry is None or len(params) != 2 or set(root.operands) != params:
        raise cx.fail(f"unsupported reduction computation {comp_name} (root {root.opcode})")
    return entry


def _reduce(cx: Ctx) -> str:
    if len(cx.args) != 2:
        raise cx.fail("unsupported variadic reduce")
    entry = _reducer(cx)
    dims = cx.attr("dimensions", A.int_list)
    out = cx.type
    x = cx.value(0)
    red = cx.op(
        entry["onnx"], [x, cx.ints(dims, "axes")], out, hint=None if _identity_init(cx, entry) else "reduce", keepdims=0
    )
    if _identity_init(cx, entry):
        return red
    combine = {"ReduceSum": "Add", "ReduceMax": "Max", "ReduceMin": "Min", "ReduceProd": "Mul"}[entry["onnx"]]
    return cx.op(combine, [red, cx.value(1)], out)


def _identity_init(cx: Ctx, entry: dict) -> bool:
    init = cx.args[1]
    return (
        isinstance(init, Const)
        and init.array.size == 1
        and float(init.array.reshape(-1)[0]) == float(entry["identity"])
    )


def _call(cx: Ctx):
    comp_name = cx.attr(cx.spec["computation"], A.name_ref)
    comp = cx.imp.module.computations.get(comp_name)
    if comp is None:
        raise cx.fail(f"no computation {comp_name}")
    if cx.imp.depth > 64:
        raise cx.fail("calls nested more than 64 deep")
    cx.imp.depth += 1
    try:
        return cx.imp.run(comp, list(cx.args), f"{cx.name}/")
    finally:
        cx.imp.depth -= 1


def _custom_call(cx: Ctx):
    target = cx.attr("custom_call_target", A.string)
    entry = cx.imp.table["custom_calls"].get(target)
    if entry is None:
        raise cx.fail(f"unsupported custom-call target {target!r}")
    cx.spec = {**cx.spec, **entry}
    return HANDLERS[entry["kind"]](cx)


def _rms_norm(cx: Ctx) -> str:
    out = cx.type
    if len(cx.args) != 3:
        raise cx.fail("AwsNeuronRmsNorm takes (x, weight, eps)")
    config = cx.attr("backend_config", A.string, required=False) or "0"
    if not config.strip().isdigit():
        raise cx.fail(f"backend_config {config!r}: expected the normalized dimension")
    x = cx.value(0)
    xt = cx.type_of(x)
    axis = int(config)
    if axis >= len(xt.shape):
        raise cx.fail(f"dimension {axis} out of range for {xt}")
    w = cx.cast(cx.value(1), xt.dtype)
    eps = cx.cast(cx.value(2), xt.dtype)
    stat = TensorType(xt.dtype, tuple(1 if k == axis else d for k, d in enumerate(xt.shape)))
    sq = cx.op("Mul", [x, x], xt, hint="square")
    mean = cx.op("ReduceMean", [sq, cx.ints([axis], "axes")], stat, hint="mean", keepdims=1)
    var = cx.op("Add", [mean, eps], stat, hint="add_eps")
    root = cx.op("Sqrt", [var], stat, hint="sqrt")
    normed = cx.op("Div", [x, root], xt, hint="normalized")
    wshape = [d if k == axis else 1 for k, d in enumerate(xt.shape)]
    scaled = cx.op("Mul", [normed, cx.reshape(w, wshape, "weight")], xt, hint="scaled")
    return cx.op("Cast", [scaled], out, to=ONNX_DTYPES[out.dtype])


# --- collectives ------------------------------------------------------------------------


def _group_size(cx: Ctx) -> int:
    groups = cx.attr("replica_groups", A.replica_groups, required=False) or []
    n, r = cx.imp.world_size, cx.imp.rank
    if not groups:
        if n is None:
            raise cx.fail("replica_groups={} (every rank) needs the world size")
        return n
    ids = [i for g in groups for i in g]
    if n is not None and max(ids) >= n:
        raise cx.fail(f"replica group member {max(ids)} is not a rank of world size {n}")
    if r is None:
        sizes = {len(g) for g in groups}
        if len(sizes) != 1:
            raise cx.fail("replica groups of different sizes need the rank")
        return sizes.pop()
    mine = [g for g in groups if r in g]
    if len(mine) != 1:
        raise cx.fail(f"rank {r} is in {len(mine)} replica groups")
    return len(mine[0])


def _collective(cx: Ctx) -> str:
    if len(cx.args) != 1 or cx.inst.shape.is_tuple:
        raise cx.fail("unsupported collective over several operands")
    size = _group_size(cx)
    x = cx.value(0)
    out = cx.type
    if cx.imp.world_size == 1:  # its groups were checked to hold rank 0 alone
        return cx.op("Identity", [x], out)
    op = cx.spec["onnx"]
    attrs: dict = {"group_size": size}
    axes = cx.attr("replica_groups", A.mesh_axes, required=False) or []
    if axes and size != cx.imp.world_size:  # over a sub-group: the mesh axis it runs along
        attrs["mesh_axis"] = ",".join(axes)
    if op in ("AllReduce", "ReduceScatter"):
        attrs["reduction"] = _reducer(cx)["reduction"]
    if op in ("AllGather", "ReduceScatter"):
        dims = cx.attr("dimensions", A.int_list)
        attrs["axis"] = dims[0]
    if op == "AllToAll":
        dims = cx.attr("dimensions", A.int_list, required=False)
        if not dims:
            raise cx.fail("unsupported all-to-all over several operands")
        if dims[0] != 0:  # com.microsoft::AllToAll splits and concatenates axis 0
            perm = [dims[0]] + [k for k in range(len(out.shape)) if k != dims[0]]
            moved = cx.transpose(x, perm, "to_axis0")
            a2a = cx.op(op, [moved], cx.type_of(moved), hint="alltoall", domain="com.microsoft", **attrs)
            return cx.op("Transpose", [a2a], out, perm=[perm.index(k) for k in range(len(perm))])
    return cx.op(op, [x], out, domain="com.microsoft", **attrs)


def _rank_id(cx: Ctx) -> Const:
    if cx.imp.rank is None:
        if cx.imp.world_size == 1:
            return Const(np.asarray(0, dtype=np.uint32), cx.type.dtype, cx.name)
        raise cx.fail("the program reads its rank: give the rank (--rank)")
    return Const(np.asarray(cx.imp.rank, dtype=np.uint32), cx.type.dtype, cx.name)


HANDLERS: dict[str, Callable] = {
    "elementwise": _elementwise,
    "compare": _compare,
    "clamp": _clamp,
    "unary": _unary,
    "convert": _convert,
    "reshape": _reshape,
    "transpose": _transpose,
    "broadcast": _broadcast,
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "concatenate": _concatenate,
    "pad": _pad,
    "gather": _gather,
    "iota": _iota,
    "constant": _constant,
    "tuple": _tuple,
    "get_tuple_element": _get_tuple_element,
    "dot": _dot,
    "reduce": _reduce,
    "call": _call,
    "custom_call": _custom_call,
    "rms_norm": _rms_norm,
    "collective": _collective,
    "rank_id": _rank_id,
}
