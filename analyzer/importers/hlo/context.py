"""The values of one HLO import and the op table (:mod:`analyzer.importers.hlo.to_onnx` runs the
import, :mod:`analyzer.importers.hlo.ops` handles each opcode with them): a :class:`Const` (a folded
numpy value), a :class:`Lazy` broadcast, and :class:`Ctx`, the builder state an op handler reads
and writes."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analyzer.errors import InputError
from analyzer.importers.fx.emit import ONNX_DTYPES
from analyzer.importers.fx.parse import TensorType
from analyzer.importers.hlo import attrs as A
from analyzer.importers.hlo.parse import DTYPES, Instruction, Shape

if TYPE_CHECKING:
    from analyzer.importers.hlo.to_onnx import _Importer

__all__ = ["Const", "Ctx", "Lazy", "OPSET", "op_table", "tensor_type"]

OPSET = 20
_TABLE = Path(__file__).with_name("ops.yaml")


@functools.lru_cache(maxsize=1)
def op_table() -> dict:
    """``ops.yaml``: ``opcodes``, ``directions``, ``reducers``, ``custom_calls``."""
    import yaml

    return yaml.safe_load(_TABLE.read_text(encoding="utf-8"))


class Const:
    """A folded constant: numpy ``array`` of importer dtype ``dtype``; ``name`` of its
    initializer once written."""

    __slots__ = ("array", "dtype", "name", "hint")

    def __init__(self, array: np.ndarray, dtype: str, hint: str) -> None:
        self.array = array
        self.dtype = dtype
        self.hint = hint
        self.name: str | None = None


class Lazy:
    """HLO ``broadcast`` not yet written: ``base`` (an ONNX value name or a :class:`Const`) has
    the result's rank with size 1 on broadcast axes (a Const base may have fewer, leading,
    axes); ``ttype`` is the result type; ``name``/``source`` the broadcast's, for its Expand."""

    __slots__ = ("base", "ttype", "name", "source", "written")

    def __init__(self, base, ttype: TensorType, name: str, source: str | None) -> None:
        self.base = base
        self.ttype = ttype
        self.name = name
        self.source = source
        self.written: str | None = None


def tensor_type(shape: Shape, where: str) -> TensorType:
    """The importer type of an array shape."""
    if shape.is_tuple or shape.dtype not in DTYPES:
        raise InputError(f"{where}: unsupported element type {shape}")
    return TensorType(DTYPES[shape.dtype], tuple(shape.dims))


class Ctx:
    """What an op handler sees of one instruction: its operands' values, its type, and helpers
    that write ONNX nodes named after it.

    Attributes:
        inst: the instruction.
        name: its ONNX name (prefixed inside an inlined call).
        spec: its entry of the op table.
        imp: the importer state (builder, module, rank, world size).
    """

    def __init__(self, imp: _Importer, inst: Instruction, name: str, args: list, spec: dict) -> None:
        self.imp = imp
        self.inst = inst
        self.name = name
        self.args = args
        self.spec = spec
        self.source = imp.source(inst)

    # --- reading ------------------------------------------------------------------------
    @property
    def type(self) -> TensorType:
        return tensor_type(self.inst.shape, self.where)

    @property
    def where(self) -> str:
        return self.imp.module.where(self.inst.line)

    def fail(self, message: str) -> InputError:
        """``path:line: opcode name: message``."""
        return InputError(f"{self.where}: {self.inst.opcode} {self.inst.name}: {message}")

    def attr(self, key: str, decode, required: bool = True):
        """Attribute ``key`` decoded by ``decode`` (an :mod:`attrs` function); None when absent
        and not required."""
        raw = self.inst.attrs.get(key)
        if raw is None:
            if required:
                raise self.fail(f"missing attribute {key}")
            return None
        try:
            return decode(raw)
        except A.AttrError as exc:
            raise self.fail(f"attribute {key}: {exc}") from None

    def type_of(self, value) -> TensorType:
        if isinstance(value, Const):
            return TensorType(value.dtype, tuple(value.array.shape))
        if isinstance(value, Lazy):
            return value.ttype
        if isinstance(value, str):
            return self.imp.b.types[value]
        raise self.fail("a tuple operand where an array is expected")

    def value(self, k: int) -> str:
        """Operand ``k`` as an ONNX value name (constants and broadcasts written out)."""
        return self.imp.write(self.args[k])

    # --- writing ------------------------------------------------------------------------
    def op(
        self, op_type: str, inputs, ttype: TensorType | None, *, hint: str | None = None, domain: str = "", **attrs
    ) -> str:
        """One node; its output is the instruction's name, or ``<name>/<hint>``. Returns it."""
        out = self.name if hint is None else self.imp.b.fresh(f"{self.name}/{hint}")
        self.imp.b.add_node(
            op_type, list(inputs), [(out, ttype)], name=out, domain=domain, source=self.source, attrs=attrs
        )
        return out

    def ints(self, values, hint: str) -> str:
        """A 1-D int64 initializer ``<name>/<hint>``."""
        name = self.imp.b.fresh(f"{self.name}/{hint}")
        arr = np.asarray(list(values), dtype=np.int64)
        return self.imp.b.add_initializer(name, TensorType("i64", (len(arr),)), arr)

    def const(self, array: np.ndarray, dtype: str, hint: str) -> str:
        """An initializer ``<name>/<hint>`` of ``array``."""
        name = self.imp.b.fresh(f"{self.name}/{hint}")
        return self.imp.b.add_initializer(name, TensorType(dtype, tuple(array.shape)), array)

    def cast(self, name: str, dtype: str) -> str:
        """``name`` converted to ``dtype`` (a Cast only when it differs)."""
        t = self.imp.b.types[name]
        if t.dtype == dtype:
            return name
        return self.op("Cast", [name], TensorType(dtype, t.shape), hint="cast", to=ONNX_DTYPES[dtype])

    def transpose(self, name: str, perm, hint: str) -> str:
        """``name`` transposed by ``perm`` (no node for the identity permutation)."""
        perm = list(perm)
        if perm == sorted(perm):
            return name
        t = self.imp.b.types[name]
        return self.op("Transpose", [name], TensorType(t.dtype, tuple(t.shape[p] for p in perm)), hint=hint, perm=perm)

    def reshape(self, name: str, shape, hint: str) -> str:
        """``name`` reshaped to ``shape`` (no node when it has that shape)."""
        t = self.imp.b.types[name]
        if tuple(t.shape) == tuple(shape):
            return name
        return self.op(
            "Reshape", [name, self.ints(shape, f"{hint}_shape")], TensorType(t.dtype, tuple(shape)), hint=hint
        )
