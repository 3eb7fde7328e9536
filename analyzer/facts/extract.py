"""One pass over an ONNX graph writes its fact tables.

Semantics of what is recorded follow the ONNX IR spec (onnx/docs/IR.md): nodes are listed in
topological order, optional inputs are empty names, initializers are constant graph values.
Weights are never read: models are loaded with ``load_external_data=False`` and only
initializers of at most ``SMALL_CONST`` elements are decoded (for Reshape targets, Slice
bounds, axes and value hashes).
"""

from __future__ import annotations

import hashlib
import math
import operator
import os
import re
from collections import defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import numpy_helper

from analyzer.errors import InputError, escape
from analyzer.facts.shadow import NAME_FIELDS, name_chars_schema, names_schema, utf8_schema, value_dims_schema
from analyzer.facts.source import parse_source
from analyzer.importers.pipeline import STAGE_KEY
from analyzer.inputs.files import read_bytes

if TYPE_CHECKING:
    from analyzer.speedups.proofs import WireProofs

__all__ = [
    "FactTables",
    "GraphKey",
    "inference_context",
    "model_key",
    "ModelFile",
    "const_chunk_hashes",
    "extract_graph_facts",
    "load_model",
    "load_model_file",
    "wire_problem",
    "SMALL_INT_CONST",
    "SMALL_CONST",
]

SMALL_INT_CONST = 64
SMALL_CONST = 4096
INT32_MAX = 2**31 - 1


def _clamp32(v: int) -> int:
    """Engines use 32-bit integers (clingo); INT64 sentinels such as Slice's "to the end"
    become +-INT32_MAX, which keeps their meaning for every axis size that fits in 32 bits."""
    return max(-INT32_MAX, min(INT32_MAX, v))


class FactTables:
    """Rows of fact tables, by relation name, each row a mapping column name -> value.

    Column order is not known here: :meth:`tuples` orders a table by the columns of its
    ``.decl`` (schemas/*.dl), the single source of the schema.
    """

    def __init__(self) -> None:
        self._rows: dict[str, list[dict]] = defaultdict(list)

    def add(self, relation: str, **row: object) -> None:
        """Append one row to ``relation``."""
        self._rows[relation].append(row)

    def extend(self, other: FactTables) -> None:
        """Append every row of ``other``."""
        for rel, rows in other._rows.items():
            self._rows[rel].extend(rows)

    def with_graph(self, g: str) -> FactTables:
        """A copy of the tables of one graph (:func:`extract_graph_facts`) as graph ``g``'s."""
        out = FactTables()
        for rel, rows in self._rows.items():
            out._rows[rel] = [{**row, "g": g} for row in rows]
        return out

    def relations(self) -> list[str]:
        """Names of the non-empty tables."""
        return sorted(r for r, rows in self._rows.items() if rows)

    def rows(self, relation: str) -> list[dict]:
        """The rows of one table (empty list if none)."""
        return self._rows.get(relation, [])

    def tuples(self, decls: Mapping) -> dict[str, list[tuple]]:
        """All tables as tuples in the column order of their declarations.

        Args:
            decls: relation name -> declaration with ``columns`` [(name, type), ...].

        Returns:
            relation name -> list of tuples.

        Raises:
            KeyError: a table has no declaration or a row lacks a declared column.
        """
        out: dict[str, list[tuple]] = {}
        for rel, rows in self._rows.items():
            cols = [c[0] for c in decls[rel].columns]
            if len(cols) == 1:
                out[rel] = [(row[cols[0]],) for row in rows]
            elif cols:
                out[rel] = list(map(operator.itemgetter(*cols), rows))
            else:
                out[rel] = [() for _ in rows]
        return out


def inference_context(model: onnx.ModelProto) -> tuple:
    """What a check reads of a model besides its graph (ONNX shape inference reads the IR
    version, the opsets and the model's functions); not its doc string or metadata, which name
    the rank."""
    return model.ir_version, list(model.opset_import), list(model.functions)


def model_key(model: onnx.ModelProto) -> tuple:
    """A hashable key of everything a check reads of a loaded model: equal keys, the same check.
    (:class:`GraphKey` is the same test on a file's stored bytes, before the model is parsed.)"""
    ir_version, opsets, functions = inference_context(model)
    h = hashlib.blake2b(model.graph.SerializeToString(), digest_size=16)
    for part in [*opsets, *functions]:
        h.update(part.SerializeToString())
    return (ir_version, h.hexdigest())


