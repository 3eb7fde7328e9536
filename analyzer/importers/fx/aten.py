"""ATen ops -> ONNX (opset 20), one handler per ``kind`` of ``aten_ops.yaml``.

Semantics follow the PyTorch documentation of each op (https://pytorch.org/docs/stable/,
``torch.<op>`` and ``Tensor.<op>``) and ATen's ``native_functions.yaml`` for argument names
and defaults; ONNX semantics follow https://onnx.ai/onnx/operators/. Decisions worth knowing:

- ``view``/``_unsafe_view``/``reshape``/``expand`` take their target from the node's annotation,
  so ``-1`` is resolved; ``t`` of a tensor of rank < 2 is the identity (``torch.t``).
- ``baddbmm``/``addmm``: ``beta * input + alpha * (mat1 @ mat2)``; with ``beta == 0`` input is
  ignored ("If beta is 0, then input will be ignored, and nan and inf in it will not be
  propagated", ``torch.baddbmm``).
- Elementwise ops compute in the annotated result dtype (tensor operands are cast to it,
  Python numbers become 0-d initializers of it), which is torch's type promotion outcome;
  comparisons compute in the promoted dtype of their operands.
- ``copy(dst, src)`` is ``src`` cast to dst's dtype and broadcast to dst's shape (``Tensor.copy_``).
- ``empty``/``empty_like``/``new_empty_strided`` are modelled as zeros: their memory is
  uninitialized in torch, so any value is a valid model and zeros make graphs deterministic.
- ``native_dropout(x, p, train)``: the random keep-mask is a new bool graph input
  ``native_dropout.<k>`` (k-th dropout in graph order); result 0 is ``x * where(mask, 1/(1-p), 0)``,
  result 1 the mask (``train`` None counts as True, as in ATen). ``train=False`` gives ``x`` and
  an all-true mask.
- ``index.Tensor``: one integer index tensor (other entries None) is Gather on its axis;
  ``[arange(0, rows), idx]`` on a 2-D tensor is GatherElements on axis 1 (row-wise pick).
  ``index_put``: a bool mask over leading dims with a one-element value is Where; the
  row-wise ``[arange, idx]`` pattern is ScatterElements on axis 1; one integer index on
  axis 0 is ScatterND. Other patterns raise InputError "unsupported".
- ``slice_scatter`` covering the whole axis is Identity(src), otherwise a Concat of the
  kept head of ``self``, ``src`` and the kept tail (step 1 only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from analyzer.importers.fx.emit import ONNX_DTYPES, NodeCtx, make_tensor, promote
from analyzer.importers.fx.parse import Ref, TensorType

__all__ = ["HANDLERS"]


def _axis(cx: NodeCtx, d: object, rank: int) -> int:
    if not isinstance(d, int) or isinstance(d, bool) or not -max(rank, 1) <= d < max(rank, 1):
        raise cx.fail(f"dimension {d!r} out of range for rank {rank}")
    return d % max(rank, 1)


def _first(cx: NodeCtx) -> str:
    return cx.value(next(iter(cx.a.values())))


def _check_shape(cx: NodeCtx, got: Sequence[int], want: Sequence[int], what: str) -> None:
    if tuple(got) != tuple(want):
        raise cx.fail(f"{what} {list(got)} does not match the annotation {list(want)}")


def _numel(shape: Sequence[int | str]) -> tuple[int, tuple[str, ...]]:
    """Element count of a shape: the product of its sizes and its data-dependent sizes' names."""
    return math.prod(d for d in shape if isinstance(d, int)), tuple(sorted(d for d in shape if isinstance(d, str)))


def _reshape(cx: NodeCtx) -> None:
    x = _first(cx)
    out = cx.type
    size = list(cx.a.values())[1]
    if _numel(cx.type_of(x).shape) != _numel(out.shape) or len(size) != len(out.shape):
        raise cx.fail(f"cannot view {cx.type_of(x)} as {list(size)} (annotation {out})")
    symbolic = [d for d in out.shape if isinstance(d, str)]
    if len(symbolic) > 1:
        raise cx.unsupported(f"view to {out} (more than one data-dependent size)")
    if any(s not in (-1, o) and not isinstance(s, Ref) for s, o in zip(size, out.shape)):
        _check_shape(cx, size, out.shape, "size")
    # a data-dependent size (sym_size.int) is the one -1 of the target
    target = [-1 if isinstance(d, str) else d for d in out.shape]
    cx.op("Reshape", [x, cx.ints(target, "shape")], out)


