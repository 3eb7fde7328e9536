"""From derived relations to a verdict: output relations and discrepancies, earliest first.

A seq output is explained when ``OutputRelation`` rebuilds it from the ranks' outputs. The
check is ``verified`` when every output is explained and every ``Check_*`` relation is empty.
Otherwise each discrepancy names a frontier node (``Frontier``: inputs related, output not)
that lies upstream of an unexplained output, with its scope, source line, the relations of
its inputs, the rank nodes it was paired with and the hints from ``rules/diagnose``.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.facts.source import FrameChoice
from analyzer.layout import Layout
from analyzer.model import CheckInput, Derivation
from analyzer.solve.rulebook import hints_catalog
from analyzer.verdict.sources import locate_sources, read_source_line

__all__ = [
    "OutputVerdict",
    "InputInfo",
    "Discrepancy",
    "Verdict",
    "assumed_relations",
    "build_verdict",
    "layout_of",
    "layout_text",
]

_KIND_ORDER = {"Replicate": 0, "Shard": 1, "Partial": 2}


def layout_of(kind: str, axis: int, param: str) -> Layout:
    """The :class:`Layout` of a (kind, axis, param) row."""
    return Layout.from_row(kind, axis, param)


def layout_text(kind: str, axis: int, param: str) -> str:
    """Display form of a (kind, axis, param) row, e.g. ``Shard(2)``."""
    return str(layout_of(kind, axis, param))


@dataclass(kw_only=True)
class OutputVerdict:
    """How one seq output is rebuilt (``relation`` is None when it is not)."""

    name: str
    relation: str | None
    rank_values: list[str] = field(default_factory=list)
    layout: Layout | None = None


@dataclass(kw_only=True)
class InputInfo:
    """An input of a frontier node: its relations and the node that produced it."""

    name: str
    relations: list[str]
    producer: str | None
    producer_op: str | None
    producer_scope: str


@dataclass(kw_only=True)
class Discrepancy:
    """One place where the chain of relations breaks (built by keyword: every field but
    ``kind`` has a default)."""

    kind: str  # "frontier" | "output" | "collective"
    node: str = ""
    op_type: str = ""
    scope: str = ""
    source: str = ""  # "file:line" of the user's frame
    code: str = ""  # the text of that line
    outputs: list[str] = field(default_factory=list)
    inputs: list[InputInfo] = field(default_factory=list)
    rank_nodes: dict[int, list[str]] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    hint_ids: list[str] = field(default_factory=list)
    index: int = -1  # the node's position in its graph (-1: no node)
    graph: str = "seq"
    message: str = ""
    origin_node: str = ""
    origin_scope: str = ""
    origin_source: str = ""
    rules_tried: list[str] = field(default_factory=list)
    stage: int | None = None  # pipeline stage it lives in (pipeline checks only)
    # "node": ``source`` is the node's own frame in the user's code; "module": the call of its
    # module (the node has no such frame); "": none exported (analyzer/verdict/sources.py)
    source_from: str = ""
    source_context: str = ""  # the innermost framework frame when no frame is the user's
    # set by the numeric triage (analyzer/verdict/triage.py): "differ" | "agree" | "outputs agree" | ""
    numbers: str = ""
    numeric_error: float | None = None
    relation: str = ""  # the relation the numbers show (unproven steps)
    rank_values: list[str] = field(default_factory=list)
    pattern: list[str] = field(default_factory=list)  # the seq node and rank 0's computation of its value


@dataclass(kw_only=True)
class Verdict:
    """The answer: ``verified`` (a proof), ``discrepancy``, ``unproven`` (no rule explains some
    steps, the numbers agree: :mod:`analyzer.verdict.triage`) or ``inconsistent`` (the numeric
    witness refutes a derived relation, :mod:`analyzer.witness.check`), with outputs,
    discrepancies and the unproven steps.

    ``assumed`` are the input relations upstream of the outputs that were not established on
    values (:class:`~analyzer.inputs.infer.InputRelation` ``established``: fed inputs, weights not
    stored or not compared, spec relations): a ``verified`` holds given them (``conditional``).
    """

    verdict: str
    outputs: list[OutputVerdict]
    discrepancies: list[Discrepancy]
    no_rule_ops: list[str]
    assumed: list = field(default_factory=list)
    unproven: list[Discrepancy] = field(default_factory=list)
    triage: str = ""  # what the numeric triage did ("" when it did not run)

    @property
    def conditional(self) -> bool:
        """True when the verdict is ``verified`` and rests on assumed input relations."""
        return self.verdict == "verified" and bool(self.assumed)


def assumed_relations(inp: CheckInput, outputs: list[str]) -> list:
    """The input relations of ``inp`` not established on values (``established`` other than
    ``"values"``) whose value is upstream of one of ``outputs`` in the sequential graph (or is
    one of them), in the order of ``inp.relations``."""
    rels = {rel.seq_value for rel in inp.relations if rel.established != "values"}
    if not rels:
        return []
    producer = {o: node for node in inp.seq.graph.node for o in node.output}
    todo, seen = list(outputs), set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        node = producer.get(v)
        if node is not None:
            todo.extend(x for x in node.input if x)
            for attr in node.attribute:  # values a subgraph (If, Loop, Scan) reads from outside
                for g in [attr.g, *attr.graphs]:
                    todo.extend(x for n in g.node for x in n.input if x)
    return [rel for rel in inp.relations if rel.established != "values" and rel.seq_value in seen]


class _Index:
    """Lookups over fact and derived tables (column order from the declarations)."""

    def __init__(self, deriv: Derivation) -> None:
        self.t = {**deriv.facts, **deriv.derived}
        self.decls = deriv.decls

    def rows(self, rel: str) -> list[dict]:
        cols = [c for c, _ in self.decls[rel].columns]
        return [dict(zip(cols, row)) for row in self.t.get(rel, [])]

    def columns(self, rel: str, *names: str) -> list[tuple]:
        """The rows of ``rel`` as tuples of the named columns, in that order (no dict per row)."""
        cols = [c for c, _ in self.decls[rel].columns]
        pick = operator.itemgetter(*(cols.index(name) for name in names))
        rows = self.t.get(rel, [])
        return [(pick(row),) for row in rows] if len(names) == 1 else list(map(pick, rows))


def _hint_texts() -> dict[str, str]:
    import yaml  # here: a verified check without hints does not import it

    path: Path = hints_catalog()
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {str(k): str(v) for k, v in (data or {}).items()}


def _with_details(text: str, details: list[str] | None) -> str:
    """A hint's catalog text with its specifics (``HintDetail``) appended."""
    return f"{text} ({'; '.join(sorted(set(details)))})" if details else text


