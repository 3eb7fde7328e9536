"""Reading HLO files (text, or HloModuleProto through jaxlib) and importing them per rank;
the package :mod:`analyzer.importers.hlo` re-exports these."""

from __future__ import annotations

from pathlib import Path

import onnx

from analyzer.errors import InputError
from analyzer.importers.hlo.parse import HloModule, parse_hlo, parse_hlo_text
from analyzer.importers.hlo.to_onnx import hlo_to_onnx

__all__ = ["import_hlo", "load_module", "reads_rank"]

_RANK_OPS = ("partition-id", "replica-id")


def _pb_text(p: Path) -> str:
    try:
        from jaxlib import _hlo  # jaxlib's HLO printer, which reads the proto with its schema
    except ImportError:
        raise InputError(f"{p}: reading an HloModuleProto (.pb) needs jaxlib (pip install jaxlib)") from None
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        module = _hlo.HloModule.from_serialized_hlo_module_proto(data)
    except Exception as exc:  # jaxlib raises its own XlaRuntimeError on a malformed proto
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{p}: not an HloModuleProto ({first[:120]})") from None
    options = _hlo.HloPrintOptions()
    options.print_metadata = True
    options.print_large_constants = True
    return module.to_string(options)


def load_module(path: str | Path) -> HloModule:
    """Parse an HLO file: text, or a ``.pb`` HloModuleProto (through jaxlib).

    Raises:
        InputError: a missing file, text that is not HLO, a ``.pb`` that is not an
            HloModuleProto or without jaxlib installed.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file")
    if p.name.lower().endswith(".pb"):
        return parse_hlo_text(_pb_text(p), str(p))
    return parse_hlo(p)


def reads_rank(module: HloModule) -> bool:
    """Whether any computation of the module reads ``partition-id`` or ``replica-id``."""
    return any(i.opcode in _RANK_OPS for c in module.computations.values() for i in c.instructions)


def import_hlo(path: str | Path, *, rank: int | None = None, world_size: int | None = None) -> onnx.ModelProto:
    """Import one HLO module as the ONNX graph of one rank.

    Args:
        path: HLO text or a serialized ``HloModuleProto`` (``.pb``, needs jaxlib).
        rank: the rank this graph is for: the value of ``partition-id`` and ``replica-id``
            and the replica group its collectives run in (None: the program must not need it).
        world_size: 1 for a sequential program (collectives become identities; one over a
            group of more than one rank is an error); N bounds the replica groups and gives
            the size of ``replica_groups={}``.

    Returns:
        The model (opset 20, collectives ``com.microsoft::AllReduce/AllGather/ReduceScatter/
        AllToAll`` with ``group_size``); it passes ``onnx.checker.check_model``.

    Raises:
        InputError: ``path:line: ...`` for text that is not HLO, an unsupported op
            (``unsupported HLO op <opcode>``, ``unsupported custom-call target '<target>'``),
            an attribute of an unexpected form, a bad rank or world size.
    """
    return hlo_to_onnx(load_module(path), rank=rank, world_size=world_size)
