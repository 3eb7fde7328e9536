"""A self-contained HTML report of a check: one file, inline CSS and inline SVG, no scripts.

The page shows the verdict banner, each output's relation (and numeric error), and for each
discrepancy its node, op, scope, source line, inputs, the origin of a pending partial sum,
hints, paired rank nodes and a drawing of the graph around the frontier: the seq
neighbourhood and, side by side, the same neighbourhood on each rank graph.

Every string that comes from a model (node and value names, scopes, file paths, code, notes)
is treated as hostile and escaped with :func:`html.escape`, in HTML text, attributes and SVG
text alike; a Content-Security-Policy ``<meta>`` forbids scripts and remote fetches on top.

Example::

    from analyzer import check
    from analyzer.reports.html import write_html
    write_html(check("seq.onnx", ["rank0.onnx", "rank1.onnx"]), "report.html")
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from analyzer.errors import escape
from analyzer.model import CheckResult
from analyzer.reports.text import EVIDENCE, relation_text
from analyzer.verdict.build import Discrepancy, layout_text

__all__ = ["render_html", "write_html"]

MAX_DRAWN = 10  # discrepancies that get a drawing; the rest are listed without one
_UP_HOPS, _DOWN_HOPS, _MAX_NODES, _MAX_PER_LEVEL = 2, 2, 18, 3
_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 150, 38, 14, 46, 12
_MONO = "ui-monospace,Menlo,Consolas,monospace"
_CHARS = 21  # characters of a node name that fit in a box (11px monospace)

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1360px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:20px;margin:8px 0} h2{font-size:17px;margin:26px 0 8px} h3{font-size:15px;margin:0 0 8px}
code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f0f2f5;padding:6px 8px;border-radius:4px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
.banner{padding:14px 18px;border-radius:6px;color:#fff;font-size:20px;font-weight:600}
.banner small{font-weight:400;font-size:13px;opacity:.9;margin-left:12px}
.ok{background:#1f7a3a}.bad{background:#b42323}.odd{background:#7a2a8c}.warn{background:#9a6200}
.card.inconsistency{border-left-color:#7a2a8c}
.card.unproven{border-left-color:#9a6200}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px}
td,th{border:1px solid #d9dce1;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}
.card{background:#fff;border:1px solid #d9dce1;border-left:5px solid #b42323;border-radius:6px;
padding:12px 16px;margin:12px 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0 8px}
dt{color:#5b6373} dd{margin:0;word-break:break-all}
.hint{background:#fff6d6;border:1px solid #e8cf6a;padding:6px 10px;border-radius:4px;margin:6px 0}
.origin{background:#f1e8fb;border:1px solid #b58be0;padding:6px 10px;border-radius:4px;margin:6px 0}
.rel-none{color:#b42323;font-weight:600}
.panels{display:flex;flex-wrap:wrap;gap:12px;margin-top:8px}
.panel{flex:1 1 0;min-width:340px;background:#fbfbfc;border:1px solid #d9dce1;border-radius:6px;padding:6px 8px}
.panel svg{display:block;width:100%;height:auto;margin:0 auto}
.panel h4{margin:0 0 4px;font-size:13px}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:4px}
.muted{color:#5b6373}
"""

_SVG_DEFS = (
    '<defs><marker id="arrow-{key}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
    'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#7b8494"/></marker></defs>'
)

_STYLE = {  # role -> (fill, stroke, stroke width)
    "frontier": ("#ffd9d9", "#d11a1a", 3),
    "paired": ("#ffe6c7", "#e07b00", 3),
    "origin": ("#efe2fb", "#8a3fd1", 2.5),
    "node": ("#ffffff", "#8a93a3", 1),
    "value": ("#eef0f3", "#b3b9c4", 1),
}


