"""Import XLA HLO programs (transformers-neuronx, JAX, torch-xla) as ONNX models.

``import_hlo(path, rank=r, world_size=N)`` reads one HLO module, the HLO text (``.hlo``,
``.txt``: parsed with the Lark grammar ``hlo.lark``, never run) or a serialized
``HloModuleProto`` (``.pb``: read and printed to text by XLA's own code in jaxlib,
``jaxlib._hlo.HloModule.from_serialized_hlo_module_proto``, so ``pip install jaxlib`` is needed
for it; jaxlib ships no ``hlo_pb2`` schema module, and no protobuf reader is written here), and writes
the ONNX graph of rank ``r``: :mod:`analyzer.importers.hlo.to_onnx` for naming and values,
:mod:`analyzer.importers.hlo.ops` with ``ops.yaml`` for the op mapping,
:mod:`analyzer.importers.hlo.frames` for source lines.

One SPMD file serves every rank: ranks differ only where the program reads
``partition-id``/``replica-id``, which becomes the rank (:func:`reads_rank` says whether it does).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from analyzer.errors import InputError
from analyzer.importers.hlo.parse import HloModule, parse_hlo, parse_hlo_text
from analyzer.importers.hlo.to_onnx import hlo_to_onnx

__all__ = ["HLO_SUFFIXES", "HloModule", "hlo_to_onnx", "import_hlo", "is_hlo_path", "load_module", "reads_rank"]

#: file name endings read as HLO (text, or HloModuleProto for ``.pb``)
HLO_SUFFIXES = (".hlo", ".hlo.txt", ".hlo.pb", ".pb")
_RANK_OPS = ("partition-id", "replica-id")


def is_hlo_path(path: str | Path) -> bool:
    """Whether ``path`` names an HLO file by its ending (``.hlo``, ``.hlo.txt``, ``.pb``)."""
    name = str(path).lower()
    return name.endswith(HLO_SUFFIXES)


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