class GraphKey:
    """A model's graph as stored in its file: each occurrence of the ``graph`` field's bytes,
    as spans of the file's bytes (compared in place, without copying them). Equal keys,
    equal graphs. ``naming`` holds the spans of the fields that name the file's rank and that
    no check reads (``doc_string``, ``metadata_props``)."""

    __slots__ = ("wire", "spans", "naming")
    __hash__ = None  # type: ignore[assignment]

    def __init__(
        self, wire: bytes, spans: Sequence[tuple[int, int, int]], naming: Sequence[tuple[int, int, int]] = ()
    ) -> None:
        self.wire = wire
        self.spans = list(spans)  # (start of the field's tag, start of its bytes, end)
        self.naming = list(naming)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphKey) or len(self.spans) != len(other.spans):
            return False
        view = memoryview(other.wire)
        for (_, a, b), (_, c, d) in zip(self.spans, other.spans):
            if b - a != d - c or not self.wire.startswith(view[c:d], a):
                return False
        return True

    def rest(self) -> bytes:
        """The file's bytes without the graph field(s): the rest of the model."""
        return self._without(self.spans)

    def header(self) -> bytes:
        """The file's bytes without the graph and the naming fields: equal headers and equal
        keys, models equal in every field but ``doc_string`` and ``metadata_props``."""
        return self._without(sorted(self.spans + self.naming))

    def _without(self, spans: Sequence[tuple[int, int, int]]) -> bytes:
        out, at = [], 0
        for tag, _, end in spans:
            out.append(self.wire[at:tag])
            at = end
        out.append(self.wire[at:])
        return b"".join(out)


class ModelFile(NamedTuple):
    """A loaded model; its graph as stored in the file (None for a text-format file); the
    index of the key in ``checked`` that equals it (see :func:`load_model_file`), or None; and
    when ``model`` is the model of that earlier file (shared, not a copy), the file's own
    model without its graph (``own``: its ``doc_string`` and ``metadata_props``)."""

    model: onnx.ModelProto
    graph_key: GraphKey | None
    same_as: int | None = None
    own: onnx.ModelProto | None = None


def load_model(path: str | Path) -> onnx.ModelProto:
    """Load an ONNX model without reading external weight data.

    Raises:
        InputError: the file is missing, is not an ONNX model, or is malformed (text that is
            not UTF-8, a NUL character in a name, an initializer whose data does not fit its
            type and shape).
    """
    return load_model_file(path).model


def load_model_file(
    path: str | Path,
    checked: Sequence[GraphKey] = (),
    models: Sequence[onnx.ModelProto] = (),
    proofs: WireProofs | None = None,
) -> ModelFile:
    """:func:`load_model`, with the graph's stored bytes. A graph stored exactly as one of
    ``checked`` (keys of models loaded before) is not checked again: only what is outside it.
    When ``models`` holds the models of ``checked`` and the file differs from that model's
    only in the graph-free fields that name a rank (``doc_string``, ``metadata_props``), its
    graph is not even parsed: the result's ``model`` is that earlier model object, and
    ``own`` the file's model without its graph. With ``proofs``, a whole file's string and
    shape checks are added to it (run later, maybe beside the caller's work) instead of run
    here; the other checks still run here, after ``proofs`` settles what came before.

    Raises:
        InputError: as :func:`load_model`.
    """
    p = Path(path)
    fmt = onnx.serialization.registry.get_format_from_file_extension(os.path.splitext(str(p))[1]) or "protobuf"
    data = read_bytes(p, "ONNX model", limit="model")
    key = _graph_key(data) if fmt == "protobuf" else None
    same = next((i for i, k in enumerate(checked) if k == key), None) if key is not None else None
    if same is not None:  # the graph is known to be fine: check the rest of the model
        rest = key.rest()
        own = _parse(p, rest, fmt)
        problem = _malformed(own, rest, graph_checked=True)
        if problem:
            raise InputError(f"{p}: malformed ONNX model: {problem}")
        if same < len(models) and key.header() == checked[same].header():
            return ModelFile(models[same], key, same, own)
        return ModelFile(_parse(p, data, fmt), key, same)
    model = _parse(p, data, fmt)
    if not model.graph.node and not model.graph.output:
        raise InputError(f"{p}: not an ONNX model (no graph nodes or outputs)")
    wire = data if fmt == "protobuf" else None
    later = proofs is not None and wire is not None
    if later:
        proofs.add(p, model, wire)
    problem = _malformed(model, wire, wire_proofs=not later)
    if problem:
        if later:
            proofs.settle()  # the string and shape checks come first, as when run here
        raise InputError(f"{p}: malformed ONNX model: {problem}")
    return ModelFile(model, key, same)


