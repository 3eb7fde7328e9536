"""The ONNX graph under construction and the per-node view the op handlers write through.

Every value gets a type: fx values the annotation of their node, helper values (the
``<fxname>/matmul`` of a decomposition) the type their handler computes.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from analyzer.errors import InputError
from analyzer.importers.fx.parse import FxGraph, FxNode, Ref, TensorType

__all__ = ["ONNX_DTYPES", "GraphBuilder", "NodeCtx", "bind", "make_tensor", "parse_schema", "promote"]

#: fx dtype code -> ONNX element type
ONNX_DTYPES = {
    "b8": TensorProto.BOOL,
    "u8": TensorProto.UINT8,
    "u16": TensorProto.UINT16,
    "u32": TensorProto.UINT32,
    "u64": TensorProto.UINT64,
    "i8": TensorProto.INT8,
    "i16": TensorProto.INT16,
    "i32": TensorProto.INT32,
    "i64": TensorProto.INT64,
    "f16": TensorProto.FLOAT16,
    "bf16": TensorProto.BFLOAT16,
    "f32": TensorProto.FLOAT,
    "f64": TensorProto.DOUBLE,
}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}
_REQUIRED = object()


def _kind(dtype: str) -> int:
    return _KIND_RANK["f" if dtype.startswith("bf") else dtype[0]]


def promote(*dtypes_and_dims: tuple[str, int]) -> str:
    """torch's result dtype of tensor operands ``(dtype, ndim)``: the highest category
    (bool < integer < floating) wins; within it, dimensioned tensors win over 0-d ones,
    then the wider type (``torch.result_type``, simplified: no unsigned/signed mixing)."""
    return max(dtypes_and_dims, key=lambda d: (_kind(d[0]), d[1] > 0, int(d[0].lstrip("bfiu") or 0)))[0]


def parse_schema(text: str) -> list[tuple[str, object]]:
    """``"self, dim=0, end=None"`` -> ``[("self", REQUIRED), ("dim", 0), ("end", None)]`` (ATen
    ``native_functions.yaml`` argument names, defaults as Python literals; ``*`` is ignored)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part or part == "*":
            continue
        name, _, default = part.partition("=")
        out.append((name.strip(), ast.literal_eval(default.strip()) if default else _REQUIRED))
    return out


def bind(schema: Sequence[tuple[str, object]], args: Sequence, kwargs: dict, where: str, what: str) -> dict:
    """Arguments of a call by schema name, defaults filled in.

    Raises:
        InputError: too many positional arguments, an unknown keyword, a missing argument.
    """
    if len(args) > len(schema):
        raise InputError(f"{where}: {what} takes {len(schema)} arguments, got {len(args)}")
    bound = {name: value for (name, _), value in zip(schema, args)}
    for key, value in kwargs.items():
        if key not in {n for n, _ in schema} or key in bound:
            raise InputError(f"{where}: {what}: unexpected argument {key!r}")
        bound[key] = value
    for name, default in schema:
        if name not in bound:
            if default is _REQUIRED:
                raise InputError(f"{where}: {what}: missing argument {name!r}")
            bound[name] = default
    return bound


def make_tensor(name: str, dtype: str, values, dims: Sequence[int]) -> TensorProto:
    """A TensorProto of fx dtype ``dtype`` and shape ``dims`` holding ``values``."""
    tensor = TensorProto()
    _write_tensor(tensor, name, dtype, values, dims)
    return tensor


def _write_tensor(tensor: TensorProto, name: str, dtype: str, values, dims: Sequence[int]) -> None:
    """Fill the empty ``tensor`` as :func:`make_tensor` describes (``helper.make_tensor``'s
    fields; an int64 array, the importer's shapes and axes, is written directly)."""
    direct = dtype == "i64" and isinstance(values, np.ndarray) and values.dtype.type is np.int64
    if direct and values.size == math.prod(dims):
        tensor.data_type = TensorProto.INT64
        tensor.name = name
        tensor.dims.extend(dims)
        tensor.int64_data.extend(values.reshape(-1).tolist())
        return
    flat = np.asarray(values).reshape(-1).tolist()
    if dtype == "b8":
        flat = [bool(v) for v in flat]
    elif dtype[0] in "iu":
        flat = [int(v) for v in flat]
    else:
        flat = [float(v) for v in flat]
    tensor.CopyFrom(helper.make_tensor(name, ONNX_DTYPES[dtype], list(dims), flat))