def build_verdict(inp: CheckInput, deriv: Derivation, sources: FrameChoice | None = None) -> Verdict:
    """Turn derived relations into outputs and discrepancies (earliest frontier first), each
    placed at the innermost frame of the user's code (:mod:`analyzer.verdict.sources`; ``sources``:
    the user's frame patterns, source root and path map)."""
    ix = _Index(deriv)
    graphs = _Describer(ix)
    outputs = _outputs(ix, inp.world_size)
    unexplained = [o.name for o in outputs if o.relation is None]
    checks = [rel for rel in ix.decls if rel.startswith("Check_") and ix.t.get(rel)]
    no_rule = sorted(  # not where a more specific hint superseded "no-rule" (e.g. grad-not-reduced)
        {
            f"{r['domain'] + '::' if r['domain'] else ''}{r['op']}"
            for r in ix.rows("NoRule")
            if "no-rule" in graphs.hint_ids.get(("seq", r["n"]), ())
        }
    )
    discrepancies: list[Discrepancy] = []
    if unexplained:
        discrepancies = _frontier(ix, graphs, unexplained) or _rank_side(ix, inp, unexplained, graphs)
    # a rank issuing other collectives than rank 0 breaks everything after that call: first
    discrepancies[:0] = _collective_discrepancies(ix, checks, graphs)
    if discrepancies:
        locate_sources(inp, discrepancies, sources)
    return Verdict(
        verdict="verified" if not unexplained and not checks else "discrepancy",
        outputs=outputs,
        discrepancies=discrepancies,
        no_rule_ops=no_rule,
        assumed=assumed_relations(inp, [o.name for o in outputs]),
    )