def _parse(p: Path, data: bytes, fmt: str) -> onnx.ModelProto:
    """``data`` read as ``onnx.load(p, load_external_data=False)`` reads the file (format
    ``fmt``, from the file extension)."""
    try:
        return onnx.load_model_from_string(data, format=fmt)
    except Exception as exc:  # protobuf raises DecodeError, RuntimeError, ... for non-ONNX bytes
        raise InputError(f"{escape(os.fsdecode(p), 200)}: not an ONNX model ({type(exc).__name__})") from None


_GRAPH_FIELD = 7  # ModelProto.graph (onnx.proto)
_NAMING_FIELDS = (6, 14)  # ModelProto.doc_string, ModelProto.metadata_props


def _graph_key(wire: bytes | None) -> GraphKey | None:
    """Where the ``graph`` field is stored in a ModelProto's bytes: a walk over the top-level
    fields only (protobuf wire format: a varint tag, then a varint, 8 bytes, 4 bytes, or a
    varint length and that many bytes); None when the bytes do not read so."""
    if wire is None:
        return None
    spans, naming = [], []
    i, n = 0, len(wire)
    try:
        while i < n:
            start = i
            tag, i = _varint(wire, i)
            kind = tag & 7
            if kind == 0:
                _, i = _varint(wire, i)
            elif kind == 1:
                i += 8
            elif kind == 5:
                i += 4
            elif kind == 2:
                length, i = _varint(wire, i)
                if tag >> 3 == _GRAPH_FIELD:
                    spans.append((start, i, i + length))
                elif tag >> 3 in _NAMING_FIELDS:
                    naming.append((start, i, i + length))
                i += length
            else:  # groups: not in onnx.proto
                return None
    except IndexError:
        return None
    return GraphKey(wire, spans, naming) if i == n else None