def _t(cx: NodeCtx) -> None:
    x = _first(cx)
    if len(cx.type_of(x).shape) < 2:
        cx.op("Identity", [x], cx.type)
    else:
        cx.op("Transpose", [x], cx.type, perm=[1, 0])


def _transpose(cx: NodeCtx) -> None:
    x = _first(cx)
    rank = len(cx.type_of(x).shape)
    perm = list(range(rank))
    a, b = _axis(cx, cx.a["dim0"], rank), _axis(cx, cx.a["dim1"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    cx.op("Transpose", [x], cx.type, perm=perm)


def _permute(cx: NodeCtx) -> None:
    x = _first(cx)
    rank = len(cx.type_of(x).shape)
    perm = [_axis(cx, d, rank) for d in cx.a["dims"]]
    if sorted(perm) != list(range(rank)):
        raise cx.fail(f"dims {cx.a['dims']} are not a permutation")
    cx.op("Transpose", [x], cx.type, perm=perm)


def _unsqueeze(cx: NodeCtx) -> None:
    x = _first(cx)
    axis = _axis(cx, cx.a["dim"], len(cx.type_of(x).shape) + 1)
    cx.op("Unsqueeze", [x, cx.ints([axis], "axes")], cx.type)


def _squeeze(cx: NodeCtx) -> None:
    x = _first(cx)
    shape = cx.type_of(x).shape
    dims = cx.a["dim"] if isinstance(cx.a["dim"], list) else [cx.a["dim"]]
    axes = sorted({_axis(cx, d, len(shape)) for d in dims} & {i for i, s in enumerate(shape) if s == 1})
    if axes and shape:
        cx.op("Squeeze", [x, cx.ints(axes, "axes")], cx.type)
    else:
        cx.op("Identity", [x], cx.type)


def _expand(cx: NodeCtx) -> None:
    x = _first(cx)
    size = cx.a["size"]
    if len(size) != len(cx.type.shape) or any(s not in (-1, o) for s, o in zip(size, cx.type.shape)):
        _check_shape(cx, size, cx.type.shape, "size")
    cx.op("Expand", [x, cx.ints(cx.type.shape, "shape")], cx.type)


def _identity(cx: NodeCtx) -> None:
    x = _first(cx)
    out = cx.type
    _check_shape(cx, cx.type_of(x).shape, out.shape, "input shape")
    if cx.type_of(x).dtype != out.dtype:
        cx.op("Cast", [x], out, to=ONNX_DTYPES[out.dtype])
    else:
        cx.op("Identity", [x], out)


def _copy(cx: NodeCtx) -> None:
    out = cx.type
    src = cx.value(cx.a["src"])
    if cx.type_of(src).shape != out.shape:
        cx.op("Expand", [cx.cast(src, out.dtype), cx.ints(out.shape, "shape")], out)
    elif cx.type_of(src).dtype != out.dtype:
        cx.op("Cast", [src], out, to=ONNX_DTYPES[out.dtype])
    else:
        cx.op("Identity", [src], out)


def _matmul(cx: NodeCtx) -> None:
    a, b = (cx.value(v) for v in list(cx.a.values())[:2])
    cx.op("MatMul", [a, b], cx.type)


def _addmm(cx: NodeCtx) -> None:
    bias, m1, m2 = (cx.a[k] for k in list(cx.a)[:3])
    beta, alpha = cx.a["beta"], cx.a["alpha"]
    out = cx.type
    if beta == 0 and alpha == 1:
        cx.op("MatMul", [cx.value(m1), cx.value(m2)], out)
        return
    prod = cx.op("MatMul", [cx.value(m1), cx.value(m2)], out, hint="matmul")
    if beta == 0:
        cx.op("Mul", [prod, cx.operand(alpha, out.dtype)], out)
        return
    if alpha != 1:
        prod = cx.op("Mul", [prod, cx.operand(alpha, out.dtype)], out, hint="alpha")
    b = cx.cast(cx.value(bias), out.dtype)
    if beta != 1:
        b = cx.op("Mul", [b, cx.operand(beta, out.dtype)], cx.type_of(b), hint="beta")
    cx.op("Add", [prod, b], out)


_BOOL_OPS = {"Mul": "And", "Add": "Or"}


def _binary(cx: NodeCtx) -> None:
    names = list(cx.a)
    out = cx.type
    op = cx.spec["onnx"]
    if out.dtype == "b8":
        if op not in _BOOL_OPS:
            raise cx.unsupported(f"{op} on bool tensors")
        op = _BOOL_OPS[op]
    a = cx.operand(cx.a[names[0]], out.dtype)
    b = cx.operand(cx.a[names[1]], out.dtype)
    alpha = cx.a.get("alpha", 1)
    if alpha != 1:
        b = cx.op("Mul", [b, cx.operand(alpha, out.dtype)], cx.type_of(b), hint="alpha")
    if cx.spec.get("reverse"):
        a, b = b, a
    cx.op(op, [a, b], out)


def _compute_dtype(cx: NodeCtx, operands: Sequence[object]) -> str:
    tensors = [cx.type_of(cx.value(v)) for v in operands if isinstance(v, Ref)]
    if not tensors:
        raise cx.fail("no tensor operand")
    dtype = promote(*((t.dtype, len(t.shape)) for t in tensors))
    for v in operands:
        if isinstance(v, float) and not dtype.startswith(("f", "bf")):
            dtype = "f32"
        elif isinstance(v, int) and not isinstance(v, bool) and dtype == "b8":
            dtype = "i64"
    return dtype


def _compare(cx: NodeCtx) -> None:
    operands = list(cx.a.values())[:2]
    dtype = _compute_dtype(cx, operands)
    cx.op(cx.spec["onnx"], [cx.operand(v, dtype) for v in operands], cx.type)


def _bitwise(cx: NodeCtx) -> None:
    out = cx.type
    bool_op, int_op = cx.spec["onnx"]
    if out.dtype.startswith(("f", "bf")):
        raise cx.unsupported("bitwise op on floating tensors")
    inputs = [cx.operand(v, out.dtype) for v in cx.a.values()]
    cx.op(bool_op if out.dtype == "b8" else int_op, inputs, out)


def _unary(cx: NodeCtx) -> None:
    out = cx.type
    x = cx.cast(_first(cx), out.dtype)
    chain = cx.spec["onnx"]
    for op in chain[:-1]:
        x = cx.op(op, [x], out, hint=op.lower())
    cx.op(chain[-1], [x], out)


def _gelu(cx: NodeCtx) -> None:
    approximate = cx.a["approximate"]
    if approximate not in ("none", "tanh"):
        raise cx.unsupported(f"approximate={approximate!r}")
    cx.op("Gelu", [_first(cx)], cx.type, approximate=approximate)


def _softmax(cx: NodeCtx) -> None:
    x = cx.cast(_first(cx), cx.type.dtype)
    cx.op("Softmax", [x], cx.type, axis=_axis(cx, cx.a["dim"], len(cx.type.shape)))


def _masked_fill(cx: NodeCtx) -> None:
    out = cx.type
    x = cx.cast(cx.value(cx.a["self"]), out.dtype)
    mask = cx.cast(cx.value(cx.a["mask"]), "b8")
    cx.op("Where", [mask, cx.operand(cx.a["value"], out.dtype), x], out)


def _reduce(cx: NodeCtx) -> None:
    out = cx.type
    x = cx.cast(cx.value(cx.a["self"]), out.dtype)
    rank = len(cx.type_of(x).shape)
    dims = cx.a.get("dim")
    keep = int(bool(cx.a.get("keepdim", False)))
    if dims is None or dims == []:
        cx.op(cx.spec["onnx"], [x], out, keepdims=keep)
        return
    dims = dims if isinstance(dims, list) else [dims]
    axes = sorted({_axis(cx, d, rank) for d in dims})
    cx.op(cx.spec["onnx"], [x, cx.ints(axes, "axes")], out, keepdims=keep)


def _mean(cx: NodeCtx) -> None:
    """``aten.mean``: the sum over the reduced axes (all without ``dim``) divided by their element
    count, as ATen computes it (native/ReduceOps.cpp, mean = sum / numel of the reduced axes);
    written as ReduceSum then Div so it pairs with a sum followed by a division (a loss divided
    by num_items_in_batch)."""
    out = cx.type
    x = cx.cast(cx.value(cx.a["self"]), out.dtype)
    shape = cx.type_of(x).shape
    dims = cx.a.get("dim")
    keep = int(bool(cx.a.get("keepdim", False)))
    if dims is None or dims == []:
        axes = list(range(len(shape)))
        total = cx.op("ReduceSum", [x], out, hint="sum", keepdims=keep)
    else:
        dims = dims if isinstance(dims, list) else [dims]
        axes = sorted({_axis(cx, d, len(shape)) for d in dims})
        total = cx.op("ReduceSum", [x, cx.ints(axes, "axes")], out, hint="sum", keepdims=keep)
    count = math.prod(shape[a] for a in axes)
    cx.op("Div", [total, cx.const(count, out.dtype, (), hint="count")], out)


def _max_dim(cx: NodeCtx) -> None:
    x = cx.value(cx.a["self"])
    t_x = cx.type_of(x)
    axis = _axis(cx, cx.a["dim"], len(t_x.shape))
    keep = int(bool(cx.a["keepdim"]))
    shape = (
        tuple(1 if i == axis else s for i, s in enumerate(t_x.shape))
        if keep
        else t_x.shape[:axis] + t_x.shape[axis + 1 :]
    )
    values, indices = cx.result(0), cx.result(1)
    cx.ops(
        "ReduceMax",
        [x, cx.ints([axis], "axes")],
        [(values, cx.result_type(0) or TensorType(t_x.dtype, shape))],
        keepdims=keep,
    )
    cx.ops("ArgMax", [x], [(indices, cx.result_type(1) or TensorType("i64", shape))], axis=axis, keepdims=keep)


def _bounds(cx: NodeCtx, size: int) -> tuple[int, int, int]:
    start, end, step = cx.a["start"], cx.a["end"], cx.a["step"]
    start = 0 if start is None else start
    end = size if end is None else end
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step)) or step < 1:
        raise cx.unsupported(f"slice bounds start={start!r} end={end!r} step={step!r}")
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, start), size)
    return start, end, step


