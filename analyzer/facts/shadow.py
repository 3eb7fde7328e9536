"""Reduced copies of the ONNX schema, for checks of a whole file inside protobuf's C parser.

A *shadow* is the schema of ``onnx.ModelProto`` (onnx-ml.proto) with only some fields kept,
optionally as proto3. Parsing a file's bytes with it is one C-level parse in which every
dropped field is skipped; :meth:`DiscardUnknownFields` then leaves only the kept fields.
A message field is kept only when it leads to a kept field, so the walk never enters
messages that cannot hold one (tensor shapes, metadata, ...).

- :func:`utf8_schema`: the whole schema as proto3, whose parser rejects a ``string`` field
  whose bytes are not UTF-8 (the same rule as Python's strict decoder);
- :func:`names_schema`: only the name-like ``string`` fields, whose text format shows every
  name with a NUL written as ``\\000``;
- :func:`name_chars_schema`: the same names, each read as a packed list of ASCII codes 1..127
  (anything else lands in the unknown fields): a NUL-free check without the text format;
- :func:`value_dims_schema`: only ``dim_value`` of the graph's inputs, outputs and
  ``value_info``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import onnx
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

__all__ = ["NAME_FIELDS", "name_chars_schema", "names_schema", "utf8_schema", "value_dims_schema"]

NAME_FIELDS = frozenset({"name", "op_type", "domain", "input", "output"})
_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
_STRING = descriptor_pb2.FieldDescriptorProto.TYPE_STRING

Keep = Callable[[str, descriptor_pb2.FieldDescriptorProto], bool]


def _messages(fp: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    """Every message of a file by its full name (``.onnx.TypeProto.Tensor``)."""
    out: dict[str, descriptor_pb2.DescriptorProto] = {}
    todo = [(f".{fp.package}.", m) for m in fp.message_type]
    while todo:
        prefix, m = todo.pop()
        out[prefix + m.name] = m
        todo.extend((f"{prefix}{m.name}.", sub) for sub in m.nested_type)
    return out


def _reaching(msgs: dict[str, descriptor_pb2.DescriptorProto], keep: Keep) -> set[str]:
    """Messages that hold a kept non-message field, directly or through kept message fields."""
    reach: set[str] = set()
    changed = True
    while changed:
        changed = False
        for full, m in msgs.items():
            if full not in reach and any(
                keep(full, f) and (f.type != _MESSAGE or f.type_name in reach) for f in m.field
            ):
                reach.add(full)
                changed = True
    return reach


def _renamed(f: descriptor_pb2.FieldDescriptorProto, old: str, new: str) -> descriptor_pb2.FieldDescriptorProto:
    """A plain copy of a field (no default, oneof or options) whose type lives in package ``new``."""
    out = descriptor_pb2.FieldDescriptorProto(name=f.name, number=f.number, label=f.label, type=f.type)
    if f.HasField("type_name"):
        out.type_name = new + f.type_name[len(old) :] if f.type_name.startswith(old) else f.type_name
    return out


def _build(
    package: str,
    keep: Keep,
    proto3: bool,
    change: Callable[[descriptor_pb2.FileDescriptorProto, descriptor_pb2.FieldDescriptorProto], None] | None = None,
) -> type[Message]:
    """The ``ModelProto`` class of a shadow schema named ``package``; ``change`` may edit each
    kept non-message field (and add types to the file)."""
    fp = descriptor_pb2.FileDescriptorProto()
    onnx.ModelProto.DESCRIPTOR.file.CopyToProto(fp)
    old = f".{fp.package}."
    msgs = _messages(fp)
    reach = _reaching(msgs, keep)
    for full, m in msgs.items():
        kept = [
            _renamed(f, old, f".{package}.")
            for f in m.field
            if keep(full, f) and (f.type != _MESSAGE or f.type_name in reach)
        ]
        if change is not None:
            for f in kept:
                if f.type != _MESSAGE:
                    change(fp, f)
        del m.field[:]
        m.field.extend(kept)
        del m.oneof_decl[:]
    fp.name = f"{package}.proto"
    fp.package = package
    fp.syntax = "proto3" if proto3 else "proto2"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.ModelProto"))


def _not_graph(full: str, f: descriptor_pb2.FieldDescriptorProto) -> bool:
    return not (full == ".onnx.ModelProto" and f.name == "graph")


@functools.cache
def utf8_schema(graph: bool = True) -> type[Message]:
    """Every field of ``ModelProto`` (but ``graph`` when False), as proto3: parsing fails on
    a string that is not UTF-8."""
    return _build(f"shardlog_shadow_utf8_{int(graph)}", lambda m, f: graph or _not_graph(m, f), proto3=True)


@functools.cache
def names_schema(graph: bool = True) -> type[Message]:
    """Only the ``string`` fields named like :data:`NAME_FIELDS`, in every message (not in
    ``ModelProto.graph`` when ``graph`` is False)."""
    return _build(
        f"shardlog_shadow_names_{int(graph)}",
        lambda m, f: (graph or _not_graph(m, f))
        and (f.type == _MESSAGE or (f.type == _STRING and f.name in NAME_FIELDS)),
        proto3=False,
    )


@functools.cache
def name_chars_schema(graph: bool = True) -> type[Message]:
    """:func:`names_schema` with each name read as its characters: a packed repeated field of
    a proto2 (closed) enum whose values are 1..127. Parsing the bytes of a names shadow with
    it keeps ASCII characters other than NUL and moves every other value (NUL, or a byte of
    a non-ASCII character) to the unknown fields; a byte that ends a name inside a varint
    makes the parse fail."""
    package = f"shardlog_shadow_name_chars_{int(graph)}"

    def as_chars(fp: descriptor_pb2.FileDescriptorProto, f: descriptor_pb2.FieldDescriptorProto) -> None:
        if not fp.enum_type or fp.enum_type[-1].name != "NameChar":
            enum = fp.enum_type.add(name="NameChar")
            enum.value.extend(descriptor_pb2.EnumValueDescriptorProto(name=f"C{i}", number=i) for i in range(1, 128))
        f.label = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
        f.type = descriptor_pb2.FieldDescriptorProto.TYPE_ENUM
        f.type_name = f".{package}.NameChar"
        f.options.packed = True

    return _build(
        package,
        lambda m, f: (graph or _not_graph(m, f))
        and (f.type == _MESSAGE or (f.type == _STRING and f.name in NAME_FIELDS)),
        proto3=False,
        change=as_chars,
    )


_DIM_PATH = frozenset(
    {
        (".onnx.ModelProto", "graph"),
        (".onnx.GraphProto", "input"),
        (".onnx.GraphProto", "output"),
        (".onnx.GraphProto", "value_info"),
        (".onnx.ValueInfoProto", "type"),
        (".onnx.TypeProto", "tensor_type"),
        (".onnx.TypeProto.Tensor", "shape"),
        (".onnx.TensorShapeProto", "dim"),
        (".onnx.TensorShapeProto.Dimension", "dim_value"),
    }
)


@functools.cache
def value_dims_schema() -> type[Message]:
    """Only ``graph.{input,output,value_info}[].type.tensor_type.shape.dim[].dim_value``."""
    return _build("shardlog_shadow_dims", lambda m, f: (m, f.name) in _DIM_PATH, proto3=False)