def _varint(wire: bytes, i: int) -> tuple[int, int]:
    """The varint at ``wire[i]`` and the position after it (IndexError past the end)."""
    value = shift = 0
    while True:
        byte = wire[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def copy_fields(src: Message, dst: Message, skip: Container[str]) -> None:
    """Copy every set field of ``src`` but those named in ``skip`` into ``dst``."""
    for fd, value in src.ListFields():
        if fd.name in skip:
            continue
        if is_repeated(fd):
            getattr(dst, fd.name).extend(value)
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def with_graph(model: onnx.ModelProto, graph: onnx.GraphProto) -> onnx.ModelProto:
    """A copy of ``model`` whose graph is a copy of ``graph`` (``model``'s is not copied)."""
    out = onnx.ModelProto()
    copy_fields(model, out, {"graph"})
    out.graph.CopyFrom(graph)
    return out


def is_repeated(field: FieldDescriptor) -> bool:
    """Whether a message field is repeated."""
    if hasattr(field, "is_repeated"):  # protobuf >= 6 dropped FieldDescriptor.label
        return bool(field.is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED


def _bad_strings(msg, where: str) -> str | None:
    """The first string field of ``msg`` (recursively) that is not UTF-8, or a name with NUL.

    protobuf hands back ``bytes`` for a string field whose bytes are not UTF-8; the rest of
    the analyzer (and clingo, whose strings cannot hold NUL) expects ``str``.
    """
    for field, value in msg.ListFields():
        label = f"{where}.{field.name}"
        repeated = is_repeated(field)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            for i, sub in enumerate(value if repeated else [value]):
                found = _bad_strings(sub, f"{label}[{i}]" if repeated else label)
                if found:
                    return found
        elif field.type == FieldDescriptor.TYPE_STRING:
            for text in value if repeated else [value]:
                if isinstance(text, bytes):
                    return f"{label} is not UTF-8 text"
                if "\x00" in text and field.name in NAME_FIELDS:
                    return f"{label} {text[:60]!r} contains a NUL character"
    return None


def _small(t: onnx.TensorProto) -> bool:
    """Whether a tensor is decoded (``SMALL_CONST`` elements or fewer, data in the file)."""
    return math.prod(t.dims) <= SMALL_CONST and t.data_location != onnx.TensorProto.EXTERNAL


def _bad_tensor(t: onnx.TensorProto, what: str) -> str | None:
    if any(d < 0 for d in t.dims):
        return f"{what} has a negative dimension {list(t.dims)}"
    if any(d > INT32_MAX for d in t.dims):
        return f"{what} has a dimension over 2**31-1 {list(t.dims)}"
    if not _small(t):
        return None
    if t.data_type == onnx.TensorProto.UNDEFINED or t.data_type not in onnx.TensorProto.DataType.values():
        return f"{what} has no known data type ({t.data_type})"
    try:
        numpy_helper.to_array(t)
    except Exception as exc:  # unknown data type, data that does not fill the shape, ...
        detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        return f"{what} cannot be read ({detail})"
    return None


def _maybe_bad_strings(wire: bytes | None, graph: bool = True) -> bool:
    """False when the file's bytes certainly hold only UTF-8 text and no name with a NUL (not
    looking into the graph when ``graph`` is False): they parse with the proto3 schema, and
    the names are all ASCII without NUL (:func:`~analyzer.facts.shadow.name_chars_schema`,
    7 ms where the text format takes 18 on a 405B rank graph) or the names' text format has
    no ``\\000``."""
    if wire is None:
        return True
    try:
        utf8_schema(graph).FromString(wire)
        names = names_schema(graph).FromString(wire)
    except Exception:  # DecodeError: text that is not UTF-8 (or bytes only onnx's parser takes)
        return True
    names.DiscardUnknownFields()
    try:  # names read as ASCII codes 1..127: anything else is an unknown field
        chars = name_chars_schema(graph).FromString(names.SerializeToString())
        size = chars.ByteSize()
        chars.DiscardUnknownFields()
        if chars.ByteSize() == size:
            return False  # every name is ASCII without NUL
    except Exception:  # a non-ASCII character at the end of a name: read the text below
        pass
    return "\\000" in str(names)


_LONG_VARINT = re.compile(rb"[\x80-\xff]{4}")


def _maybe_bad_dims(wire: bytes | None) -> bool:
    """False when no ``dim_value`` of a graph input, output or value_info is negative or over
    2**31-1: in the shadow holding only them, no varint is 5 bytes long or more."""
    if wire is None:
        return True
    try:
        dims = value_dims_schema().FromString(wire)
    except Exception:
        return True
    dims.DiscardUnknownFields()
    return _LONG_VARINT.search(dims.SerializeToString()) is not None


def _bad_value_dims(g: onnx.GraphProto) -> str | None:
    for vi in [*g.input, *g.output, *g.value_info]:
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim if d.HasField("dim_value")]
        if any(d < 0 for d in dims):  # unknown sizes are dim_param or no value, never negative
            return f"value {vi.name!r} has a negative dimension {dims}"
        if any(d > INT32_MAX for d in dims):  # the engines' integers are 32-bit
            return f"value {vi.name!r} has a dimension over 2**31-1 {dims}"
    return None


def _malformed(
    model: onnx.ModelProto, wire: bytes | None = None, graph_checked: bool = False, *, wire_proofs: bool = True
) -> str | None:
    """What makes ``model`` unreadable for the analyzer, or None.

    ``wire`` (the file's bytes) lets protobuf's C parser prove the string and shape checks
    clean (:mod:`analyzer.facts.shadow`); the Python walks, which name the field at fault,
    run only when it cannot. ``graph_checked``: the graph is known to be fine, only the rest
    of the model is checked (``wire`` then holds only the rest: the schemas with the graph
    read it as those without do, and they are built once per process for both uses).
    ``wire_proofs=False`` leaves the string and shape checks to the caller
    (:func:`wire_problem`, run later by :class:`~analyzer.speedups.proofs.WireProofs`).
    """
    if wire_proofs:
        found = _string_problem(model, wire)
        if found or graph_checked:
            return found
        found = _dims_problem(model.graph, wire)
        if found:
            return found
    g = model.graph
    for init in g.initializer:
        found = _bad_tensor(init, f"initializer {init.name!r}")
        if found:
            return found
    if wire is not None and b"Constant" not in wire:
        return None  # no node's op_type is "Constant": its bytes would be in the file
    for node in g.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    found = _bad_tensor(attr.t, f"Constant {node.name or node.output[:1]!r}")
                    if found:
                        return found
    return None


def _string_problem(model: onnx.ModelProto, wire: bytes | None) -> str | None:
    return _bad_strings(model, "model") if _maybe_bad_strings(wire) else None


def _dims_problem(g: onnx.GraphProto, wire: bytes | None) -> str | None:
    return _bad_value_dims(g) if _maybe_bad_dims(wire) else None


def wire_problem(model: onnx.ModelProto, wire: bytes) -> str | None:
    """The string and shape checks of :func:`_malformed` on a whole file: text that is not
    UTF-8, a NUL in a name, a dimension that is negative or over 2**31-1; or None."""
    return _string_problem(model, wire) or _dims_problem(model.graph, wire)


def _dtype_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return "undefined"


def _value_shapes(model: onnx.ModelProto) -> dict[str, tuple[str, list[int | str] | None]]:
    """name -> (dtype, dims or None); dims entries are ints or symbolic names. Equal types
    serialize to equal bytes, so each distinct type is decoded once (the dims lists are
    shared: read only)."""
    graph = model.graph
    shapes: dict[str, tuple[str, list[int | str] | None]] = {}
    decoded: dict[bytes, tuple[str, list[int | str] | None] | None] = {}
    infos = list(graph.value_info) + list(graph.input) + list(graph.output)
    for vi in infos:
        key = vi.type.SerializeToString()
        if key not in decoded:
            decoded[key] = _decoded_type(vi.type)
        if decoded[key] is not None:
            shapes[vi.name] = decoded[key]
    for init in graph.initializer:
        shapes[init.name] = (_dtype_name(init.data_type), list(init.dims))
    return shapes


def _decoded_type(tp: onnx.TypeProto) -> tuple[str, list[int | str] | None] | None:
    """(dtype, dims or None) of a tensor type, None for other types."""
    if not tp.HasField("tensor_type"):
        return None
    t = tp.tensor_type
    dims: list[int | str] | None = None
    if t.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]
    return _dtype_name(t.elem_type), dims