def _slice(cx: NodeCtx) -> None:
    x = cx.value(cx.a["self"])
    shape = cx.type_of(x).shape
    d = _axis(cx, cx.a["dim"], len(shape))
    start, end, step = _bounds(cx, shape[d])
    _check_shape(cx, shape[:d] + (len(range(start, end, step)),) + shape[d + 1 :], cx.type.shape, "slice shape")
    inputs = [x, cx.ints([start], "starts"), cx.ints([end], "ends"), cx.ints([d], "axes"), cx.ints([step], "steps")]
    cx.op("Slice", inputs, cx.type)


def _slice_scatter(cx: NodeCtx) -> None:
    out = cx.type
    base = cx.value(cx.a["self"])
    src = cx.cast(cx.value(cx.a["src"]), out.dtype)
    shape = cx.type_of(base).shape
    d = _axis(cx, cx.a["dim"], len(shape))
    start, end, step = _bounds(cx, shape[d])
    if step != 1:
        raise cx.unsupported(f"slice_scatter with step {step}")
    _check_shape(cx, cx.type_of(src).shape, shape[:d] + (end - start,) + shape[d + 1 :], "src shape")
    if start == 0 and end == shape[d]:
        cx.op("Identity", [src], out)
        return
    pieces = []
    for hint, lo, hi in (("head", 0, start), (None, start, end), ("tail", end, shape[d])):
        if hint is None:
            pieces.append(src)
        elif hi > lo:
            t_piece = TensorType(out.dtype, shape[:d] + (hi - lo,) + shape[d + 1 :])
            bounds = [cx.ints([lo], "starts"), cx.ints([hi], "ends"), cx.ints([d], "axes")]
            pieces.append(cx.op("Slice", [base, *bounds], t_piece, hint=hint))
    cx.op("Concat", pieces, out, axis=d)