class _Describer:
    """The node tables of all graphs, and :meth:`describe`: one node as a :class:`Discrepancy`."""

    def __init__(self, ix: _Index) -> None:
        self.ix = ix
        self.node_op: dict[tuple[str, str], str] = {}
        self.node_name: dict[tuple[str, str], str] = {}
        for g, node, op, domain, name in ix.columns("Node", "g", "node", "op", "domain", "name"):
            self.node_op[(g, node)] = op if not domain else f"{domain}::{op}"
            self.node_name[(g, node)] = name or node
        self.node_index = {(g, node): index for g, node, index in ix.columns("Node_Index", "g", "node", "index")}
        self.scope = {(g, node): sc for g, node, sc in ix.columns("Node_Scope", "g", "node", "scope")}
        self.source = {
            (g, node): (f, ln, c)
            for g, node, f, ln, c in ix.columns("Node_Source", "g", "node", "file", "line", "code")
        }
        self.producer: dict[tuple[str, str], str] = {}
        self.inputs_of: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
        for g, node, value in ix.columns("Node_Output", "g", "node", "value"):
            self.producer[(g, value)] = node
        for g, node, pos, value in ix.columns("Node_Input", "g", "node", "pos", "value"):
            self.inputs_of[(g, node)].append((pos, value))
        self.holds: dict[str, list[tuple]] = defaultdict(list)
        for s, kind, axis, param in ix.columns("Holds", "s", "kind", "axis", "param"):
            self.holds[s].append((kind, axis, param))
        self.hint_ids: dict[tuple[str, str], list[str]] = defaultdict(list)
        for row in ix.rows("Hint"):
            self.hint_ids[("seq", row["n"])].append(row["hint"])
        for row in ix.rows("RankHint"):
            self.hint_ids[(row["g"], row["m"])].append(row["hint"])
        self.details: dict[tuple[str, str], list[str]] = defaultdict(list)  # (node, hint) -> HintDetail texts
        if "HintDetail" in ix.decls:
            for n_, h_, text in ix.columns("HintDetail", "n", "hint", "detail"):
                self.details[(n_, h_)].append(text)
        self.tried: dict[str, list[str]] = defaultdict(list)
        for row in ix.rows("RuleTried"):
            self.tried[row["n"]].append(row["file"])
        self._hints: dict[str, str] = {}  # the catalog, read when the first discrepancy with a hint is reported
        self._pieces_of: dict[tuple[str, str], list[str]] = {}  # rank value -> "Shard(2) of logits", when asked

    def rank_relations(self, g: str, v: str) -> list[str]:
        """What rank value ``v`` of graph ``g`` is a piece of (``Shard(2) of logits``)."""
        if not self._pieces_of:
            for s_, r_, d_, kind_, axis_, param_ in self.ix.columns("Piece", "s", "r", "d", "kind", "axis", "param"):
                self._pieces_of.setdefault((f"r{r_}", d_), []).append(f"{layout_text(kind_, axis_, param_)} of {s_}")
            self._pieces_of.setdefault(("", ""), [])  # built
        return sorted(self._pieces_of.get((g, v), []))

    def _inputs(self, g: str, node: str) -> list[InputInfo]:
        ins = []
        for _, v in sorted(self.inputs_of.get((g, node), [])):
            if not v:
                continue
            prod = self.producer.get((g, v))
            if g == "seq":
                rels = [layout_text(*t) for t in sorted(self.holds.get(v, []), key=lambda t: _KIND_ORDER.get(t[0], 9))]
            else:
                rels = self.rank_relations(g, v)
            ins.append(
                InputInfo(
                    name=v,
                    relations=rels,
                    producer=prod and self.node_name[(g, prod)],
                    producer_op=prod and self.node_op[(g, prod)],
                    producer_scope=self.scope.get((g, prod), "") if prod else "",
                )
            )
        return ins

    def _hint_text(self, g: str, node: str, hint: str) -> str:
        return _with_details(self._hints.get(hint, hint), self.details.get((node, hint)) if g == "seq" else None)

    def describe(self, g: str, node: str, kind: str, outs: list[str], message: str = "") -> Discrepancy:
        """Node ``node`` of graph ``g`` as a discrepancy of ``kind`` about the values ``outs``."""
        file, line, code = self.source.get((g, node), ("", 0, ""))
        paired: dict[int, list[str]] = defaultdict(list)
        if g == "seq":
            for row in self.ix.rows("Pair"):
                if row["n"] == node:
                    paired[row["r"]].append(self.node_name[(f"r{row['r']}", row["m"])])
        ids = sorted(set(self.hint_ids.get((g, node), [])))
        if ids and not self._hints:
            self._hints.update(_hint_texts())
        d = Discrepancy(
            kind=kind,
            node=self.node_name[(g, node)],
            op_type=self.node_op[(g, node)],
            scope=self.scope.get((g, node), ""),
            source=f"{file}:{line}" if file else "",
            code=code or (read_source_line(file, line) if file else ""),
            outputs=outs,
            inputs=self._inputs(g, node),
            rank_nodes=dict(paired),
            hints=[self._hint_text(g, node, h) for h in ids],
            hint_ids=ids,
            index=self.node_index.get((g, node), -1),
            graph=g,
            message=message,
            rules_tried=sorted(set(self.tried.get(node, []))) if g == "seq" else [],
        )
        origin = _partial_origin(g, node, self.inputs_of, self.producer, self.holds) if g == "seq" else None
        if origin is not None:
            ofile, oline, _ = self.source.get((g, origin), ("", 0, ""))
            d.origin_node = self.node_name[(g, origin)]
            d.origin_scope = self.scope.get((g, origin), "")
            d.origin_source = f"{ofile}:{oline}" if ofile else ""
        return d