def _needs_inference(model: onnx.ModelProto, shapes: Mapping) -> bool:
    produced = {o for n in model.graph.node for o in n.output if o}
    return any(v not in shapes for v in produced)


def _with_inferred_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # custom-domain ops or bad graphs: keep what the exporter wrote
        return model


_EXTRA_FLOATS = ("bfloat16", "float8_e4m3fn", "float8_e5m2")  # ml_dtypes, not numpy numbers


def _tensor_digest(arr: np.ndarray) -> str:
    h = hashlib.blake2b(digest_size=12)
    h.update(str(arr.dtype).encode())
    h.update(str(arr.shape).encode())
    h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def const_chunk_hashes(model: onnx.ModelProto, world_size: int) -> FactTables:
    """``Const_ChunkHash(s, axis, chunk, hash)``: the digest (as in ``Const_Hash``) of each of
    the ``world_size`` equal chunks along each divisible axis of each small constant ``s`` of
    the sequential ``model``, so that a rank constant equal to chunk r of it is recognised by
    value (a context-parallel rank's rotary positions or causal-mask rows, folded to constants
    by the exporter: they have the seq constant's shape with the sequence axis divided by N).

    Args:
        model: the sequential model.
        world_size: N.

    Returns:
        One row per (constant, axis of size divisible by N and larger than 1, chunk index).
    """
    facts = FactTables()
    if world_size < 2:
        return facts
    for name, arr in _small_constants(model).items():
        for axis, size in enumerate(arr.shape):
            if size > 1 and size % world_size == 0:
                for c, chunk in enumerate(np.split(arr, world_size, axis=axis)):
                    facts.add("Const_ChunkHash", s=name, axis=axis, chunk=c, hash=_tensor_digest(chunk))
    return facts


def _small_constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    consts: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        if _small(init):
            consts[init.name] = numpy_helper.to_array(init)
    for node in model.graph.node:
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or not node.output:
            continue
        for attr in node.attribute:
            if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR and _small(attr.t):
                consts[node.output[0]] = numpy_helper.to_array(attr.t)
            elif attr.name in ("value_int", "value_ints", "value_float", "value_floats"):
                val = onnx.helper.get_attribute_value(attr)
                dtype = np.int64 if "int" in attr.name else np.float32
                consts[node.output[0]] = np.array(val, dtype=dtype)
    return consts