def _cat(cx: NodeCtx) -> None:
    out = cx.type
    tensors = [cx.cast(cx.value(v), out.dtype) for v in cx.a["tensors"]]
    cx.op("Concat", tensors, out, axis=_axis(cx, cx.a["dim"], len(out.shape)))


def _split(cx: NodeCtx) -> None:
    x = cx.value(cx.a["self"])
    t_x = cx.type_of(x)
    d = _axis(cx, cx.a["dim"], len(t_x.shape))
    if "split_sizes" in cx.a:
        sizes = list(cx.a["split_sizes"])
    else:
        step = cx.a["split_size"]
        if not isinstance(step, int) or step < 1:
            raise cx.unsupported(f"split_size {step!r}")
        sizes = [min(step, t_x.shape[d] - lo) for lo in range(0, t_x.shape[d], step)] or [0]
    if sum(sizes) != t_x.shape[d]:
        raise cx.fail(f"split sizes {sizes} do not add up to {t_x.shape[d]}")
    outputs = []
    for k, size in enumerate(sizes):
        computed = TensorType(t_x.dtype, t_x.shape[:d] + (size,) + t_x.shape[d + 1 :])
        outputs.append((cx.result(k), cx.result_type(k) or computed))
    cx.ops("Split", [x, cx.ints(sizes, "split")], outputs, axis=d)