def _frontier(ix: _Index, graphs: _Describer, unexplained: list[str]) -> list[Discrepancy]:
    """The ``Frontier`` nodes upstream of the unexplained outputs, earliest first.

    The walk back goes only through values without a relation: a mask or offset whose readers are
    all explained (e.g. a vocab-parallel lookup) is no frontier of a broken output, and a value that
    holds only as a multiple of itself (a scaled relation) is not related."""
    holds = graphs.holds
    related = {s for s, rels in holds.items() if any(layout_of(*rel).scale is None for rel in rels)}
    upstream = _ancestors(
        "seq", unexplained, graphs.producer, graphs.inputs_of, through=lambda v: v not in related
    )
    frontier: dict[str, list[str]] = defaultdict(list)
    for row in ix.rows("Frontier"):
        if row["n"] in upstream:
            frontier[row["n"]].append(row["s"])
    order = sorted(frontier, key=lambda x: graphs.node_index.get(("seq", x), 0))
    return [graphs.describe("seq", node, "frontier", frontier[node]) for node in order]


_PAIRING_CHECKS = ("Check_CollectiveMismatch", "Check_CollectiveShape")


def _collective_discrepancies(ix: _Index, checks: list[str], graphs: _Describer) -> list[Discrepancy]:
    """Collectives that do not pair across ranks (``Check_*`` of rules/collectives/).

    NCCL pairs the k-th collective of every rank; for each rank r the first k whose call
    differs from rank 0's (op type: ``Check_CollectiveMismatch``; input shape:
    ``Check_CollectiveShape``) is reported at rank r's node, with both calls spelled out
    (op, input dtype and shape, axis, module scope); later ones follow from it and are counted.
    Any other ``Check_*`` row is reported as it is.
    """
    out: list[Discrepancy] = []
    if not checks:  # every Check_* relation is empty (the pairing checks too)
        return out
    coll = {(row["g"], row["k"]): row["m"] for row in ix.rows("Collective")}
    shape = {(r["g"], r["value"]): r["shape"] for r in ix.rows("Value_Shape")}
    dtype = {(r["g"], r["value"]): r["dtype"] for r in ix.rows("Value_DType")}
    first_in = {(r["g"], r["node"]): r["value"] for r in ix.rows("Node_Input") if r["pos"] == 0}
    axis = {(r["g"], r["node"]): r["value"] for r in ix.rows("Node_AttrInt") if r["attr"] == "axis"}
    op_of = {(r["g"], r["node"]): r["op"] for r in ix.rows("Node")}

    def call(g: str, k: int) -> str:
        m = coll.get((g, k))
        if m is None:
            return "no collective"
        d = first_in.get((g, m), "")
        ax = f", axis {axis[(g, m)]}" if (g, m) in axis else ""
        where = graphs.scope.get((g, m), "") or "?"
        arg = f"{dtype.get((g, d), '?')}[{shape.get((g, d), '?')}]{ax}"
        return f"{op_of[(g, m)]}({arg}) in {where} ({graphs.node_name[(g, m)]})"

    bad: dict[int, set[int]] = defaultdict(set)
    for rel in _PAIRING_CHECKS:
        for row in ix.t.get(rel, []):
            bad[row[1]].add(row[0])
    for r, ks in sorted(bad.items()):
        k = min(ks)
        g = f"r{r}"
        later = len(ks) - 1
        message = (
            f"collective #{k} differs across ranks: rank 0 issues {call('r0', k)}, rank {r} issues {call(g, k)}"
            + (f"; {later} later collective(s) differ as well" if later else "")
            + " (NCCL pairs the k-th call of every rank: they would hang or exchange the wrong tensors)"
        )
        if (g, k) in coll:
            out.append(graphs.describe(g, coll[(g, k)], "collective", [], message))
        else:
            out.append(Discrepancy(kind="collective", graph=g, message=message))
    for rel in checks:
        if rel in _PAIRING_CHECKS:
            continue
        for row in ix.t[rel]:
            message = f"{rel}{tuple(row)}: collectives do not pair across ranks"
            out.append(Discrepancy(kind="collective", node=rel, graph="", message=message))
    return out


