"""Source locations of HLO instructions: the model's own frame, from ``metadata``.

- transformers-neuronx writes ``source_file`` as the script path, a line ``----`` and the
  Python call stack as a list literal of ``'file:line'`` strings, innermost last. It is read
  with :func:`ast.literal_eval` (never ``eval``); the reported frame is the last one outside
  the HLO builder (:data:`BUILDER_FRAMES`), e.g. ``transformers_neuronx/layers/attention.py:126``.
- JAX (and torch-xla) write ``source_file`` and ``source_line`` of the user's frame directly;
  newer XLA writes ``stack_frame_id=k`` into the module's ``StackFrames`` / ``FileLocations``
  / ``FileNames`` / ``FunctionNames`` tables (xla/hlo/ir/hlo_module.h, StackFrameIndexProto),
  read innermost first, skipping :data:`BUILDER_FRAMES`.

The result is written into the ONNX node's ``source`` metadata as one Python traceback frame
(``File "path", line N, in fn``), which :func:`analyzer.facts.source.parse_source` reads.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from lark import Token

from analyzer.importers.hlo.parse import Group

__all__ = ["BUILDER_FRAMES", "Frame", "model_frame", "source_text"]

#: path fragments of frames that belong to the HLO builders, not to the model
BUILDER_FRAMES = (
    "/pyhlo/",
    "transformers_neuronx/hlo.py",
    "transformers_neuronx/compiler.py",
    "/jax/_src/",
    "/jax/experimental/",
    "/torch_xla/",
)
_SEPARATOR = "\n----\n"
_MAX_FRAMES_TEXT = 200_000  # Neuron's stacks are ~2 kB; a larger text is not a frame list

Frame = tuple[str, int, str]  # (file, line, function or "")


def _builder(path: str) -> bool:
    return any(p in path for p in BUILDER_FRAMES)


def _neuron_frames(text: str) -> list[Frame]:
    if len(text) > _MAX_FRAMES_TEXT:
        return []
    try:
        frames = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    out = []
    for f in frames if isinstance(frames, (list, tuple)) else ():
        if isinstance(f, str) and ":" in f:
            path, _, line = f.rpartition(":")
            if line.isdigit():
                out.append((path, int(line), ""))
    return out


def _table_value(row: tuple, key: str) -> str | None:
    group = row[0] if row and isinstance(row[0], Group) else None
    if group is None:
        return None
    items = list(group.items)
    for k in range(len(items) - 2):
        if isinstance(items[k], Token) and str(items[k]) == key and isinstance(items[k + 2], Token):
            return str(items[k + 2])
    return None


def _table_string(row: tuple | None) -> str:
    if row and isinstance(row[0], Token) and row[0].type == "STRING":
        from analyzer.importers.hlo.attrs import unescape

        return unescape(str(row[0]))
    return ""


def _stack_frames(tables: Mapping[str, Mapping[int, tuple]], frame_id: int) -> list[Frame]:
    """Frames of ``stack_frame_id`` from the module's tables, innermost first."""
    frames, stacks = [], tables.get("StackFrames", {})
    locations, files, funcs = (tables.get(k, {}) for k in ("FileLocations", "FileNames", "FunctionNames"))
    seen = set()
    while frame_id in stacks and frame_id not in seen:
        seen.add(frame_id)
        row = stacks[frame_id]
        loc = locations.get(int(_table_value(row, "file_location_id") or -1))
        if loc is not None:
            file = _table_string(files.get(int(_table_value(loc, "file_name_id") or -1)))
            func = _table_string(funcs.get(int(_table_value(loc, "function_name_id") or -1)))
            line = int(_table_value(loc, "line") or 0)
            frames.append((file, line, func))
        parent = _table_value(row, "parent_frame_id")
        frame_id = int(parent) if parent is not None and parent.lstrip("-").isdigit() else -1
    return frames


def model_frame(meta: Mapping[str, str], tables: Mapping[str, Mapping[int, tuple]] | None = None) -> Frame | None:
    """The model's own frame of an instruction, from its decoded ``metadata``; None when the
    metadata names none."""
    file = meta.get("source_file", "")
    if _SEPARATOR in file:
        frames = [f for f in _neuron_frames(file.partition(_SEPARATOR)[2]) if not _builder(f[0])]
        if frames:
            return frames[-1]
        file = file.partition(_SEPARATOR)[0]
    frame_id = meta.get("stack_frame_id", "")
    if tables and frame_id.isdigit():
        inner_first = [f for f in _stack_frames(tables, int(frame_id)) if not _builder(f[0])]
        if inner_first:
            return inner_first[0]
    line = meta.get("source_line", "")
    if file and line.isdigit():
        return (file, int(line), "")
    return None


def source_text(frame: Frame, fn: str) -> str:
    """One traceback frame for the node's ``source`` metadata (``fn`` when the frame has no
    function name: the HLO opcode or JAX's ``op_name``)."""
    file, line, func = frame
    return f'File "{file}", line {line}, in {func or fn or "?"}\n'