def _embedding(cx: NodeCtx) -> None:
    cx.op("Gather", [cx.value(cx.a["weight"]), cx.value(cx.a["indices"])], cx.type, axis=0)


def _is_row_arange(cx: NodeCtx, arg: object, rows: int) -> bool:
    node = cx.producer(arg)
    if node is None or not node.target.startswith("aten.arange."):
        return False
    a = cx.env["bind"](node)
    return a.get("start", 0) == 0 and a["end"] == rows and a.get("step", 1) == 1


def _int_index(cx: NodeCtx, arg: object) -> str:
    idx = cx.value(arg, "index")
    dtype = cx.type_of(idx).dtype
    if dtype == "b8":
        raise cx.unsupported("boolean mask index (data-dependent shape)")
    if dtype not in ("i32", "i64"):
        raise cx.unsupported(f"index of dtype {dtype}")
    return idx


def _row_pick(cx: NodeCtx, x: str, indices: list) -> str | None:
    """The index tensor of ``x[arange(0, rows), idx]`` on a 2-D ``x``, else None."""
    t_x = cx.type_of(x)
    if len(indices) != 2 or len(t_x.shape) != 2 or not all(isinstance(i, Ref) for i in indices):
        return None
    if not _is_row_arange(cx, indices[0], t_x.shape[0]):
        return None
    idx = _int_index(cx, indices[1])
    if cx.type_of(idx).shape != (t_x.shape[0],):
        return None
    return idx


def _index(cx: NodeCtx) -> None:
    x = cx.value(cx.a["self"])
    indices = list(cx.a["indices"])
    given = [k for k, i in enumerate(indices) if i is not None]
    if len(given) == 1:
        k = given[0]
        idx = _int_index(cx, indices[k])
        cx.op("Gather", [x, idx], cx.type, axis=k)
        return
    idx = _row_pick(cx, x, indices)
    if idx is None:
        raise cx.unsupported("index pattern (supported: one integer index tensor, or [arange(0, rows), idx])")
    rows = cx.type_of(x).shape[0]
    col = cx.op(
        "Unsqueeze", [idx, cx.ints([-1], "axes")], TensorType(cx.type_of(idx).dtype, (rows, 1)), hint="unsqueeze"
    )
    picked = cx.op("GatherElements", [x, col], TensorType(cx.type.dtype, (rows, 1)), hint="gather", axis=1)
    cx.op("Squeeze", [picked, cx.ints([-1], "axes")], cx.type)


def _sigmoid_backward(cx: NodeCtx) -> None:
    """``aten.sigmoid_backward(grad_output, output)`` = ``grad_output * output * (1 - output)``
    (ATen native/BinaryOps.cpp sigmoid_backward), in the result dtype."""
    out = cx.type
    g = cx.cast(cx.value(cx.a["grad_output"]), out.dtype)
    y = cx.cast(cx.value(cx.a["output"]), out.dtype)
    rest = cx.op("Sub", [cx.const(1, out.dtype, (), hint="one"), y], cx.type_of(y), hint="one_minus")
    slope = cx.op("Mul", [y, rest], cx.type_of(y), hint="slope")
    cx.op("Mul", [g, slope], out)