def _outputs(ix: _Index, n: int) -> list[OutputVerdict]:
    found: dict[str, list[tuple]] = defaultdict(list)
    for row in ix.rows("OutputRelation"):
        found[row["s"]].append((row["kind"], row["axis"], row["param"]))
    rank_outputs = {(r["g"], r["value"]) for r in ix.rows("GraphOutput") if r["g"] != "seq"}
    pieces: dict[tuple, list[str]] = defaultdict(lambda: [""] * n)
    for row in ix.rows("Piece"):
        if (f"r{row['r']}", row["d"]) in rank_outputs:
            pieces[(row["s"], row["kind"], row["axis"], row["param"])][row["r"]] = row["d"]
    result = []
    for row in sorted(ix.rows("GraphOutput"), key=lambda r: r["pos"]):
        if row["g"] != "seq":
            continue
        s = row["value"]
        if found.get(s):
            best = min(found[s], key=lambda t: _KIND_ORDER.get(t[0], 9))
            result.append(
                OutputVerdict(
                    name=s, relation=layout_text(*best), rank_values=pieces[(s, *best)], layout=layout_of(*best)
                )
            )
        else:
            result.append(OutputVerdict(name=s, relation=None))
    return result


def _partial_origin(g: str, node: str, inputs_of: dict, producer: dict, holds: dict) -> str | None:
    """The node that created the pending reduction reaching ``node``: walk back through
    producers while an input holds only as Partial; that is where an all-reduce belongs."""

    def partial_input(n: str) -> str | None:
        for _, v in sorted(inputs_of.get((g, n), [])):
            kinds = {t[0] for t in holds.get(v, [])}
            if kinds == {"Partial"}:
                return v
        return None

    v = partial_input(node)
    origin = None
    seen = set()
    while v is not None and (g, v) in producer and v not in seen:
        seen.add(v)
        origin = producer[(g, v)]
        v = partial_input(origin)
    return origin


def _ancestors(g: str, values: list[str], producer: dict, inputs_of: dict, through=lambda v: True) -> set[str]:
    """Nodes of graph ``g`` upstream of ``values``, walking back only through inputs that
    ``through`` accepts."""
    seen_nodes: set[str] = set()
    stack = [producer[(g, v)] for v in values if (g, v) in producer]
    while stack:
        node = stack.pop()
        if node in seen_nodes:
            continue
        seen_nodes.add(node)
        for _, v in inputs_of.get((g, node), []):
            p = producer.get((g, v))
            if p is not None and p not in seen_nodes and through(v):
                stack.append(p)
    return seen_nodes


def _rank_side(ix: _Index, inp: CheckInput, unexplained: list[str], graphs: _Describer) -> list[Discrepancy]:
    """Every seq node is explained but an output is not rebuilt from rank outputs: the break
    is on the rank side (a collective or a rearrangement after it)."""
    holds = graphs.holds
    rank_front: dict[str, list[str]] = defaultdict(list)
    for row in ix.rows("RankFrontier"):
        rank_front[row["g"]].append(row["m"])
    # rank values that are pieces (also another rank's piece, or a gathered stack of pieces): the
    # search for the break walks back from the rank outputs only through values that are not
    # (a mask or index built from a piece and consumed by an explained lookup is no break)
    pieces: set[tuple[str, str]] = {(f"r{row['r']}", row["d"]) for row in ix.rows("Piece")}
    for rel in ("RemotePiece", "Gathered"):
        if rel in ix.decls:
            pieces |= {(f"r{row['r']}", row["d"]) for row in ix.rows(rel)}
    for r in range(inp.world_size):
        g = f"r{r}"
        rank_outs = [o.name for o in inp.ranks[r].graph.output]
        upstream = _ancestors(
            g, rank_outs, graphs.producer, graphs.inputs_of, through=lambda v, g=g: (g, v) not in pieces
        )
        cands = [m for m in rank_front.get(g, []) if m in upstream]
        if cands:
            first = min(cands, key=lambda m: graphs.node_index.get((g, m), 0))
            rels = ", ".join(
                f"{s}: {' | '.join(layout_text(*t) for t in holds.get(s, [])) or 'none'}" for s in unexplained
            )
            message = (
                f"seq output not rebuilt from rank {r}'s outputs ({rels}); the chain of pieces stops at this rank node"
            )
            return [graphs.describe(g, first, "output", [], message)]
    out = []
    for s in unexplained:
        rels = " | ".join(layout_text(*t) for t in holds.get(s, [])) or "none"
        message = f"seq output {s} has relations [{rels}] but no rank graph output carries them"
        out.append(Discrepancy(kind="output", node=s, outputs=[s], message=message))
    return out