#: Characters of model-derived text written as escapes (:func:`analyzer.errors.escape`): controls
#: but tab and newline (an ESC sequence would run in a terminal showing the file), bidi
#: overrides, and surrogates of non-UTF-8 file names.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _e(text: object) -> str:
    """Escape any text for HTML text, attribute values and SVG text."""
    return html.escape(_UNSAFE.sub(lambda m: escape(m.group()), str(text)), quote=True)


def _short(text: str, n: int = _CHARS) -> str:
    """``text`` cut in the middle to at most ``n`` characters (unescaped)."""
    return text if len(text) <= n else text[: n // 2 - 1] + "\u2026" + text[-(n - n // 2) :]


# --------------------------------------------------------------------------- graph drawing


@dataclass
class _Box:
    """One drawn box: an ONNX node (``index`` >= 0) or a graph input/weight (``index`` == -1)."""

    key: str
    title: str
    label: str
    role: str = "node"
    index: int = -1
    level: int = 0
    x: float = 0.0
    tooltip: str = ""
    dom_id: str = ""


@dataclass
class _Drawing:
    """Boxes and edges (``src key, dst key, value name, edge label``) of one neighbourhood."""

    boxes: dict[str, _Box] = field(default_factory=dict)
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)
    hidden: int = 0


class _GraphView:
    """Producer/consumer lookups over one (canonical) ONNX graph."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.nodes = list(model.graph.node)
        self.producer: dict[str, int] = {}
        self.consumers: dict[str, list[int]] = defaultdict(list)
        for i, node in enumerate(self.nodes):
            for v in node.output:
                if v:
                    self.producer[v] = i
            for v in node.input:
                if v:
                    self.consumers[v].append(i)

    def neighbourhood(self, centers: Sequence[int]) -> tuple[list[int], int]:
        """Node indices within ``_UP_HOPS`` producers / ``_DOWN_HOPS`` consumers of ``centers``.

        Returns:
            The sorted indices kept, and how many more were reachable but left out (caps).
        """
        keep = set(centers)
        hidden = 0
        frontier_up, frontier_down = set(centers), set(centers)
        for hop in range(max(_UP_HOPS, _DOWN_HOPS)):
            nxt_up, nxt_down = set(), set()
            if hop < _UP_HOPS:
                for i in sorted(frontier_up):
                    nxt_up |= {self.producer[v] for v in self.nodes[i].input if v in self.producer}
            if hop < _DOWN_HOPS:
                for i in sorted(frontier_down):
                    for v in self.nodes[i].output:
                        nxt_down |= set(self.consumers.get(v, []))
            for group in (nxt_up, nxt_down):
                new = sorted(group - keep, key=lambda j: abs(j - centers[0]))
                room = max(0, min(_MAX_PER_LEVEL, _MAX_NODES - len(keep)))
                keep |= set(new[:room])
                hidden += max(0, len(new) - room)
            frontier_up, frontier_down = nxt_up & keep, nxt_down & keep
        return sorted(keep), hidden


def _node_label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"#{index}:{node.op_type}"


def _build_drawing(
    view: _GraphView,
    centers: Sequence[int],
    center_role: str,
    *,
    frontier_id: str = "",
    origin: Sequence[int] = (),
    value_labels: dict[str, str] | None = None,
) -> _Drawing:
    """Boxes and edges of the neighbourhood of ``centers`` in one graph."""
    kept, hidden = view.neighbourhood(centers)
    drawing = _Drawing(hidden=hidden)
    kept_set = set(kept)
    labels = value_labels or {}
    for i in kept:
        node = view.nodes[i]
        domain = f"{node.domain}::" if node.domain not in ("", "ai.onnx") else ""
        op = node.op_type
        role = center_role if i in centers else ("origin" if i in origin else "node")
        dom_id = ""
        if i in centers:
            dom_id = frontier_id if len(centers) == 1 else f"{frontier_id}-{list(centers).index(i)}"
        name = _node_label(node, i)
        tip = f"{domain}{op} {name}\ninputs: {', '.join(node.input)}\noutputs: {', '.join(node.output)}"
        drawing.boxes[f"n{i}"] = _Box(f"n{i}", op, name, role, i, tooltip=tip, dom_id=dom_id)
    for i in kept:
        for v in view.nodes[i].input:
            if not v:
                continue
            src = view.producer.get(v)
            if src in kept_set:
                drawing.edges.append((f"n{src}", f"n{i}", v, labels.get(v, "")))
            elif src is None and i in centers:
                vkey = f"v:{v}"
                if vkey not in drawing.boxes:
                    drawing.boxes[vkey] = _Box(vkey, "input / weight", v, "value", tooltip=v)
                drawing.edges.append((vkey, f"n{i}", v, labels.get(v, "")))
    return drawing


def _layout(drawing: _Drawing) -> tuple[int, int]:
    """Assign levels (longest path, sources pulled down next to their first reader) and x
    positions (barycentre of the boxes above); returns the canvas width and height."""
    boxes = drawing.boxes
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    for s, d, _, _ in drawing.edges:
        preds[d].append(s)
        succs[s].append(d)
    order = sorted(boxes, key=lambda k: (boxes[k].index if boxes[k].index >= 0 else -1, k))
    order = [k for k in order if boxes[k].index >= 0]
    for k in order:  # node indices are a topological order (ONNX graphs are sorted)
        boxes[k].level = max((boxes[p].level + 1 for p in preds[k] if boxes[p].index >= 0), default=0)
    for k in reversed(order):  # pull sources down to just above their first reader
        if not preds[k] and succs[k]:
            boxes[k].level = max(boxes[k].level, min(boxes[s].level for s in succs[k]) - 1)
    for k, b in boxes.items():
        if b.index < 0:
            b.level = min(boxes[s].level for s in succs[k]) - 1
    low = min((b.level for b in boxes.values()), default=0)
    levels: dict[int, list[str]] = defaultdict(list)
    for k in order + [k for k in boxes if boxes[k].index < 0]:
        boxes[k].level -= low
        levels[boxes[k].level].append(k)
    width = max((len(v) for v in levels.values()), default=1)
    canvas_w = _PAD * 2 + width * _BOX_W + (width - 1) * _GAP_X
    step = _BOX_W + _GAP_X
    for lvl in sorted(levels):
        row = levels[lvl]
        x0 = (canvas_w - (len(row) * step - _GAP_X)) / 2
        keys = {}
        for j, k in enumerate(row):
            xs = [boxes[p].x for p in preds[k] if boxes[p].level < boxes[k].level]
            keys[k] = sum(xs) / len(xs) if xs else x0 + j * step
        row.sort(key=keys.__getitem__)
        for j, k in enumerate(row):
            boxes[k].x = x0 + j * step
    canvas_h = _PAD * 2 + (max(levels, default=0) + 1) * (_BOX_H + _GAP_Y) - _GAP_Y
    return canvas_w, canvas_h


def _svg(drawing: _Drawing, key: str, aria: str) -> str:
    """Inline SVG of a laid-out drawing (every model string escaped)."""
    w, h = _layout(drawing)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'style="max-width:{w}px" role="img" aria-label="{_e(aria)}" font-family="{_MONO}">',
        _SVG_DEFS.format(key=key),
    ]

    def y_of(b: _Box) -> float:
        return _PAD + b.level * (_BOX_H + _GAP_Y)

    labelled: set[tuple[str, str]] = set()
    for s, d, value, label in drawing.edges:
        a, b = drawing.boxes[s], drawing.boxes[d]
        x1, y1 = a.x + _BOX_W / 2, y_of(a) + _BOX_H
        x2, y2 = b.x + _BOX_W / 2, y_of(b)
        my = (y1 + y2) / 2
        out.append(
            f'<g class="edge"><title>{_e(value)}</title><path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{my:.1f} '
            f'{x2:.1f},{my:.1f} {x2:.1f},{y2 - 1:.1f}" fill="none" stroke="#7b8494" stroke-width="1.2" '
            f'marker-end="url(#arrow-{key})"/>'
        )
        if label and (s, value) not in labelled:
            labelled.add((s, value))
            colour = "#b42323" if label == "none" else "#2b5cab"
            out.append(
                f'<text x="{x1 + 5:.1f}" y="{y1 + 12:.1f}" font-size="10" fill="{colour}">'
                f"{_e(_short(label, 30))}</text>"
            )
        out.append("</g>")
    for b in drawing.boxes.values():
        fill, stroke, sw = _STYLE[b.role]
        x, y = b.x, y_of(b)
        gid = f' id="{_e(b.dom_id)}"' if b.dom_id else ""
        rx = 16 if b.role == "value" else 5
        out.append(
            f'<g class="box {b.role}"{gid}><title>{_e(b.tooltip or b.label)}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{_BOX_W}" height="{_BOX_H}" rx="{rx}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{x + _BOX_W / 2:.1f}" y="{y + 15:.1f}" font-size="11" font-weight="700" '
            f'text-anchor="middle" fill="#1d2330">{_e(_short(b.title))}</text>'
            f'<text class="name" x="{x + _BOX_W / 2:.1f}" y="{y + 30:.1f}" font-size="11" '
            f'text-anchor="middle" fill="#3a4252">{_e(_short(b.label))}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- lookups


class _Lookups:
    """Node ids, pairings and relations from the derivation, for the drawings."""

    def __init__(self, result: CheckResult) -> None:
        deriv = result.derivation
        tables = {**deriv.facts, **deriv.derived}

        def rows(rel: str) -> Iterable[dict]:
            if rel not in deriv.decls:
                return []
            cols = list(deriv.decls[rel].column_names)
            return (dict(zip(cols, row)) for row in tables.get(rel, []))

        self.index_of: dict[tuple[str, str], int] = {(r["g"], r["node"]): r["index"] for r in rows("Node_Index")}
        self.id_at = {(g, i): n for (g, n), i in self.index_of.items()}
        self.pairs: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
        for r in rows("Pair"):
            self.pairs[r["n"]][r["r"]].append(r["m"])
        self.holds: dict[str, list[str]] = defaultdict(list)
        for r in rows("Holds"):
            self.holds[r["s"]].append(layout_text(r["kind"], r["axis"], r["param"]))

    def paired(self, seq_index: int) -> dict[int, list[int]]:
        """Rank -> indices of the rank nodes paired with the seq node at ``seq_index``."""
        seq_id = self.id_at.get(("seq", seq_index), "")
        return {
            r: sorted(self.index_of[(f"r{r}", m)] for m in ids if (f"r{r}", m) in self.index_of)
            for r, ids in sorted(self.pairs.get(seq_id, {}).items())
        }

    def seq_label(self, value: str) -> str:
        """Edge label of a seq value: its relations, or ``none``."""
        return " | ".join(sorted(set(self.holds.get(value, [])))) or "none"


def _find_by_name(view: _GraphView, name: str) -> list[int]:
    """Indices of nodes named ``name`` (or the ``#i:Op`` id form used when a name is not unique)."""
    if name.startswith("#") and ":" in name:
        head = name[1:].split(":", 1)[0]
        if head.isdigit() and int(head) < len(view.nodes):
            return [int(head)]
    return [i for i, n in enumerate(view.nodes) if n.name == name][:1]


def _drawings(result: CheckResult, d: Discrepancy, di: int, look: _Lookups) -> str:
    """The side-by-side panels of one discrepancy (seq, then every rank)."""
    inp = result.inputs
    seq_model = inp.canonical_seq or inp.seq
    rank_models = inp.canonical_ranks or inp.ranks
    panels = []
    rank_centers: dict[int, tuple[list[int], str]] = {}
    rank_origin: dict[int, list[int]] = {}
    if d.graph == "seq" and d.index >= 0:
        view = _GraphView(seq_model)
        origin = _find_by_name(view, d.origin_node) if d.origin_node else []
        drawing = _build_drawing(
            view,
            [d.index],
            "frontier",
            frontier_id=f"frontier-{di}",
            origin=origin,
            value_labels={v: look.seq_label(v) for n in view.nodes for v in n.input},
        )
        panels.append(_panel("seq (sequential)", drawing, f"{di}-seq", ""))
        rank_centers = {r: (idx, "paired with the frontier") for r, idx in look.paired(d.index).items()}
        if origin:
            rank_origin = look.paired(origin[0])
    elif d.graph.startswith("r") and d.graph[1:].isdigit() and d.index >= 0:
        g_rank = int(d.graph[1:])
        own = _GraphView(rank_models[g_rank]).nodes[d.index]
        for r, model in enumerate(rank_models):
            if r == g_rank:
                rank_centers[r] = ([d.index], "the rank node where the chain of pieces stops")
            else:
                found = _find_by_name(_GraphView(model), _node_label(own, d.index))
                rank_centers[r] = (found, "node of the same name")
        panels.append('<p class="muted">rank-side discrepancy: every seq node is explained; no seq panel.</p>')
    else:
        return ""
    for r, model in enumerate(rank_models):
        view = _GraphView(model)
        centers, why = rank_centers.get(r, ([], ""))
        if not centers and d.graph == "seq" and d.index >= 0:
            centers = _find_by_name(view, d.node)
            why = "no pair was derived; node of the same name shown" if centers else ""
        if not centers:
            panels.append(f'<div class="panel"><h4>rank {r}</h4><p class="rel-none">no paired node</p></div>')
            continue
        role = "frontier" if d.graph == f"r{r}" else "paired"
        fid = f"frontier-{di}" if d.graph == f"r{r}" else f"frontier-{di}-r{r}"
        drawing = _build_drawing(view, centers, role, frontier_id=fid, origin=rank_origin.get(r, []))
        panels.append(_panel(f"rank {r}", drawing, f"{di}-r{r}", why))
    legend = (
        '<div class="legend">'
        + "".join(
            f'<span><i class="sw" style="background:{_STYLE[k][0]};border:2px solid {_STYLE[k][1]}"></i>{t}</span>'
            for k, t in (
                ("frontier", "frontier"),
                ("paired", "paired rank node"),
                ("origin", "origin of the partial sum"),
                ("value", "graph input / weight"),
            )
        )
        + '<span class="muted">seq edges are labelled with the relation of their value; hover for names</span></div>'
    )
    return legend + '<div class="panels">' + "".join(panels) + "</div>"


def _panel(title: str, drawing: _Drawing, key: str, why: str) -> str:
    more = f'<p class="muted">{drawing.hidden} more neighbour(s) not drawn</p>' if drawing.hidden else ""
    sub = f' <span class="muted">({_e(why)})</span>' if why else ""
    return f'<div class="panel"><h4>{_e(title)}{sub}</h4>{_svg(drawing, key, title)}{more}</div>'


# --------------------------------------------------------------------------- page


def _ranks_text(n: int) -> str:
    return "rank 0" if n == 1 else f"ranks 0..{n - 1}"


def _outputs_html(result: CheckResult) -> str:
    v = result.verdict_
    n = result.world_size
    head = "<tr><th>output</th><th>relation</th><th>rank values</th>"
    head += "<th>numeric max abs error</th></tr>" if result.numeric else "</tr>"
    rows = []
    for o in v.outputs:
        rel = f"{_e(o.relation)} on {_ranks_text(n)}" if o.relation else '<span class="rel-none">no relation</span>'
        cells = f"<td><code>{_e(o.name)}</code></td><td>{rel}</td><td><code>{_e(', '.join(o.rank_values))}</code></td>"
        if result.numeric:
            err = result.numeric.get(o.name)
            w = result.witness.outputs.get(o.name) if result.witness is not None else None
            tol = f" (tolerance {w.tolerance:.3g})" if w is not None else ""
            cells += f"<td>{'' if err is None else f'{err:.3g}{tol}'}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f"<h2>Outputs</h2><table>{head}{''.join(rows)}</table>"


def _given_html(result: CheckResult) -> str:
    """What a conditional proof assumes: the input relations not checked on values."""
    v = result.verdict_
    if not v.conditional:
        return ""
    items = "".join(f"<li><code>{_e(relation_text(r))}</code></li>" for r in v.assumed)
    return (
        f'<div class="hint" id="given"><b>verified given {len(v.assumed)} input relations not checked on '
        "values</b> (fed inputs, weights the files do not store or that were not compared, spec relations): "
        f"<details><summary>the assumed relations</summary><ul>{items}</ul></details></div>"
    )


def _witness_html(result: CheckResult) -> str:
    """The numeric witness's contradictions (cards) and why it could not run."""
    from analyzer.reports.text import contradiction_text, inconsistency_hint

    w = result.witness
    if w is None:
        return ""
    parts = []
    if w.skipped:
        parts.append(f'<p class="hint" id="witness-skipped">numeric witness could not run: {_e(w.skipped)} '
                     "(the verdict is the rules' alone)</p>")
    elif w.intermediates_skipped:
        parts.append(f'<p class="hint">numeric witness: intermediate relations not checked: '
                     f"{_e(w.intermediates_skipped)}</p>")
    if w.contradictions:
        parts.append(f"<h2>Internal inconsistencies ({len(w.contradictions)})</h2>")
    for i, c in enumerate(w.contradictions):
        rows = "".join(f"<li><code>{_e(x)}</code></li>" for x in c.inputs)
        rules = "".join(f'<dt>derived by user rule</dt><dd class="user-rule"><code>{_e(x)}</code></dd>'
                        for x in c.rules)
        parts.append(
            f'<div class="card inconsistency" id="inconsistency-{i}"><h3>Internal inconsistency {i + 1}: '
            f"<code>{_e(c.value)}</code> = {_e(c.relation)}</h3>"
            f"<p>{_e(contradiction_text(c, result.world_size))}</p>"
            f"<dl><dt>rank values</dt><dd><code>{_e(', '.join(c.rank_values))}</code></dd>{rules}</dl>"
            f"<details><summary>{len(c.inputs)} input relations upstream</summary><ul>{rows}</ul></details>"
            f'<div class="hint"><b>hint:</b> {_e(inconsistency_hint(c))}</div></div>'
        )
    return "".join(parts)


def _discrepancy_html(result: CheckResult, d: Discrepancy, di: int, look: _Lookups) -> str:
    if d.kind == "collective":
        return (
            f'<div class="card" id="discrepancy-{di}"><h3>Discrepancy {di + 1}: collectives</h3>{_e(d.message)}</div>'
        )
    where = "frontier" if d.graph == "seq" else f"on rank {d.graph[1:]}" if d.graph[1:].isdigit() else d.graph
    parts = [
        f'<div class="card" id="discrepancy-{di}"><h3>Discrepancy {di + 1} ({_e(where)}): '
        f"<code>{_e(d.node)}</code> ({_e(d.op_type)})</h3>"
    ]
    if d.message:
        parts.append(f"<p>{_e(d.message)}</p>")
    dl = [("node", f"<code>{_e(d.node)}</code>"), ("op", _e(d.op_type))]
    if d.scope:
        dl.append(("scope", _e(d.scope)))
    if d.source:
        how = " (the call of its module: the node has no frame of its own)" if d.source_from == "module" else ""
        dl.append(("source", f"<code>{_e(d.source)}</code>{_e(how)}"))
    else:
        ctx = f" (innermost frame, framework code: {d.source_context})" if d.source_context else ""
        dl.append(("source", f'<span class="muted">none in your code was exported for this node{_e(ctx)}</span>'))
    if d.code:
        dl.append(("code", f"<pre>{_e(d.code)}</pre>"))
    if d.outputs:
        dl.append(("outputs", f"<code>{_e(', '.join(d.outputs))}</code>"))
    if d.graph == "seq":
        paired = "; ".join(f"rank {r}: <code>{_e(', '.join(ns))}</code>" for r, ns in sorted(d.rank_nodes.items()))
        dl.append(("paired with", paired or '<span class="rel-none">no rank node</span>'))
    parts.append("<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in dl) + "</dl>")
    if d.inputs:
        rows = []
        for i in d.inputs:
            rels = _e(", ".join(i.relations)) if i.relations else ""
            if not rels:
                none = "no relation" if d.graph == "seq" else "not a piece of any sequential value"
                rels = f'<span class="rel-none">{none}</span>'
            made_in = f", {_e(i.producer_scope)}" if i.producer_scope else ""
            prod = (
                f"<code>{_e(i.producer)}</code> ({_e(i.producer_op or '')}{made_in})"
                if i.producer
                else '<span class="muted">graph input or weight</span>'
            )
            rows.append(f"<tr><td><code>{_e(i.name)}</code></td><td>{rels}</td><td>{prod}</td></tr>")
        parts.append(
            "<table><tr><th>input</th><th>relations</th><th>producer (op, scope)</th></tr>" + "".join(rows) + "</table>"
        )
    if d.origin_node:
        src = f" (<code>{_e(d.origin_source)}</code>)" if d.origin_source else ""
        parts.append(
            f'<div class="origin">the partial sum comes from <code>{_e(d.origin_node)}</code>'
            f"{' in <b>' + _e(d.origin_scope) + '</b>' if d.origin_scope else ''}{src}: reduce it there</div>"
        )
    if d.numbers == "differ":
        off = f" (the paired rank nodes' output is off by {d.numeric_error:.3g})" if d.numeric_error else ""
        parts.append(f"<p><b>numbers differ</b>: no rank value equals this value{off}</p>")
    parts.extend(f'<div class="hint"><b>hint:</b> {_e(h)}</div>' for h in d.hints)
    tried = getattr(d, "rules_tried", None) or []  # newer verdicts name the transfer rules that did not match
    if tried:
        parts.append(
            f'<p class="muted">rules tried: <code>{_e(", ".join(tried))}</code> '
            "(no pattern matches these input relations)</p>"
        )
    if di < MAX_DRAWN:
        parts.append(_drawings(result, d, di, look))
    parts.append("</div>")
    return "".join(parts)


def _unproven_html(u: Discrepancy, ui: int) -> str:
    """A step no rule explains whose value the numbers show on the ranks, with its pattern."""
    dl = [("node", f"<code>{_e(u.node)}</code>"), ("op", _e(u.op_type)), ("scope", _e(u.scope) or "?")]
    if u.source:
        dl.append(("source", f"<code>{_e(u.source)}</code>"))
    if u.code:
        dl.append(("code", f"<pre>{_e(u.code)}</pre>"))
    pattern = f"<pre>{_e(chr(10).join(u.pattern))}</pre>" if u.pattern else ""
    return (
        f'<div class="card unproven" id="unproven-{ui}"><h3>Unproven {ui + 1}: <code>{_e(u.node)}</code> '
        f"({_e(u.op_type)})</h3><p>{_e(u.message)}</p>"
        + "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in dl) + "</dl>"
        + pattern + "</div>"
    )


def render_html(result: CheckResult) -> str:
    """The whole report as one HTML document (inline CSS and SVG, no scripts, no URLs).

    Args:
        result: the check result.

    Returns:
        The HTML text.
    """
    v = result.verdict_
    inp = result.inputs
    n = result.world_size
    look = _Lookups(result)
    summary = f"world size {n} &middot; engine {_e(result.engine)} &middot; {result.seconds:.2f} s" + (
        f" &middot; {len(v.discrepancies)} discrepancies" if v.verdict == "discrepancy" or v.discrepancies else ""
    ) + (f" &middot; {len(v.unproven)} unproven steps" if v.unproven else "")
    if result.witness is not None and result.witness.contradictions:
        summary += f" &middot; {len(result.witness.contradictions)} internal inconsistencies"
    if v.conditional:
        summary += f" &middot; given {len(v.assumed)} assumed input relations"
    style = {"verified": "ok", "inconsistent": "odd", "unproven": "warn"}.get(v.verdict, "bad")
    body = [
        f'<div class="banner {style}" id="verdict">{_e(v.verdict)}<small>{summary}</small></div>',
        '<dl class="files"><dt>seq</dt><dd><code>'
        + _e(inp.seq_path)
        + "</code></dd>"
        + "".join(f"<dt>rank {r}</dt><dd><code>{_e(p)}</code></dd>" for r, p in enumerate(inp.rank_paths))
        + "</dl>",
        _given_html(result),
        _outputs_html(result),
        _witness_html(result),
    ]
    if v.discrepancies:
        body.append(f"<h2>Discrepancies ({len(v.discrepancies)}, earliest first)</h2>")
        body.extend(_discrepancy_html(result, d, i, look) for i, d in enumerate(v.discrepancies))
        if len(v.discrepancies) > MAX_DRAWN:
            body.append(f'<p class="muted">drawings are shown for the first {MAX_DRAWN} discrepancies</p>')
    if v.unproven:
        body.append(
            f"<h2>Unproven steps ({len(v.unproven)}): no rule explains them, the numbers agree</h2>"
            "<p>Each is assumed from the numbers so that the rules continue past it; write a rule for its "
            "pattern (docs/rules.md) to turn it into a proof.</p>"
        )
        body.extend(_unproven_html(u, i) for i, u in enumerate(v.unproven))
    if v.triage:
        body.append(f'<p class="muted">numeric triage: {_e(v.triage)}</p>')
    if v.no_rule_ops:
        body.append(f"<p>ops with no transfer rule on the frontier: <code>{_e(', '.join(v.no_rule_ops))}</code></p>")
    rel_rows = "".join(
        f"<tr><td><code>{_e(r.seq_value)}</code></td><td>{_e(r.layout)}</td><td>{_e(r.source)}</td>"
        f"<td>{_e(EVIDENCE.get(r.established, r.established))}</td><td>{_e(r.evidence)}</td></tr>"
        for r in inp.relations
    )
    checked = sum(r.established == "values" for r in inp.relations)
    body.append(
        f"<h2>Input relations</h2><details><summary>{len(inp.relations)} relations "
        f"({checked} checked on values, {len(inp.relations) - checked} assumed)</summary>"
        f"<table><tr><th>value</th><th>relation</th><th>source</th><th>established</th><th>what the values showed</th>"
        f"</tr>{rel_rows}</table></details>"
    )
    if inp.notes:
        notes = "".join(f"<li><code>{_e(x)}</code></li>" for x in inp.notes)
        body.append(f"<details><summary>{len(inp.notes)} values with no relation</summary><ul>{notes}</ul></details>")
    timings = ", ".join(f"{_e(k)} {t:.3f} s" for k, t in result.derivation.timings.items())
    body.append(f'<p class="muted">{timings}</p>')
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>shardlog: {_e(v.verdict)}</title><style>{_CSS}</style></head>"
        f"<body><main><h1>shardlog report</h1>{''.join(body)}</main></body></html>\n"
    )


def write_html(result: CheckResult, path: str | Path) -> None:
    """Write :func:`render_html` of ``result`` to ``path`` (UTF-8), atomically
    (:func:`analyzer.reports.write.write_atomic`)."""
    from analyzer.reports.write import write_atomic

    write_atomic(path, render_html(result))