def _nonzero(cx: NodeCtx) -> None:
    """``aten.nonzero``: the indices of the non-zero elements, one row each (``[u0, rank]``);
    ONNX NonZero gives them one column each, so it is transposed."""
    x = _first(cx)
    rank = len(cx.type_of(x).shape)
    cols = cx.op("NonZero", [x], TensorType("i64", (rank, cx.type.shape[0])), hint="columns")
    cx.op("Transpose", [cols], cx.type, perm=[1, 0])


def _sym_size(cx: NodeCtx) -> None:
    """``aten.sym_size.int(x, dim)``: a data-dependent size, as a one-element int64 tensor
    (ONNX Shape of that axis); views take their target from their annotation (-1 for that
    size), fills of a data-dependent shape concatenate it."""
    x = cx.value(cx.a["self"])
    dim = _axis(cx, cx.a["dim"], len(cx.type_of(x).shape))
    cx.op("Shape", [x], TensorType("i64", (1,)), start=dim, end=dim + 1)


def _index_put(cx: NodeCtx) -> None:
    out = cx.type
    x = cx.cast(cx.value(cx.a["self"]), out.dtype)
    t_x = cx.type_of(x)
    v = cx.cast(cx.value(cx.a["values"]), out.dtype)
    t_v = cx.type_of(v)
    accumulate = bool(cx.a["accumulate"])
    indices = list(cx.a["indices"])
    if len(indices) == 1 and isinstance(indices[0], Ref) and cx.type_of(cx.value(indices[0])).dtype == "b8":
        _masked_put(cx, x, cx.value(indices[0]), v, accumulate)
        return
    idx = _row_pick(cx, x, indices)
    if idx is not None:
        rows = t_x.shape[0]
        if t_v.shape != (rows,):
            v = cx.op("Expand", [v, cx.ints([rows], "shape")], TensorType(out.dtype, (rows,)), hint="expand")
        col = cx.op(
            "Unsqueeze", [idx, cx.ints([-1], "axes")], TensorType(cx.type_of(idx).dtype, (rows, 1)), hint="index"
        )
        upd = cx.op("Unsqueeze", [v, cx.ints([-1], "axes")], TensorType(out.dtype, (rows, 1)), hint="updates")
        cx.op("ScatterElements", [x, col, upd], out, axis=1, reduction="add" if accumulate else "none")
        return
    if len(indices) == 1 and isinstance(indices[0], Ref):
        idx = _int_index(cx, indices[0])
        t_idx = cx.type_of(idx)
        full = t_idx.shape + t_x.shape[1:]
        if t_v.shape != full:
            v = cx.op("Expand", [v, cx.ints(full, "shape")], TensorType(out.dtype, full), hint="expand")
        rows = cx.op(
            "Unsqueeze", [idx, cx.ints([-1], "axes")], TensorType(t_idx.dtype, t_idx.shape + (1,)), hint="index"
        )
        cx.op("ScatterND", [x, rows, v], out, reduction="add" if accumulate else "none")
        return
    raise cx.unsupported("index_put pattern (supported: [bool mask], [integer index], [arange(0, rows), idx])")


def _masked_put(cx: NodeCtx, x: str, mask: str, v: str, accumulate: bool) -> None:
    out = cx.type
    t_x, t_m = cx.type_of(x), cx.type_of(mask)
    if t_m.shape != t_x.shape[: len(t_m.shape)]:
        raise cx.fail(f"mask shape {list(t_m.shape)} does not match the leading dims of {t_x}")
    if math.prod(cx.type_of(v).shape) != 1:
        raise cx.unsupported("index_put of a non-scalar value under a boolean mask (data-dependent shape)")
    extra = len(t_x.shape) - len(t_m.shape)
    if extra:
        axes = cx.ints(list(range(len(t_m.shape), len(t_x.shape))), "axes")
        mask = cx.op("Unsqueeze", [mask, axes], TensorType("b8", t_m.shape + (1,) * extra), hint="mask")
    if accumulate:
        v = cx.op("Add", [x, v], t_x, hint="accumulate")
    cx.op("Where", [mask, v, x], out)


