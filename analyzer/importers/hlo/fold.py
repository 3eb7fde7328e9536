"""Constant folding of HLO instructions whose operands are all constants, in numpy.

The ranks of an SPMD program differ only through ``partition-id`` / ``replica-id``; JAX's SPMD
partitioner turns them into offsets (a table of offsets indexed by the partition id, times a
shard size) that feed ``dynamic-slice``. With the id a per-rank constant, those chains fold to
numbers here and the ``dynamic-slice`` becomes a static ``Slice`` of the rank's chunk. Small
constant chains (``iota`` -> ``compare`` masks) fold as well, so both sides hold them as equal
initializers (the checker compares small constants by value).

Semantics: XLA's operation semantics (https://openxla.org/xla/operation_semantics): integer
``divide`` truncates toward zero, ``remainder`` takes the dividend's sign, ``dynamic-slice``
clamps its start so the slice stays in bounds, ``convert`` from floating to integer rounds
toward zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["FOLD_LIMIT", "NUMPY_DTYPES", "fold"]

#: largest result folded (elements); larger constants stay nodes or implicit broadcasts
FOLD_LIMIT = 4096

#: importer dtype code -> numpy dtype used while folding (bf16 computed in float32)
NUMPY_DTYPES = {
    "b8": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "bf16": np.float32,
    "f32": np.float32,
    "f64": np.float64,
}


def _divide(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
        return (q * np.sign(a) * np.sign(b)).astype(a.dtype)
    return a / b


def _remainder(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np.fmod(a, np.where(b == 0, 1, b))
    return np.fmod(a, b)


_BINARY: dict[str, Callable] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "remainder": _remainder,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "power": np.power,
}
_UNARY: dict[str, Callable] = {
    "negate": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "copy": lambda x: x,
    "not": lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
}
_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def fold(opcode: str, args: Sequence[np.ndarray], attrs: dict, shape: Sequence[int], dtype: str) -> np.ndarray | None:
    """The value of ``opcode`` on constant ``args`` (numpy arrays), or None when this op is
    not folded here.

    Args:
        opcode: the HLO opcode.
        args: operand values.
        attrs: decoded attributes the op needs (``dimensions``, ``slice``, ``direction``,
            ``dynamic_slice_sizes``).
        shape: the result's dimensions.
        dtype: the result's importer dtype code.
    """
    np_dtype = NUMPY_DTYPES[dtype]
    if opcode in _BINARY and len(args) == 2:
        with np.errstate(all="ignore"):
            out = _BINARY[opcode](args[0], args[1])
    elif opcode in _UNARY and len(args) == 1:
        out = _UNARY[opcode](args[0])
    elif opcode == "compare":
        out = _COMPARE[attrs["direction"]](args[0], args[1])
    elif opcode == "select":
        out = np.where(args[0], args[1], args[2])
    elif opcode == "clamp":
        out = np.minimum(np.maximum(args[1], args[0]), args[2])
    elif opcode == "convert":
        src = args[0]
        out = (
            np.trunc(src) if np.issubdtype(src.dtype, np.floating) and not np.issubdtype(np_dtype, np.floating) else src
        )
    elif opcode in ("reshape", "bitcast"):
        out = args[0].reshape(shape)
    elif opcode == "transpose":
        out = args[0].transpose(attrs["dimensions"])
    elif opcode == "slice":
        out = args[0][tuple(slice(a, b, s) for a, b, s in attrs["slice"])]
    elif opcode == "dynamic-slice":
        x, sizes = args[0], attrs["dynamic_slice_sizes"]
        starts = [int(np.clip(int(i), 0, d - s)) for i, d, s in zip(args[1:], x.shape, sizes)]
        out = x[tuple(slice(st, st + s) for st, s in zip(starts, sizes))]
    elif opcode == "concatenate":
        out = np.concatenate(args, axis=attrs["dimensions"][0])
    elif opcode == "iota":
        axis = attrs["iota_dimension"]
        ramp = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        out = np.broadcast_to(ramp, shape)
    else:
        return None
    out = np.asarray(out).astype(np_dtype)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"folded {opcode} to shape {list(out.shape)}, expected {list(shape)}")
    return out
