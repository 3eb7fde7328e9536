"""Source locations and module scopes of ONNX nodes.

Read from node metadata written by ``torch.onnx.export(dynamo=True)``
(``pkg.torch.onnx.stack_trace``, ``pkg.torch.onnx.name_scopes``) or from the scope encoded in
legacy TorchScript-exporter node names (``/model/layers.0/mlp/down_proj/MatMul``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import onnx

__all__ = ["SourceInfo", "parse_source"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]+)\n(?P<code>[^\n]*)')
_FX_COMMENT = re.compile(r"File: (?P<file>\S+?):(?P<line>\d+) in (?P<fn>\S+), code: (?P<code>.*)")
_LIBRARY_PREFIXES = ("torch/", "onnxscript/", "<eval_with_key>")
_LIBRARY_PARTS = ("/torch/", "/onnxscript/", "/site-packages/torch")
_MAX_LINE = 2**31 - 1
_MAX_SCOPES_TEXT = 100_000  # name_scopes of real exports are a few hundred characters


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


def _last_user_frame(trace: str) -> tuple[str, int, str]:
    """(file, line, code) of the last frame outside torch of a stack trace, or of a torch.fx
    ``File: ...`` comment."""
    frames = []
    if 'File "' in trace:  # a Python stack trace (a torch.fx comment has none: no regex scan)
        frames = [(m["file"], int(m["line"]), m["code"].strip()) for m in _FRAME.finditer(trace)]
    if not frames:
        m = _FX_COMMENT.search(trace)
        return (m["file"], int(m["line"]), m["code"].strip()) if m else ("", 0, "")
    user = [f for f in frames if not f[0].startswith(_LIBRARY_PREFIXES) and not any(p in f[0] for p in _LIBRARY_PARTS)]
    return (user or frames)[-1]


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
        A :class:`SourceInfo`; fields stay empty/0 when the exporter recorded nothing.
    """
    meta = {p.key: p.value for p in node.metadata_props}
    file, line, code = "", 0, ""
    for key in ("pkg.torch.onnx.stack_trace", "source", "stack_trace"):
        if meta.get(key):
            file, line, code = _last_user_frame(meta[key])
            break
    scope = ""
    if meta.get("pkg.torch.onnx.name_scopes"):
        scope = _scope_from_name_scopes(meta["pkg.torch.onnx.name_scopes"])
    if not scope:
        scope = _scope_from_legacy_name(node.name)
    line = line if 0 < line <= _MAX_LINE else 0  # the engines' integers are 32-bit
    return SourceInfo(file=_text(file), line=line, code=_text(code), scope=_text(scope))


def _text(s: str) -> str:
    """Metadata is free text; NUL cannot travel into the engines' strings (clingo ends them there)."""
    return s.replace("\x00", "\ufffd")