def _fill(cx: NodeCtx) -> None:
    out = cx.type
    size = cx.a.get("size")
    if isinstance(size, list) and all(isinstance(s, int) for s in size):
        _check_shape(cx, size, out.shape, "size")
    elif size is None:
        _check_shape(cx, cx.type_of(cx.value(cx.a["self"])).shape, out.shape, "input shape")
    value = cx.a.get("fill_value", cx.spec.get("value", 0))
    if not isinstance(value, (bool, int, float)):
        raise cx.unsupported(f"fill value {value!r}")
    tensor = _value_tensor(out.dtype, value)
    if all(isinstance(d, int) for d in out.shape):
        cx.op("ConstantOfShape", [cx.ints(out.shape, "shape")], out, value=tensor)
        return
    # a data-dependent shape: its sizes at run time, [sym_size.int(...), 1, 1536]
    if size is None:
        shape = cx.op("Shape", [cx.value(cx.a["self"])], TensorType("i64", (len(out.shape),)), hint="shape")
    elif isinstance(size, list) and len(size) == len(out.shape):
        parts = [cx.value(s) if isinstance(s, Ref) else cx.ints([s], "size") for s in size]
        shape = cx.op("Concat", parts, TensorType("i64", (len(out.shape),)), hint="shape", axis=0)
    else:
        raise cx.unsupported(f"fill of the data-dependent shape {out} with size {size!r}")
    cx.op("ConstantOfShape", [shape], out, value=tensor)


def _value_tensor(dtype: str, value):
    return make_tensor("value", dtype, [value], [1])


def _arange(cx: NodeCtx) -> None:
    out = cx.type
    start, end, step = cx.a.get("start", 0), cx.a["end"], cx.a.get("step", 1)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end, step)) or step == 0:
        raise cx.unsupported(f"arange bounds start={start!r} end={end!r} step={step!r}")
    _check_shape(cx, (max(0, math.ceil((end - start) / step)),), out.shape, "arange length")
    bounds = [cx.const(v, out.dtype, (), hint=h) for v, h in ((start, "start"), (end, "limit"), (step, "delta"))]
    cx.op("Range", bounds, out)


def _dropout(cx: NodeCtx) -> None:
    x = cx.value(cx.a["input"])
    t_x = cx.type_of(x)
    p, train = cx.a["p"], cx.a["train"]
    out, mask_out = cx.result(0), cx.result(1)
    t_out = cx.result_type(0) or t_x
    t_mask = cx.result_type(1) or TensorType("b8", t_x.shape)
    k = cx.env["dropouts"]
    cx.env["dropouts"] = k + 1
    if train is False:
        cx.ops("Identity", [x], [(out, t_out)])
        cx.ops("ConstantOfShape", [cx.ints(t_x.shape, "shape")], [(mask_out, t_mask)], value=_value_tensor("b8", True))
        return
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise cx.unsupported(f"dropout probability {p!r}")
    mask = f"native_dropout.{k}"
    if mask in cx.b.types:
        raise cx.fail(f"the graph already has a value named {mask!r}")
    cx.b.add_input(mask, TensorType("b8", t_x.shape))
    scale = 1.0 / (1.0 - p) if p < 1 else 0.0
    consts = [cx.operand(scale, t_x.dtype), cx.operand(0.0, t_x.dtype)]
    keep = cx.op("Where", [mask, *consts], t_x, hint="scale")
    cx.ops("Mul", [x, keep], [(out, t_out)])
    cx.ops("Identity", [mask], [(mask_out, t_mask)])


#: ``kind`` of aten_ops.yaml -> handler
HANDLERS: dict[str, Callable[[NodeCtx], None]] = {
    "reshape": _reshape,
    "t": _t,
    "transpose": _transpose,
    "permute": _permute,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "expand": _expand,
    "identity": _identity,
    "copy": _copy,
    "matmul": _matmul,
    "addmm": _addmm,
    "binary": _binary,
    "compare": _compare,
    "bitwise": _bitwise,
    "unary": _unary,
    "gelu": _gelu,
    "softmax": _softmax,
    "masked_fill": _masked_fill,
    "reduce": _reduce,
    "mean": _mean,
    "nonzero": _nonzero,
    "sigmoid_backward": _sigmoid_backward,
    "sym_size": _sym_size,
    "max_dim": _max_dim,
    "slice": _slice,
    "slice_scatter": _slice_scatter,
    "cat": _cat,
    "split": _split,
    "embedding": _embedding,
    "index": _index,
    "index_put": _index_put,
    "fill": _fill,
    "arange": _arange,
    "dropout": _dropout,
}