def _one_number(t: onnx.TensorProto) -> bool:
    if math.prod(t.dims) != 1 or t.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        return False
    try:
        numpy_helper.to_array(t)
    except Exception:  # malformed data: left to the hash only
        return False
    return True


def _attr_rows(facts: FactTables, g: str, node_id: str, node: onnx.NodeProto) -> None:
    h = hashlib.blake2b(digest_size=8)
    for attr in sorted(node.attribute, key=lambda a: a.name):
        if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            h.update(attr.SerializeToString(deterministic=True))
            continue
        value = onnx.helper.get_attribute_value(attr)
        h.update(attr.name.encode())
        h.update(repr(value).encode() if not isinstance(value, onnx.TensorProto) else value.SerializeToString())
        if attr.type == onnx.AttributeProto.INT:
            facts.add("Node_AttrInt", g=g, node=node_id, attr=attr.name, value=_clamp32(int(value)))
        elif attr.type == onnx.AttributeProto.INTS:
            facts.add("Node_AttrIntsLen", g=g, node=node_id, attr=attr.name, n=len(value))
            for pos, v in enumerate(value):
                facts.add("Node_AttrInts", g=g, node=node_id, attr=attr.name, pos=pos, value=_clamp32(int(v)))
        elif attr.type == onnx.AttributeProto.STRING:
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            text = text.replace("\x00", "\ufffd")  # clingo strings cannot hold NUL
            facts.add("Node_AttrStr", g=g, node=node_id, attr=attr.name, value=text)
        elif attr.type == onnx.AttributeProto.FLOAT:
            facts.add("Node_AttrFloat", g=g, node=node_id, attr=attr.name, value=repr(float(value)))
        elif attr.type == onnx.AttributeProto.TENSOR and _one_number(value):
            # e.g. ConstantOfShape's fill
            scalar = float(numpy_helper.to_array(value).reshape(-1)[0])
            facts.add("Node_AttrFloat", g=g, node=node_id, attr=attr.name, value=repr(scalar))
    facts.add("Node_AttrHash", g=g, node=node_id, hash=h.hexdigest())


def _node_ids(nodes: Iterable[onnx.NodeProto]) -> list[str]:
    nodes = list(nodes)
    counts: dict[str, int] = defaultdict(int)
    for n in nodes:
        counts[n.name] += 1
    return [n.name if n.name and counts[n.name] == 1 else f"#{i}:{n.op_type}" for i, n in enumerate(nodes)]


def _shape_text(dims: list[int | str]) -> str | None:
    """``"32,1024"``; a data-dependent size of a torch.fx dump (an unbacked SymInt ``u0``, ``u1``,
    the row count of ``aten.nonzero``) stays its name, ``"u0,1,1536"``, and is compared by name;
    None with any other symbolic, unknown or negative size."""
    for d in dims:
        if isinstance(d, int):
            if d < 0:
                return None
        elif not _UNBACKED.fullmatch(d):
            return None
    return ",".join(map(str, dims))


_UNBACKED = re.compile(r"u[0-9]+")


def extract_graph_facts(model: onnx.ModelProto, g: str) -> FactTables:
    """Flatten one ONNX model into fact tables for graph ``g``.

    Args:
        model: the loaded model (external data not loaded).
        g: the graph's name in the facts: ``"seq"`` or ``"r{rank}"``.

    Returns:
        The tables of ``schemas/facts.dl`` except the cross-graph ones (``GraphRank``,
        ``WorldSize``, ``NextRank``), which the caller adds.
    """
    facts = FactTables()
    shapes = _value_shapes(model)
    if _needs_inference(model, shapes):
        shapes = {**_value_shapes(_with_inferred_shapes(model)), **shapes}
    _boundary_rows(facts, g, model.graph)
    _shape_rows(facts, g, shapes)
    _constant_rows(facts, g, model, shapes)
    _node_rows(facts, g, model.graph)
    return facts


def _boundary_rows(facts: FactTables, g: str, graph: onnx.GraphProto) -> None:
    """``Initializer``, ``GraphInput`` (initializers left out) and ``GraphOutput``."""
    init_names = {i.name for i in graph.initializer}
    for name in init_names:
        facts.add("Initializer", g=g, value=name)
    for pos, vi in enumerate(i for i in graph.input if i.name not in init_names):
        facts.add("GraphInput", g=g, value=vi.name, pos=pos)
    for pos, vi in enumerate(graph.output):
        facts.add("GraphOutput", g=g, value=vi.name, pos=pos)


