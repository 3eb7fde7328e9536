"""The source line a discrepancy points at: the innermost frame in the user's own code.

An exporter records a stack trace per node (``pkg.torch.onnx.stack_trace``, or the
``# File:`` comment of a torch.fx dump). Its frames run from the user's model code down into
the frameworks that traced it (``torch/nn/modules``, ``torch/fx/experimental/proxy_tensor.py``);
those are context, never the site (:func:`analyzer.facts.source.pick_frame`, with the user's
``--source-include``/``--source-exclude`` patterns, ``--source-root`` and ``--path-map``).

A node whose trace holds no frame of the user's (a backward or optimizer node traced inside
the frameworks) is placed at the call of its module: the site of the first node of the same
module scope (or of the nearest enclosing one) that has one. Otherwise the report says that no
frame of the user's code was exported, and names the innermost framework frame as context.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnx

from analyzer.errors import InputError
from analyzer.facts.source import FrameChoice, node_trace, parse_source, pick_frame, stack_frames
from analyzer.inputs.files import check_regular

__all__ = ["locate_sources"]


class _Graph:
    """One graph's nodes by name, and (built when first needed) each module scope's site."""

    def __init__(self, model: onnx.ModelProto, choice: FrameChoice) -> None:
        self.choice = choice
        self.nodes = {n.name: n for n in model.graph.node if n.name}
        self._scopes: dict[str, tuple] | None = None
        self.model = model

    def frames(self, name: str) -> tuple[tuple | None, tuple | None, bool]:
        """(site, context, found) of the node named ``name``."""
        node = self.nodes.get(name)
        if node is None:
            return None, None, False
        site, context = pick_frame(stack_frames(node_trace(node)), self.choice)
        return site, context, True

    def scope_site(self, scope: str) -> tuple | None:
        """The site of the first node of ``scope`` (or of the nearest enclosing scope) with one."""
        if self._scopes is None:
            self._scopes = {}
            for node in self.model.graph.node:
                trace = node_trace(node)
                if not trace:
                    continue
                own = parse_source(node).scope
                if own and own not in self._scopes:
                    site, _ = pick_frame(stack_frames(trace), self.choice)
                    if site is not None:
                        self._scopes[own] = site
        while scope:
            if scope in self._scopes:
                return self._scopes[scope]
            scope = scope.rpartition(".")[0]
        return None


def locate_sources(inp, discrepancies: Sequence, choice: FrameChoice | None = None) -> None:
    """Set ``source``, ``code``, ``source_from`` and ``source_context`` of each discrepancy
    (and ``origin_source``) from the node metadata of the loaded graphs.

    Args:
        inp: the :class:`~analyzer.model.CheckInput` (``seq``, ``ranks``).
        discrepancies: :class:`~analyzer.verdict.build.Discrepancy` records, changed in place.
        choice: the user's frame patterns, source root and path map (default: none).
    """
    choice = choice or FrameChoice()
    graphs: dict[str, _Graph] = {}

    def graph(g: str) -> _Graph | None:
        if g not in graphs:
            model = inp.seq if g == "seq" else None
            if g.startswith("r") and g[1:].isdigit() and int(g[1:]) < len(inp.ranks):
                model = inp.ranks[int(g[1:])]
            if model is None:
                return None
            graphs[g] = _Graph(model, choice)
        return graphs[g]

    def site_of(g: str, node: str, scope: str, fact: str) -> tuple[str, str, str, str]:
        """(file:line, code, how, context) of one node."""
        gr = graph(g)
        site, context, found = gr.frames(node) if gr is not None else (None, None, False)
        if not found and fact:  # a node of the rewritten graph only: the fact's frame
            file, _, line = fact.rpartition(":")
            site = (choice.mapped(file), int(line) if line.isdigit() else 0, "")
        if site is not None:
            return f"{_shown(site[0])}:{site[1]}", site[2], "node", ""
        module = gr.scope_site(scope) if gr is not None and scope else None
        ctx = f"{context[0]}:{context[1]}" if context else ""
        if module is not None:
            return f"{_shown(module[0])}:{module[1]}", module[2], "module", ctx
        return "", "", "", ctx

    def _shown(file: str) -> str:
        """A file in the source root, relative to it (as the repository names it)."""
        return choice.in_root(file) or file

    roots = [choice.root] if choice.root else []
    for d in discrepancies:
        if not d.node or not d.graph:
            continue
        d.source, code, d.source_from, d.source_context = site_of(d.graph, d.node, d.scope, d.source)
        if d.source:
            file, _, line = d.source.rpartition(":")
            d.code = code or read_source_line(file, int(line), roots)
        else:
            d.code = ""
        if d.origin_node:
            d.origin_source, _, _, _ = site_of(d.graph, d.origin_node, d.origin_scope, d.origin_source)


_MAX_SOURCE_BYTES = 16 << 20  # a source file to quote a line of


def read_source_line(file: str, line: int, roots: Sequence[str] = ()) -> str:
    """The text of ``file:line`` when the file can be found (relative to one of ``roots``, as
    given, or relative to an entry of ``sys.path`` such as site-packages for
    ``transformers/models/...``); "" if not. Only ``.py`` files, regular and at most 16 MiB,
    are read: the path comes from the model."""
    import sys

    if line <= 0:
        return ""
    if not file.endswith(".py"):  # a Python frame; never another file the model names (/etc/shadow, /proc/kmsg)
        return ""
    relative = not Path(file).is_absolute()
    candidates = [Path(r) / file for r in roots if relative] + [Path(file)]
    candidates += [Path(p) / file for p in sys.path if p and relative]
    for path in candidates:
        try:
            if path.is_file():
                check_regular(path)  # not a FIFO, device or /proc file behind the name
                if path.stat().st_size > _MAX_SOURCE_BYTES:
                    return ""
                with path.open(encoding="utf-8", errors="replace") as fh:
                    for i, text in enumerate(fh, 1):
                        if i == line:
                            return text.strip()
                return ""
        except (OSError, ValueError, InputError):
            continue
    return ""
