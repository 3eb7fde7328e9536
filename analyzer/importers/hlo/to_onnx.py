"""A parsed HLO module -> ``onnx.ModelProto`` (opset 20 plus ``com.microsoft`` collectives),
for one rank.

Naming: the ENTRY parameters are the graph inputs, named as in the HLO (``p9.10``), in
parameter order; every instruction's main node and output carry the instruction's name
(``dot.52``), helper nodes ``<name>/<hint>``; instructions of an inlined ``call`` are
``<call name>/<name>``. Outputs are the ROOT (each element of a ROOT tuple). Only what the
ROOT reads is written (dead instructions, e.g. the copies of aliased kv caches, are dropped);
every parameter stays a graph input. Each node carries metadata ``source`` = the model's own
frame of its instruction (:mod:`analyzer.importers.hlo.frames`).

Values while importing (:class:`Ctx`): an ONNX value name; a :class:`Const` (folded numpy
value, written as an initializer where a node reads it; :mod:`analyzer.importers.hlo.fold`);
a :class:`Lazy` broadcast (HLO ``broadcast`` kept as its operand with size-1 axes, which ONNX
elementwise ops broadcast implicitly as a torch export does; written as ``Expand`` where
another op reads it); a tuple. Per-op semantics: :mod:`analyzer.importers.hlo.ops` and the
table ``ops.yaml``.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
from onnx import helper

from analyzer.errors import InputError
from analyzer.importers.fx.emit import ONNX_DTYPES, GraphBuilder
from analyzer.importers.fx.parse import TensorType
from analyzer.importers.hlo import attrs as A
from analyzer.importers.hlo import ops
from analyzer.importers.hlo.context import OPSET, Const, Ctx, Lazy, op_table, tensor_type  # noqa: F401
from analyzer.importers.hlo.fold import FOLD_LIMIT, NUMPY_DTYPES, fold
from analyzer.importers.hlo.frames import model_frame, source_text
from analyzer.importers.hlo.parse import Computation, HloModule, Instruction

__all__ = ["hlo_to_onnx"]

_IR_VERSION = 10

class _Importer:
    """State of one import: the builder, the module, the rank, the handlers."""

    def __init__(self, module: HloModule, rank: int | None, world_size: int | None) -> None:
        self.module = module
        self.rank = rank
        self.world_size = world_size
        self.b = GraphBuilder()
        self.table = op_table()
        self.handlers = ops.HANDLERS
        self.depth = 0
        self.input_names: dict[str, str] = {}

    def source(self, inst: Instruction) -> str | None:
        raw = inst.attrs.get("metadata")
        if raw is None:
            return None
        try:
            meta = A.metadata(raw)
        except A.AttrError:
            return None
        frame = model_frame(meta, self.module.tables)
        return source_text(frame, meta.get("op_name") or inst.opcode) if frame else None

    def write(self, value) -> str:
        """An ONNX value name for ``value`` (a Const becomes an initializer, a Lazy an Expand)."""
        if isinstance(value, str):
            return value
        if isinstance(value, Const):
            if value.name is None:
                value.name = self.b.fresh(value.hint)
                self.b.add_initializer(value.name, TensorType(value.dtype, tuple(value.array.shape)), value.array)
            return value.name
        if isinstance(value, Lazy):
            if value.written is None:
                base = self.write(value.base)
                shape_name = self.b.fresh(f"{value.name}/shape")
                self.b.add_initializer(
                    shape_name, TensorType("i64", (len(value.ttype.shape),)), np.asarray(value.ttype.shape, np.int64)
                )
                out = self.b.fresh(value.name)
                self.b.add_node("Expand", [base, shape_name], [(out, value.ttype)], name=out, source=value.source)
                value.written = out
            return value.written
        raise InputError(f"{self.module.path}: a tuple value used as an array")

    def run(self, comp: Computation, args: list | None, prefix: str) -> object:
        """Import ``comp`` (its ROOT's value); ``args`` are the values of its parameters
        (None for ENTRY: graph inputs)."""
        live = _live(comp)
        env: dict[str, object] = {}
        for inst in comp.instructions:
            if inst.name not in live:
                continue
            name = prefix + inst.name
            if inst.opcode == "parameter":
                env[inst.name] = self._parameter(inst, args, name)
                continue
            missing = [o for o in inst.operands if o not in env]
            if missing and not (inst.opcode == "constant"):
                raise InputError(
                    f"{self.module.where(inst.line)}: {inst.name} reads {missing[0]}, not defined before it"
                )
            operands = [env[o] for o in inst.operands if o in env]
            env[inst.name] = self.instruction(inst, name, operands)
        return env[comp.root.name]

    def _parameter(self, inst: Instruction, args: list | None, name: str):
        try:
            number = int(str(inst.literal))
        except (TypeError, ValueError):
            raise InputError(f"{self.module.where(inst.line)}: parameter {inst.name} without a number") from None
        if args is None:
            return self.input_names[inst.name]  # added as a graph input by hlo_to_onnx
        if not 0 <= number < len(args):
            raise InputError(f"{self.module.where(inst.line)}: parameter({number}) of a call with {len(args)} operands")
        return args[number]

    def instruction(self, inst: Instruction, name: str, operands: list):
        spec = self.table["opcodes"].get(inst.opcode)
        if spec is None:
            raise InputError(f"{self.module.where(inst.line)}: unsupported HLO op {inst.opcode} ({inst.name})")
        cx = Ctx(self, inst, name, operands, spec)
        folded = self._fold(cx)
        if folded is not None:
            return folded
        return self.handlers[spec["kind"]](cx)

    def _fold(self, cx: Ctx) -> Const | None:
        inst = cx.inst
        if inst.shape.is_tuple or inst.opcode in ("constant", "parameter", "broadcast", "iota", "rank_id"):
            return None
        if not all(isinstance(a, Const) or (isinstance(a, Lazy) and isinstance(a.base, Const)) for a in cx.args):
            return None
        ttype = cx.type
        if int(np.prod(ttype.shape, dtype=np.int64)) > FOLD_LIMIT:
            return None
        arrays = [a.array if isinstance(a, Const) else np.broadcast_to(a.base.array, a.ttype.shape) for a in cx.args]
        decoded = {}
        for key, decode in (
            ("dimensions", A.int_list),
            ("slice", A.slice_ranges),
            ("direction", A.scalar),
            ("dynamic_slice_sizes", A.int_list),
        ):
            if key in inst.attrs:
                decoded[key] = cx.attr(key, decode)
        try:
            out = fold(inst.opcode, arrays, decoded, ttype.shape, ttype.dtype)
        except (ValueError, KeyError, IndexError) as exc:
            raise cx.fail(f"cannot evaluate on its constant operands ({exc})") from None
        return None if out is None else Const(out, ttype.dtype, cx.name)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-\[\]']*")


def _input_names(params: list[Instruction]) -> dict[str, str]:
    """ENTRY parameter -> graph input name: JAX's ``op_name`` (the argument's name, the same
    before and after the SPMD partitioner, which renames the parameters) when every parameter
    has a distinct one; else the instruction names."""
    names = {}
    for inst in params:
        raw = inst.attrs.get("metadata")
        try:
            op_name = A.metadata(raw).get("op_name", "") if raw is not None else ""
        except A.AttrError:
            op_name = ""
        names[inst.name] = op_name
    chosen = list(names.values())
    if all(n and _IDENTIFIER.fullmatch(n) for n in chosen) and len(set(chosen)) == len(chosen):
        return names
    return {inst.name: inst.name for inst in params}


def _live(comp: Computation) -> set[str]:
    """Names of the instructions the ROOT reads (transitively), parameters included."""
    live, stack = set(), [comp.root.name]
    while stack:
        name = stack.pop()
        if name in live or name not in comp.by_name:
            continue
        live.add(name)
        stack.extend(comp.by_name[name].operands)
    live.update(i.name for i in comp.instructions if i.opcode == "parameter")
    return live


def hlo_to_onnx(module: HloModule, *, rank: int | None = None, world_size: int | None = None) -> onnx.ModelProto:
    """:func:`analyzer.importers.hlo.import_hlo` on a parsed module."""
    if world_size is not None and (not isinstance(world_size, int) or isinstance(world_size, bool) or world_size < 1):
        raise InputError(f"{module.path}: world_size must be a positive integer, got {world_size!r}")
    if rank is not None and (not isinstance(rank, int) or rank < 0 or (world_size is not None and rank >= world_size)):
        raise InputError(f"{module.path}: rank {rank!r} is not a rank of world size {world_size}")
    imp = _Importer(module, rank, world_size)
    entry = module.entry
    params = sorted((i for i in entry.instructions if i.opcode == "parameter"), key=lambda i: int(str(i.literal)))
    imp.input_names = _input_names(params)
    for inst in params:
        imp.b.add_input(imp.input_names[inst.name], tensor_type(inst.shape, module.where(inst.line)))
    root = imp.run(entry, None, "")
    outputs = _outputs(imp, root, entry.root.name)
    return _model(imp, outputs)


def _outputs(imp: _Importer, root, root_name: str) -> list[str]:
    values = root if isinstance(root, tuple) else (root,)
    names: list[str] = []
    for k, value in enumerate(values):
        if isinstance(value, tuple):
            raise InputError(f"{imp.module.path}: nested tuple outputs are not supported")
        name = imp.write(value)
        if name in names or name in imp.b.inputs or name in {t.name for t in imp.b.initializers}:
            out = imp.b.fresh(f"{root_name}/out{k}")
            imp.b.add_node("Identity", [name], [(out, imp.b.types[name])], name=out)
            name = out
        names.append(name)
    return names


def _model(imp: _Importer, outputs: list[str]) -> onnx.ModelProto:
    b = imp.b
    g = b.model.graph
    g.name = imp.module.name
    init = {t.name for t in b.initializers}
    boundary = set(b.inputs) | set(outputs) | init

    def info(name: str) -> onnx.ValueInfoProto:
        t = b.types[name]
        return helper.make_tensor_value_info(name, ONNX_DTYPES[t.dtype], list(t.shape))

    g.input.extend(info(n) for n in b.inputs)
    g.output.extend(info(n) for n in outputs)
    g.value_info.extend(info(n) for n in b.produced if n and n not in boundary and n in b.types)
    model = b.model
    model.ir_version = _IR_VERSION
    model.opset_import.extend([helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in sorted(b.domains)])
    model.producer_name = "shardlog import-hlo"
    model.doc_string = f"imported from the XLA HLO module {imp.module.name} ({imp.module.path})" + (
        f", rank {imp.rank}" if imp.rank is not None else ""
    )
    return model


__all__ += ["tensor_type", "NUMPY_DTYPES"]