def _shape_rows(facts: FactTables, g: str, shapes: dict) -> None:
    """``Value_DType``, ``Value_NDim``, ``Value_Dim`` (-1: not a static size), ``Value_Shape``."""
    for name, (dtype, dims) in shapes.items():
        facts.add("Value_DType", g=g, value=name, dtype=dtype)
        if dims is None:
            continue
        facts.add("Value_NDim", g=g, value=name, ndim=len(dims))
        for axis, d in enumerate(dims):
            facts.add("Value_Dim", g=g, value=name, axis=axis, size=d if isinstance(d, int) and d > 0 else -1)
        text = _shape_text(dims)
        if text is not None:
            facts.add("Value_Shape", g=g, value=name, shape=text)


def _constant_rows(facts: FactTables, g: str, model: onnx.ModelProto, shapes: dict) -> None:
    """``Const_Hash``, ``Const_Scalar`` and ``Const_Int`` of the small constants, and the shape
    rows of those the value infos do not give."""
    for name, arr in _small_constants(model).items():
        facts.add("Const_Hash", g=g, value=name, hash=_tensor_digest(arr))
        # bool scalars too (True = 1): torch's floor_divide compares a sign test with a bool constant
        if arr.size == 1 and (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
                              or arr.dtype.name in _EXTRA_FLOATS):
            scalar = float(arr.reshape(-1)[0])
            if float(scalar).is_integer() and abs(scalar) <= INT32_MAX:
                facts.add("Const_Scalar", g=g, value=name, v=int(scalar))
            elif 0 < scalar < 1 and np.issubdtype(arr.dtype, np.floating):
                inverse = round(1 / scalar)
                # 1/c as the graph's float type stores it (0.5, 0.25, 0.333...): a multiply by 1/c
                if 2 <= inverse <= INT32_MAX and arr.dtype.type(1 / inverse) == arr.reshape(-1)[0]:
                    facts.add("Const_Reciprocal", g=g, value=name, n=inverse)
        if arr.size <= SMALL_INT_CONST and np.issubdtype(arr.dtype, np.integer):
            for pos, v in enumerate(arr.reshape(-1).tolist()):
                facts.add("Const_Int", g=g, value=name, pos=pos, v=_clamp32(int(v)))
        if name not in shapes:
            facts.add("Value_DType", g=g, value=name, dtype=str(arr.dtype))
            facts.add("Value_NDim", g=g, value=name, ndim=arr.ndim)
            for axis, d in enumerate(arr.shape):
                facts.add("Value_Dim", g=g, value=name, axis=axis, size=int(d))
            facts.add("Value_Shape", g=g, value=name, shape=",".join(str(d) for d in arr.shape))


def _node_rows(facts: FactTables, g: str, graph: onnx.GraphProto) -> None:
    """``Node`` (domain ``""`` for the default ONNX domain), its index, inputs, outputs,
    attributes, source location, module scope and pipeline stage (``Node_Stage``, nodes of a
    chained pipeline graph only)."""
    for index, (node_id, node) in enumerate(zip(_node_ids(graph.node), graph.node)):
        domain = "" if node.domain == "ai.onnx" else node.domain
        facts.add("Node", g=g, node=node_id, op=node.op_type, domain=domain, name=node.name)
        facts.add("Node_Index", g=g, node=node_id, index=index)
        facts.add("Node_NumInputs", g=g, node=node_id, n=len(node.input))
        for pos, v in enumerate(node.input):
            facts.add("Node_Input", g=g, node=node_id, pos=pos, value=v)
        for pos, v in enumerate(node.output):
            if v:
                facts.add("Node_Output", g=g, node=node_id, pos=pos, value=v)
        _attr_rows(facts, g, node_id, node)
        src = parse_source(node)
        if src.file:
            facts.add("Node_Source", g=g, node=node_id, file=src.file, line=src.line, code=src.code)
        facts.add("Node_Scope", g=g, node=node_id, scope=src.scope)
        for prop in node.metadata_props:
            if prop.key == STAGE_KEY and prop.value.isdigit():
                facts.add("Node_Stage", g=g, node=node_id, stage=int(prop.value))
