"""Source locations and module scopes of ONNX nodes.

Read from node metadata written by ``torch.onnx.export(dynamo=True)``
(``pkg.torch.onnx.stack_trace``, ``pkg.torch.onnx.name_scopes``) or from the scope encoded in
legacy TorchScript-exporter node names (``/model/layers.0/mlp/down_proj/MatMul``).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import onnx

__all__ = [
    "FRAMEWORK_FRAMES",
    "FrameChoice",
    "SourceInfo",
    "node_trace",
    "parse_source",
    "pick_frame",
    "stack_frames",
]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]+)\n(?P<code>[^\n]*)')
_FX_COMMENT = re.compile(r"File: (?P<file>\S+?):(?P<line>\d+) in (?P<fn>\S+), code: (?P<code>.*)")
#: Frames of the frameworks a graph is traced through (fnmatch patterns on the recorded path):
#: context, never the site a report points at.
FRAMEWORK_FRAMES = (
    "torch/*",
    "*/torch/*",
    "functorch/*",
    "*/functorch/*",
    "onnxscript/*",
    "*/onnxscript/*",
    "<*>",
    "*/contextlib.py",
    "contextlib.py",
    "*/importlib/*",
)
#: Installed third-party code: a frame here is the site only when no frame is outside it.
INSTALLED_FRAMES = ("*/site-packages/*", "*/dist-packages/*")
_MAX_LINE = 2**31 - 1
_MAX_SCOPES_TEXT = 100_000  # name_scopes of real exports are a few hundred characters

Frame = tuple[str, int, str]  # (file, line, code)


@dataclass(frozen=True)
class SourceInfo:
    """Where a node came from.

    Attributes:
        file: source file path ("" when unknown).
        line: 1-based line number (0 when unknown).
        code: the source line's text as recorded by the exporter ("" when unknown).
        scope: module path such as ``model.layers.1.mlp.down_proj`` ("" when unknown).
    """

    file: str = ""
    line: int = 0
    code: str = ""
    scope: str = ""


@dataclass(frozen=True)
class FrameChoice:
    """Which recorded frames are the user's own code (``--source-include``/``--source-exclude``,
    ``--source-root``, ``--path-map``).

    Attributes:
        include: fnmatch patterns of the user's files: a matching frame is preferred.
        exclude: more patterns of framework files (beside :data:`FRAMEWORK_FRAMES`).
        root: the user's source tree: a frame whose file lies in it (absolute path under it,
            or a relative path that exists under it) is preferred.
        path_map: ``(old, new)`` path prefixes applied to recorded paths first (the paths
            of the exporting machine -> the user's checkout).
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    root: str | None = None
    path_map: tuple[tuple[str, str], ...] = ()

    def mapped(self, file: str) -> str:
        """``file`` with the first matching ``path_map`` prefix replaced (``NEW`` empty or
        ``.``: the rest of the path, relative)."""
        for old, new in self.path_map:
            old = old.rstrip("/")
            if file == old or file.startswith(old + "/"):
                rest = file[len(old) :].lstrip("/")
                return rest if new in ("", ".") else f"{new.rstrip('/')}/{rest}"
        return file

    def in_root(self, file: str) -> str | None:
        """``file`` relative to ``root`` (posix) when it lies in it, else None."""
        if not self.root or not file:
            return None
        import os

        root = os.path.realpath(self.root)
        path = file if os.path.isabs(file) else os.path.join(root, file)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root or not os.path.exists(real):
            return None
        return os.path.relpath(real, root).replace(os.sep, "/")


def stack_frames(trace: str) -> list[Frame]:
    """The frames of a recorded stack trace, outermost first, or the one frame of a torch.fx
    ``# File: path:line in fn, code: ...`` comment."""
    frames: list[Frame] = []
    if 'File "' in trace:  # a Python stack trace (a torch.fx comment has none: no regex scan)
        frames = [(m["file"], int(m["line"]), m["code"].strip()) for m in _FRAME.finditer(trace)]
    if not frames:
        m = _FX_COMMENT.search(trace)
        frames = [(m["file"], int(m["line"]), m["code"].strip())] if m else []
    return frames


def pick_frame(frames: list[Frame], choice: FrameChoice | None = None) -> tuple[Frame | None, Frame | None]:
    """The site among ``frames`` (outermost first) and, when there is none, the context.

    The site is the innermost frame of the first non-empty tier: frames matching
    ``choice.include`` or lying in ``choice.root``; frames outside the frameworks and outside
    installed packages; frames outside the frameworks (installed model code such as
    ``site-packages/transformers/models/...``). Framework frames
    (:data:`FRAMEWORK_FRAMES`, ``choice.exclude``) are never the site.

    Returns:
        ``(site, None)``, or ``(None, innermost frame)`` when every frame is a framework's
        (``(None, None)`` without frames). Paths are mapped by ``choice.path_map``.
    """
    choice = choice or _DEFAULT
    mapped = [(choice.mapped(f), line, code) for f, line, code in frames]
    framework = (*FRAMEWORK_FRAMES, *choice.exclude)
    own = [f for f in mapped if not _matches(f[0], framework)]
    tiers = [
        [f for f in own if _matches(f[0], choice.include) or choice.in_root(f[0]) is not None],
        [f for f in own if not _matches(f[0], INSTALLED_FRAMES)],
        own,
    ]
    for tier in tiers:
        if tier:
            return tier[-1], None
    return None, (mapped[-1] if mapped else None)


@functools.lru_cache(maxsize=8192)  # a graph's frames name a few files many times
def _matches(file: str, patterns: tuple[str, ...]) -> bool:
    return bool(patterns) and _pattern(patterns).match(file.replace("\\", "/")) is not None


@functools.lru_cache(maxsize=32)
def _pattern(patterns: tuple[str, ...]) -> re.Pattern:
    """One regex for a tuple of fnmatch patterns (one match per frame, not one per pattern)."""
    from fnmatch import translate

    return re.compile("|".join(f"(?:{translate(p)})" for p in patterns))


_DEFAULT = FrameChoice()


def node_trace(node: onnx.NodeProto) -> str:
    """The stack trace an exporter recorded for ``node`` ("" when none)."""
    for p in node.metadata_props:
        if p.key in ("pkg.torch.onnx.stack_trace", "source", "stack_trace") and p.value:
            return p.value
    return ""


# a list of single-quoted strings of printable ASCII but quote and backslash, as torch.onnx
# writes scopes: literal_eval reads each item as the text between its quotes
_PLAIN_SCOPES = re.compile(r"\[(?:'[ -&(-\[\]-~]*'(?:, '[ -&(-\[\]-~]*')*)?\]")
_PLAIN_STRING = re.compile(r"'([^']*)'")


def _scope_from_name_scopes(text: str) -> str:
    """torch.onnx writes the module paths from the root down, then the fx node's own name:
    ``['', 'model', 'model.layers.0', 'model.layers.0.self_attn', 'cat_2']``."""
    if len(text) > _MAX_SCOPES_TEXT:
        return ""
    if _PLAIN_SCOPES.fullmatch(text):  # what literal_eval reads, without compiling the text
        scopes = _PLAIN_STRING.findall(text)
    else:
        try:
            scopes = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # not a literal, or too deep
            return ""
    if not isinstance(scopes, (list, tuple)):
        return ""
    modules = [str(s) for s in scopes[:-1] if s]
    return modules[-1] if modules else ""


def _scope_from_legacy_name(name: str) -> str:
    if not name.startswith("/"):
        return ""
    parts = name.strip("/").split("/")[:-1]
    return ".".join(p for p in parts if p)


def parse_source(node: onnx.NodeProto) -> SourceInfo:
    """Source location and module scope of one node.

    Args:
        node: an ONNX node; its ``metadata_props`` and ``name`` are read.

    Returns:
        A :class:`SourceInfo`; fields stay empty/0 when the exporter recorded nothing, or only
        framework frames (:func:`pick_frame` with the default :class:`FrameChoice`).
    """
    meta = {p.key: p.value for p in node.metadata_props}
    file, line, code = "", 0, ""
    for key in ("pkg.torch.onnx.stack_trace", "source", "stack_trace"):
        if meta.get(key):
            file, line, code = _default_site(meta[key]) if len(meta[key]) <= _MAX_CACHED_TRACE else _site(meta[key])
            break
    scope = ""
    if meta.get("pkg.torch.onnx.name_scopes"):
        scope = _scope_from_name_scopes(meta["pkg.torch.onnx.name_scopes"])
    if not scope:
        scope = _scope_from_legacy_name(node.name)
    line = line if 0 < line <= _MAX_LINE else 0  # the engines' integers are 32-bit
    return SourceInfo(file=_text(file), line=line, code=_text(code), scope=_text(scope))


_MAX_CACHED_TRACE = 1 << 16  # longer traces are parsed each time (the cache stays small)


def _site(trace: str) -> Frame:
    """The site of ``trace`` under the default :class:`FrameChoice` (``("", 0, "")``: none)."""
    site, _ = pick_frame(stack_frames(trace))
    return site or ("", 0, "")


# every rank graph repeats the sequential graph's traces, and a check re-reads them
_default_site = functools.lru_cache(maxsize=4096)(_site)


def _text(s: str) -> str:
    """Metadata is free text; NUL cannot travel into the engines' strings (clingo ends them there)."""
    return s.replace("\x00", "\ufffd")
