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

__all__ = ["HLO_SUFFIXES", "hlo_to_onnx", "import_hlo", "is_hlo_path", "load_module", "reads_rank"]

#: file name endings read as HLO (text, or HloModuleProto for ``.pb``)
HLO_SUFFIXES = (".hlo", ".hlo.txt", ".hlo.pb", ".pb")


def is_hlo_path(path: str | Path) -> bool:
    """Whether ``path`` names an HLO file: by its ending (``.hlo``, ``.hlo.txt``, ``.pb``), or a
    ``.txt`` file that starts with ``HloModule`` (XLA's dumps, ``--xla_dump_to``)."""
    name = str(path).lower()
    if name.endswith(HLO_SUFFIXES):
        return True
    if name.endswith(".txt"):
        try:
            with open(path, "rb") as f:
                return f.read(9) == b"HloModule"
        except OSError:
            return False
    return False


# the importer (lark, the op table) is loaded when first used, not with this package
def import_hlo(path, *, rank=None, world_size=None):
    """:func:`analyzer.importers.hlo.load.import_hlo`."""
    from analyzer.importers.hlo.load import import_hlo as run

    return run(path, rank=rank, world_size=world_size)


def load_module(path):
    """:func:`analyzer.importers.hlo.load.load_module`."""
    from analyzer.importers.hlo.load import load_module as run

    return run(path)


def reads_rank(module) -> bool:
    """:func:`analyzer.importers.hlo.load.reads_rank`."""
    from analyzer.importers.hlo.load import reads_rank as run

    return run(module)


def hlo_to_onnx(module, *, rank=None, world_size=None):
    """:func:`analyzer.importers.hlo.to_onnx.hlo_to_onnx`."""
    from analyzer.importers.hlo.to_onnx import hlo_to_onnx as run

    return run(module, rank=rank, world_size=world_size)
