"""Decoders of HLO attribute values (the token groups :mod:`analyzer.importers.hlo.parse`
keeps), as ``HloInstruction::ToString`` prints them (xla/hlo/ir/hlo_instruction.cc,
xla/service/hlo_parser.cc for the accepted forms).

Each decoder raises :class:`AttrError` with a short reason; the importer adds the file, line
and instruction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from lark import Token

from analyzer.importers.hlo.parse import Group

__all__ = [
    "AttrError",
    "int_list",
    "mesh_axes",
    "metadata",
    "name_ref",
    "replica_groups",
    "scalar",
    "slice_ranges",
    "string",
    "unescape",
]


class AttrError(ValueError):
    """An attribute value of an unexpected form."""


def _one(value: tuple, what: str):
    if len(value) != 1:
        raise AttrError(f"expected {what}")
    return value[0]


def _no_commas(items: Sequence) -> list:
    return [i for i in items if not (isinstance(i, Token) and i.type == "COMMA")]


def _int(token: object) -> int:
    if not isinstance(token, Token) or token.type != "NUMBER":
        raise AttrError(f"expected an integer, got {token!s:.40}")
    try:
        return int(str(token))
    except ValueError:
        raise AttrError(f"expected an integer, got {token!s:.40}") from None


def int_list(value: tuple) -> list[int]:
    """``{1,2}`` (``dimensions``, ``*_contracting_dims``, ``slice_sizes``) -> ``[1, 2]``."""
    group = _one(value, "a list like {0,1}")
    if not isinstance(group, Group) or group.open != "{":
        raise AttrError("expected a list like {0,1}")
    return [_int(t) for t in _no_commas(group.items)]


def scalar(value: tuple) -> str:
    """A bare token (``direction=LE``, ``index=0``, ``to_apply=%comp``) as text."""
    token = _one(value, "a single value")
    if not isinstance(token, Token):
        raise AttrError("expected a single value")
    return str(token)


def name_ref(value: tuple) -> str:
    """``%comp`` -> ``comp``."""
    return scalar(value).lstrip("%")


_ESCAPE = re.compile(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{2}|.)", re.S)
_SIMPLE = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b'"': b'"', b"'": b"'", b"\\": b"\\", b"?": b"?"}


def unescape(text: str) -> str:
    """The content of an HLO string literal (``absl::CEscape``: ``\\n``, ``\\'``, octal bytes)."""
    body = text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text

    def one(m: re.Match) -> bytes:
        code = m.group(1)
        if code in _SIMPLE:
            return _SIMPLE[code]
        if code[:1].isdigit():
            return bytes([int(code, 8) & 0xFF])
        if code[:1] == b"x":
            return bytes([int(code[1:], 16)])
        return code

    return _ESCAPE.sub(one, body.encode("utf-8")).decode("utf-8", errors="replace")


def string(value: tuple) -> str:
    """``"text"`` -> its content."""
    token = _one(value, "a string")
    if not isinstance(token, Token) or token.type != "STRING":
        raise AttrError("expected a string")
    return unescape(str(token))


def metadata(value: tuple) -> dict[str, str]:
    """``{op_type="..." op_name="..." source_file="..." source_line=46}`` -> key -> text
    (strings unescaped, other values as printed)."""
    group = _one(value, "{key=value ...}")
    if not isinstance(group, Group) or group.open != "{":
        raise AttrError("expected {key=value ...}")
    out: dict[str, str] = {}
    items = list(group.items)
    k = 0
    while k + 2 < len(items):
        key, eq, val = items[k], items[k + 1], items[k + 2]
        if isinstance(key, Token) and isinstance(eq, Token) and eq.type == "EQUALS" and isinstance(val, Token):
            out[str(key)] = unescape(str(val)) if val.type == "STRING" else str(val)
            k += 3
        else:
            k += 1
    return out


def slice_ranges(value: tuple) -> list[tuple[int, int, int]]:
    """``{[0:256], [0:1024:2]}`` -> ``[(0, 256, 1), (0, 1024, 2)]`` (start, limit, stride)."""
    group = _one(value, "a list of ranges like {[0:8]}")
    if not isinstance(group, Group) or group.open != "{":
        raise AttrError("expected a list of ranges like {[0:8]}")
    out = []
    for item in _no_commas(group.items):
        if not isinstance(item, Group) or item.open != "[":
            raise AttrError("expected a range like [0:8]")
        nums = [_int(t) for t in item.items if not (isinstance(t, Token) and t.type == "COLON")]
        if len(nums) not in (2, 3):
            raise AttrError("expected a range like [0:8] or [0:8:2]")
        out.append((nums[0], nums[1], nums[2] if len(nums) == 3 else 1))
    return out


def replica_groups(value: tuple) -> list[list[int]]:
    """The groups of a collective, in any of the printed forms:

    - ``{}``: one group of every participant (returned as ``[]``; the caller knows how many);
    - ``{{0,1},{2,3}}``: the groups listed;
    - ``[G,S]<=[d0,d1,...]`` optionally followed by ``T(p0,p1,...)``: the iota form
      (``IotaReplicaGroupList``, xla/hlo/ir/collective_device_list.h): ``iota(prod d)``
      reshaped to ``d``, transposed by ``p``, reshaped to ``G`` groups of ``S``;
    - ``mesh['x'=2,'y'=4] {'y'}``: the devices of that mesh grouped along the named axes
      (:func:`mesh_axes` gives their names).
    """
    if len(value) == 1 and isinstance(value[0], Group) and value[0].open == "{":
        groups = []
        for item in _no_commas(value[0].items):
            if not isinstance(item, Group) or item.open != "{":
                raise AttrError("expected groups like {{0,1},{2,3}}")
            groups.append([_int(t) for t in _no_commas(item.items)])
        return groups
    parts = list(value)
    mesh = _mesh_groups(parts)
    if mesh is not None:
        return mesh[0]
    if len(parts) >= 3 and isinstance(parts[0], Group) and isinstance(parts[1], Token) and parts[1].type == "LE":
        shape = [_int(t) for t in _no_commas(parts[0].items)]
        dims = [_int(t) for t in _no_commas(parts[2].items)] if isinstance(parts[2], Group) else []
        perm = list(range(len(dims)))
        if len(parts) == 5 and str(parts[3]) == "T" and isinstance(parts[4], Group):
            perm = [_int(t) for t in _no_commas(parts[4].items)]
        elif len(parts) != 3:
            raise AttrError("expected [G,S]<=[dims] or [G,S]<=[dims]T(perm)")
        if len(shape) != 2 or sorted(perm) != list(range(len(dims))) or int(np.prod(dims)) != shape[0] * shape[1]:
            raise AttrError("malformed iota replica groups")
        ids = np.arange(int(np.prod(dims))).reshape(dims).transpose(perm).reshape(shape)
        return ids.tolist()
    raise AttrError("expected {{0,1},...}, [G,S]<=[dims] or mesh['x'=2,...] {'x'}")


def _mesh_groups(parts: list) -> tuple[list[list[int]], list[str]] | None:
    """``mesh['x'=2,'y'=4] {'y'}`` (Shardy's mesh-axes form): the devices of a row-major mesh
    (device id = iota over the axes) grouped along the named axes; None for another form."""
    if len(parts) != 3 or str(parts[0]) != "mesh" or not isinstance(parts[1], Group) or not isinstance(parts[2], Group):
        return None
    names, sizes = [], []
    items = _no_commas(parts[1].items)
    for k in range(0, len(items) - 2, 3):
        name, eq, size = items[k : k + 3]
        if not (isinstance(name, Token) and name.type == "SQSTRING" and isinstance(eq, Token) and eq.type == "EQUALS"):
            raise AttrError("expected mesh['axis'=size, ...]")
        names.append(str(name)[1:-1])
        sizes.append(_int(size))
    chosen = [str(t)[1:-1] for t in _no_commas(parts[2].items) if isinstance(t, Token) and t.type == "SQSTRING"]
    if not names or len(items) != 3 * len(names) or any(c not in names for c in chosen):
        raise AttrError("expected mesh['axis'=size, ...] {'axis', ...}")
    ids = np.arange(int(np.prod(sizes))).reshape(sizes)
    inner = [names.index(c) for c in chosen]
    outer = [k for k in range(len(names)) if k not in inner]
    group_size = int(np.prod([sizes[k] for k in inner]))
    groups = ids.transpose(outer + inner).reshape(-1, group_size).tolist()
    return groups, chosen


def mesh_axes(value: tuple) -> list[str]:
    """The mesh axes a collective's ``replica_groups`` names (``mesh[...] {'y'}``), else ``[]``."""
    mesh = _mesh_groups(list(value))
    return mesh[1] if mesh is not None else []
