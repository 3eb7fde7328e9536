"""A parsed torch.fx ATen graph -> ``onnx.ModelProto`` (opset 20 plus custom domains).

Naming: node outputs carry the fx node names; items of tuple results are named after the
``getitem`` nodes reading them (``<fxname>/out<k>`` when none does); helper values and
nodes of a decomposition are ``<fxname>/<hint>`` (``addmm/matmul``). Every node carries
metadata ``source`` = the ``File: path:line in fn, code: ...`` comment above its fx node
(read back by :func:`analyzer.facts.source.parse_source`). Every value has a value_info:
fx values the dtype and shape of their annotation.

Per-op semantics: :mod:`analyzer.importers.fx.aten` (ATen ops) and :mod:`analyzer.importers.fx.kernels`
(collectives, custom kernels, ``auto_functionalized``), driven by the table
``aten_ops.yaml``; local-function bodies of custom kernels: :mod:`analyzer.importers.fx.functions`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import onnx
from onnx import helper

from analyzer.cache import cached, digest
from analyzer.errors import InputError, shown
from analyzer.importers.fx import aten, kernels
from analyzer.importers.fx.emit import ONNX_DTYPES, GraphBuilder, NodeCtx, bind, parse_schema
from analyzer.importers.fx.functions import OPSET, function_protos
from analyzer.importers.fx.parse import FxGraph, FxNode, TensorType, parse_fx

__all__ = ["OPSET", "fx_to_onnx", "import_fx", "op_table"]

_HANDLERS = {**aten.HANDLERS, **kernels.HANDLERS}
_IR_VERSION = 10  # node metadata_props need IR 10; opset 20 needs IR >= 9


_OP_TABLE = Path(__file__).with_name("aten_ops.yaml")


@functools.lru_cache(maxsize=1)
def op_table() -> dict[str, dict]:
    """The op table ``aten_ops.yaml``: fx target -> entry (``kind``, ``schema``, ...), read
    through the package cache (:mod:`analyzer.cache`; YAML with libyaml 3 ms, the pickle 0.3)."""
    table = cached("fx-ops", digest([_OP_TABLE.read_bytes()]), _read_op_table)
    for target, entry in table.items():
        if entry["kind"] not in _HANDLERS:
            raise AssertionError(f"aten_ops.yaml: {target}: unknown kind {entry['kind']!r}")
    return table


def _read_op_table() -> dict[str, dict]:
    import yaml  # here: read only when the cache has no table (importing it takes 10 ms)

    return yaml.load(_OP_TABLE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _schema(entry: dict) -> list:
    """The parsed ``schema`` of an op table entry, parsed when an op of it is first met."""
    parsed = entry.get("_schema")
    if parsed is None:
        parsed = entry["_schema"] = parse_schema(entry.get("schema", ""))
    return parsed


def import_fx(
    path: str | Path,
    *,
    world_size: int | None = None,
    constants: Mapping[str, float] | None = None,
    outputs: Iterable[int] | None = None,
    group_sizes: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    """Import one torch.fx ATen graph dump as an ONNX model.

    Args:
        path: the ``.py`` text torch.fx printed (parsed, never executed).
        world_size: 1 for a sequential graph (every collective becomes the identity; a
            collective over more than one rank is an error); None or N keeps collectives as
            ``com.microsoft`` / ``shardlog`` nodes (N bounds their ``group_size``).
        constants: values of ``_tensor_constantN`` constants, which the dump does not hold;
            given ones become initializers, the others graph inputs. Names the graph does not
            have are ignored (one mapping can serve the sequential and the rank graphs).
        outputs: positions of the returned list to keep as graph outputs (AOTAutograd forward
            graphs return the user outputs first, then tensors saved for backward); default
            all non-None positions.
        group_sizes: process-group name -> number of ranks in it, for groups the dump cannot
            tell (torch's functional collectives name their group only). A collective over a
            group of one rank is the identity (e.g. Megatron's data-parallel loss averaging
            at data-parallel size 1).

    Returns:
        The model; it passes ``onnx.checker.check_model`` (not run here: the tests check the
        importer's output, ``shardlog import-fx`` checks what it writes).

    Raises:
        InputError: ``path:line: ...`` for a file that is not an fx graph dump, an op without
            ONNX mapping (``no ONNX mapping for aten.<op>``), an unsupported argument pattern,
            a bad ``world_size`` or ``outputs`` argument.
    """
    return fx_to_onnx(
        parse_fx(path), world_size=world_size, constants=constants, outputs=outputs, group_sizes=group_sizes
    )


def fx_to_onnx(
    graph: FxGraph,
    *,
    world_size: int | None = None,
    constants: Mapping[str, float] | None = None,
    outputs: Iterable[int] | None = None,
    group_sizes: Mapping[str, int] | None = None,
) -> onnx.ModelProto:
    """:func:`import_fx` on an already parsed graph."""
    if world_size is not None and (not isinstance(world_size, int) or isinstance(world_size, bool) or world_size < 1):
        raise InputError(f"{graph.path}: world_size must be a positive integer, got {world_size!r}")
    constants = dict(constants or {})
    b = GraphBuilder()
    env = {
        "world_size": world_size,
        "group_sizes": dict(group_sizes or {}),
        "table": op_table(),
        "getitems": _getitems(graph),
        "dropouts": 0,
        "functions": set(),
        "bind": lambda node: _bind(graph, node),
    }
    for inp in graph.inputs:
        b.add_input(inp.name, inp.type)
    for node in graph.nodes:
        _convert(b, graph, node, env, constants)
    out_names = _outputs(b, graph, outputs)
    return _model(b, graph, out_names, env["functions"])


def _getitems(graph: FxGraph) -> dict[str, dict[int, str]]:
    """base name -> {index: name of the first getitem reading it}."""
    found: dict[str, dict[int, str]] = {}
    for node in graph.nodes:
        if node.target == "getitem":
            found.setdefault(node.args[0].name, {}).setdefault(node.args[1], node.name)
    return found


def _bind(graph: FxGraph, node: FxNode) -> dict:
    entry = op_table().get(node.target)
    if entry is None:
        raise InputError(f"{graph.where(node.line)}: {_no_mapping(node.target)}")
    return bind(_schema(entry), node.args, node.kwargs, graph.where(node.line), node.target)


def _no_mapping(target: str) -> str:
    return f"no ONNX mapping for {target}"


def _constant_value(where: str, node: FxNode, value: float) -> float:
    """The value given for a ``_tensor_constantN`` (``--constant``, a spec's ``constants``).

    Raises:
        InputError: the constant has no known type or more than one element, or the value does
            not fit its dtype (an integer or bool constant given inf, nan, a fraction or a
            number out of range).
    """
    import math

    if node.type is None or math.prod(d if isinstance(d, int) else 2 for d in node.type.shape) != 1:
        shape = f"shape {list(node.type.shape)}" if node.type is not None else "no type"
        raise InputError(f"{where}: constant {shown(node.name)} has {shape}: a value is for a one-element constant")
    dtype = node.type.dtype
    if dtype == "b8" or dtype[0] in "iu":
        bits = int(dtype[1:]) if dtype[1:].isdigit() else 64
        lo, hi = (0, 1) if dtype == "b8" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if dtype[0] == "u":
            lo, hi = 0, 2**bits - 1
        if not math.isfinite(value) or value != int(value) or not lo <= int(value) <= hi:
            raise InputError(
                f"{where}: constant {shown(node.name)} is {dtype}: {shown(value)} is not one of its values "
                f"(an integer from {lo} to {hi})"
            )
    return value


def _convert(b: GraphBuilder, graph: FxGraph, node: FxNode, env: dict, constants: dict) -> None:
    where = graph.where(node.line)
    if node.target == "get_attr":
        if node.name in constants:
            b.add_initializer(node.name, node.type, _constant_value(where, node, constants[node.name]))
        else:
            b.add_input(node.name, node.type)
        return
    if node.target == "getitem":
        _getitem(b, graph, node, env)
        return
    entry = env["table"].get(node.target)
    if entry is None:
        raise InputError(f"{where}: {_no_mapping(node.target)}")
    a = _bind(graph, node) if entry.get("schema") else {}
    cx = NodeCtx(b, graph, node, a, entry, env)
    emitted = len(b.nodes)
    _HANDLERS[entry["kind"]](cx)
    if len(b.nodes) == emitted or (node.type is not None and node.name not in b.types):
        raise AssertionError(f"{where}: handler {entry['kind']} did not produce {node.name!r}")


def _getitem(b: GraphBuilder, graph: FxGraph, node: FxNode, env: dict) -> None:
    where = graph.where(node.line)
    base, index = node.args[0].name, node.args[1]
    first = env["getitems"][base][index]
    if first not in b.types:
        raise InputError(f"{where}: {base!r} has no item {index}")
    if first != node.name:
        b.add_node("Identity", [first], [(node.name, b.types[first])], name=node.name, source=node.source)
    if node.type is not None and b.types[node.name] != node.type:
        raise InputError(f"{where}: item {index} of {base!r} is {b.types[node.name]}, annotated {node.type}")


def _outputs(b: GraphBuilder, graph: FxGraph, positions: Iterable[int] | None) -> list[str]:
    where = graph.where(graph.output_line)
    returned = graph.outputs
    if positions is None:
        picked = [k for k, name in enumerate(returned) if name is not None]
    else:
        picked = list(dict.fromkeys(positions))  # a position given twice is kept once
        for k in picked:
            if not isinstance(k, int) or not 0 <= k < len(returned):
                raise InputError(
                    f"{where}: output position {shown(k)} out of range (the graph returns {len(returned)} values)"
                )
            if returned[k] is None:
                raise InputError(f"{where}: output position {k} is None")
    names: list[str] = []
    seen: set[str] = set()
    for k in picked:
        name = returned[k]
        if name in seen:  # two positions return the same value: each output gets a name of its own
            dup = b.fresh(f"{name}/out{k}")
            b.add_node("Identity", [name], [(dup, b.types[name])], name=dup)
            name = dup
        names.append(name)
        seen.add(name)
    return names


def _value_info(name: str, ttype: TensorType) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, ONNX_DTYPES[ttype.dtype], list(ttype.shape))


class _ValueInfos:
    """Value infos of one graph: each distinct type is built once by ``make_tensor_value_info``
    and copied (the same bytes as building each value's anew)."""

    def __init__(self, types: dict[str, TensorType]) -> None:
        self.types = types
        self.built: dict[TensorType, onnx.TypeProto] = {}

    def write(self, vi: onnx.ValueInfoProto, name: str) -> None:
        """Fill the empty ``vi`` with the value info of ``name``."""
        ttype = self.types[name]
        proto = self.built.get(ttype)
        if proto is None:
            proto = self.built[ttype] = _value_info("", ttype).type
        vi.name = name
        vi.type.CopyFrom(proto)


def _model(b: GraphBuilder, graph: FxGraph, outputs: list[str], used: set) -> onnx.ModelProto:
    """The builder's model completed: the fields ``helper.make_graph`` and ``helper.make_model``
    would write, written in place (they copy every node and value info once more)."""
    init_names = {t.name for t in b.initializers}
    boundary = set(b.inputs) | set(outputs) | init_names
    info = _ValueInfos(b.types)
    model = b.model
    g = model.graph
    g.name = Path(graph.path).stem
    for n in b.inputs:
        info.write(g.input.add(), n)
    for n in outputs:
        info.write(g.output.add(), n)
    for n in b.produced:
        if n and n not in boundary and n in b.types:
            info.write(g.value_info.add(), n)
    functions = function_protos(used)
    domains = sorted(b.domains | {f.domain for f in functions})
    opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in domains]
    model.ir_version = _IR_VERSION
    model.opset_import.extend(opsets)
    model.functions.extend(functions)
    model.producer_name = "shardlog import-fx"
    model.doc_string = f"imported from the torch.fx graph dump {graph.path}"
    # no onnx.checker here: it took 0.004 s of each imported graph of a check; the importer's
    # output is checked by the tests (every published dump, every mapping) and by import-fx
    return model