class GraphBuilder:
    """The model being written: nodes and initializers go straight into its graph (``model``;
    inputs, outputs and value infos are added from ``inputs`` and ``types`` when it is done),
    with the value types and the custom domains used (a plain class: ``@dataclass`` took
    0.5 ms of each process importing this module)."""

    def __init__(self) -> None:
        self.model = onnx.ModelProto()
        self.nodes = self.model.graph.node
        self.initializers = self.model.graph.initializer
        self.produced: list[str] = []  # node outputs in graph order ("" for an omitted one)
        self.inputs: list[str] = []
        self.types: dict[str, TensorType] = {}
        self.domains: set[str] = set()

    def fresh(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``, ... whichever is not a value name yet."""
        name, k = base, 0
        while name in self.types:
            k += 1
            name = f"{base}_{k}"
        return name

    def add_input(self, name: str, ttype: TensorType) -> None:
        """A graph input."""
        self.types[name] = ttype
        self.inputs.append(name)

    def add_initializer(self, name: str, ttype: TensorType, values) -> str:
        """A constant of ``ttype`` holding ``values`` (anything numpy reshapes to its shape)."""
        self.types[name] = ttype
        _write_tensor(self.initializers.add(), name, ttype.dtype, values, ttype.shape)
        return name

    def add_node(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[tuple[str, TensorType | None]],
        *,
        name: str,
        domain: str = "",
        source: str | None = None,
        attrs: dict | None = None,
    ) -> onnx.NodeProto:
        """Append a node; ``outputs`` are (name, type or None when unknown)."""
        node = self.nodes.add()  # as helper.make_node writes it
        node.op_type = op_type
        node.input.extend(inputs)
        node.output.extend([o for o, _ in outputs])
        if name:
            node.name = name
        if domain:
            node.domain = domain
        for key, value in (attrs or {}).items():
            node.attribute.append(
                value if isinstance(value, onnx.AttributeProto) else helper.make_attribute(key, value)
            )
        if source:
            node.metadata_props.add(key="source", value=source)
        for out, ttype in outputs:
            if out in self.types and ttype is not None and self.types[out] != ttype:
                raise AssertionError(f"value {out!r} typed twice")
            if ttype is not None:
                self.types[out] = ttype
        if domain:
            self.domains.add(domain)
        self.produced.extend(o for o, _ in outputs)
        return node


class NodeCtx:
    """What an op handler sees of one fx node: its bound arguments, its type, and helpers that
    write ONNX nodes named after it.

    Attributes:
        node: the fx node.
        a: arguments by schema name (defaults filled in).
        spec: the node's entry of the op table.
        world_size: the ``import_fx`` argument.
    """

    def __init__(self, b: GraphBuilder, graph: FxGraph, node: FxNode, a: dict, spec: dict, env: dict) -> None:
        self.b = b
        self.graph = graph
        self.node = node
        self.a = a
        self.spec = spec
        self.env = env
        self.world_size: int | None = env["world_size"]
        self._named = False
        self._helpers: set[str] = set()

    @property
    def name(self) -> str:
        """The fx name of the node."""
        return self.node.name

    @property
    def type(self) -> TensorType:
        """The node's annotation.

        Raises:
            InputError: the node has none.
        """
        if self.node.type is None:
            raise self.fail("no type annotation on this node")
        return self.node.type

    def fail(self, message: str) -> InputError:
        """An :class:`InputError` ``path:line: <target>: message``."""
        return InputError(f"{self.graph.where(self.node.line)}: {self.node.target}: {message}")

    def unsupported(self, what: str) -> InputError:
        """An :class:`InputError` for an argument pattern this importer does not map."""
        return self.fail(f"unsupported {what}")

    def value(self, arg: object, what: str = "tensor argument") -> str:
        """The ONNX name of a tensor argument.

        Raises:
            InputError: ``arg`` is not a reference to a graph value.
        """
        if not isinstance(arg, Ref):
            raise self.fail(f"{what} is not a tensor ({arg!r})")
        return arg.name

    def type_of(self, name: str) -> TensorType:
        """Type of an ONNX value."""
        try:
            return self.b.types[name]
        except KeyError:
            raise self.fail(f"no type known for {name!r} (an unannotated tuple item?)") from None

    def producer(self, arg: object) -> FxNode | None:
        """The fx node that defines a referenced value (None for inputs and non-references)."""
        return self.graph.by_name.get(arg.name) if isinstance(arg, Ref) else None

    def helper_name(self, hint: str) -> str:
        """A fresh ``<fxname>/<hint>`` value name."""
        name = self.b.fresh(f"{self.name}/{hint}")
        self._helpers.add(name)
        return name

    def const(self, values, dtype: str, shape: Sequence[int] | None = None, hint: str = "const") -> str:
        """An initializer ``<fxname>/<hint>`` of ``dtype``; ``shape`` defaults to that of ``values``."""
        shape = tuple(np.shape(values)) if shape is None else tuple(shape)
        return self.b.add_initializer(self.helper_name(hint), TensorType(dtype, shape), values)

    def ints(self, values: Sequence[int], hint: str) -> str:
        """A 1-D int64 initializer (shapes, axes, split sizes)."""
        return self.const(np.asarray(list(values), dtype=np.int64), "i64", (len(values),), hint)

    def op(
        self,
        op_type: str,
        inputs: Sequence[str],
        ttype: TensorType | None,
        *,
        hint: str | None = None,
        out: str | None = None,
        domain: str = "",
        **attrs,
    ) -> str:
        """One single-output node. Its output is ``out``, else the fx name when ``hint`` is None,
        else a fresh ``<fxname>/<hint>``. Returns the output name."""
        if out is None:
            out = self.name if hint is None else self.helper_name(hint)
        self.ops(op_type, inputs, [(out, ttype)], domain=domain, **attrs)
        return out

    def ops(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[tuple[str, TensorType | None]],
        *,
        domain="",
        **attrs,
    ) -> list[str]:
        """One node with several outputs (name, type or None)."""
        main = not self._named and any(o not in self._helpers for o, _ in outputs)
        name = self.name if main else outputs[0][0]
        self._named = self._named or main
        self.b.add_node(op_type, inputs, outputs, name=name, domain=domain, source=self.node.source, attrs=attrs)
        return [o for o, _ in outputs]

    def cast(self, name: str, dtype: str) -> str:
        """``name`` converted to ``dtype`` (a Cast helper only when the dtype differs)."""
        t = self.type_of(name)
        if t.dtype == dtype:
            return name
        return self.op("Cast", [name], TensorType(dtype, t.shape), hint="cast", to=ONNX_DTYPES[dtype])

    def operand(self, arg: object, dtype: str) -> str:
        """A tensor argument cast to ``dtype``, or a Python number as a 0-d initializer of ``dtype``."""
        if isinstance(arg, Ref):
            return self.cast(self.value(arg), dtype)
        if isinstance(arg, (bool, int, float)):
            return self.const(arg, dtype, (), hint="scalar")
        raise self.fail(f"operand {arg!r} is neither a tensor nor a number")

    def result(self, index: int) -> str:
        """ONNX name of item ``index`` of this node's tuple result: the fx name of its first
        ``getitem``, else ``<fxname>/out<index>``."""
        got = self.env["getitems"].get(self.name, {}).get(index)
        return got if got is not None else self.b.fresh(f"{self.name}/out{index}")

    def result_type(self, index: int) -> TensorType | None:
        """The annotation of item ``index`` (None when no ``getitem`` reads it)."""
        got = self.env["getitems"].get(self.name, {}).get(index)
        return self.graph.by_name[got].type if got is not None else None

    def results_used(self) -> set[int]:
        """Indexes of the tuple result that some ``getitem`` reads."""
        return set(self.env["getitems"].get(self.name, {}))
