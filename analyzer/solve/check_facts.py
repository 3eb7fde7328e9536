"""The facts of a check: every graph's fact tables (seq first), the world, and the input
relations with the typed fields of their params, as the rules read them
(``schemas/facts.dl``, ``schemas/inputs.dl``, ``schemas/layouts.dl``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from analyzer.facts import FactTables, extract_graph_facts
from analyzer.facts.extract import inference_context
from analyzer.model import CheckInput, graph_name

__all__ = ["CopiedGraphs", "graph_facts", "input_facts"]


def input_facts(inp: CheckInput, seq_values: set[str] | None = None) -> FactTables:
    """World size, graph ranks and the input relations of the seq values in ``seq_values``
    (all when None: a collapsed graph no longer reads the weights of removed layers), with the
    ``Param_*`` rows of their params."""
    facts = FactTables()
    n = inp.world_size
    facts.add("WorldSize", n=n)
    facts.add("LastRank", r=n - 1)
    facts.add("GraphRank", g="seq", rank=-1)
    if inp.mesh_axis is not None:
        facts.add("CheckAxis", x=inp.mesh_axis)
    for r in range(n):
        facts.add("GraphRank", g=graph_name(r), rank=r)
        facts.add("RankNumber", n=r)
        if r + 1 < n:
            facts.add("NextRank", r=r, next=r + 1)
    params: set[str] = set()
    for rel in inp.relations:
        if seq_values is not None and rel.seq_value not in seq_values:
            continue
        lay = rel.layout
        axis = lay.axis if lay.axis is not None else -1
        param = lay.param
        for r, d in enumerate(rel.rank_values):
            if not d:  # a rank that does not hold the value (a weight stored on rank 0 alone)
                continue
            facts.add("InputPiece", s=rel.seq_value, r=r, d=d, kind=lay.kind, axis=axis, param=param)
        if param not in params:
            params.add(param)
            for name, row in lay.param_facts():
                facts.add(name, **row)
    for m in inp.misplaced:
        if seq_values is None or m.seq_value in seq_values:
            facts.add(
                "MisplacedChunk", s=m.seq_value, r=m.rank, d=m.rank_value, axis=m.axis, chunk=m.chunk, chunks=m.chunks
            )
    for w in inp.value_mismatches:
        if seq_values is None or w.seq_value in seq_values:
            lay = w.layout
            facts.add(
                "WeightValueMismatch", s=w.seq_value, r=w.rank, d=w.rank_value, kind=lay.kind,
                axis=lay.axis if lay.axis is not None else -1, param=lay.param,
            )
            for other in w.matches:
                facts.add("WeightValueMatch", s=w.seq_value, r=w.rank, d=w.rank_value, other=other)
    for t in inp.transposed:
        if seq_values is None or t.seq_value in seq_values:
            lay = t.layout
            facts.add(
                "TransposedPiece", s=t.seq_value, r=t.rank, d=t.rank_value, kind=lay.kind,
                axis=lay.axis if lay.axis is not None else -1, param=lay.param,
            )
    return facts


@dataclass
class CopiedGraphs:
    """Graph facts that are relabelled copies of another graph's: for each source graph the
    graphs copying it, each graph's row ranges per relation in the fact tables, and each
    source graph's own facts."""

    targets: dict[str, list[str]] = field(default_factory=dict)
    ranges: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    tables: dict[str, FactTables] = field(default_factory=dict)

    def add(self, name: str, graph: FactTables, facts: FactTables) -> None:
        """Record the row ranges of graph ``name``'s facts ``graph``, about to be appended to ``facts``."""
        self.ranges[name] = {
            rel: (len(facts.rows(rel)), len(facts.rows(rel)) + len(graph.rows(rel))) for rel in graph.relations()
        }

    def engine_facts(self, tuples: dict[str, list[tuple]], decls: Mapping) -> tuple[dict, list]:
        """``tuples`` without the rows of the source and copied graphs' facts, and those as
        :class:`~analyzer.engines.clingo_engine.GraphCopies` (one per source)."""
        from analyzer.engines.clingo_engine import GraphCopies

        spans: dict[str, list[tuple[int, int]]] = {}
        for src, names in self.targets.items():
            for name in (src, *names):
                for rel, span in self.ranges[name].items():
                    spans.setdefault(rel, []).append(span)
        out = dict(tuples)
        for rel, cut in spans.items():
            rows, kept, at = out[rel], [], 0
            for start, end in sorted(cut):
                kept.extend(rows[at:start])
                at = end
            kept.extend(rows[at:])
            out[rel] = kept
        copies = [GraphCopies((src, *names), self.tables[src].tuples(decls)) for src, names in self.targets.items()]
        return out, copies


def graph_facts(models: Sequence[onnx.ModelProto], same: Sequence[int] | None) -> tuple[FactTables, CopiedGraphs]:
    """The facts of each graph (seq first); a graph stored like an earlier one (``same``, see
    :class:`CheckInput`), in a model with the same IR version, opsets and functions (what shape
    inference reads besides the graph), gets a relabelled copy of that one's facts (recorded
    in the :class:`CopiedGraphs`)."""
    facts = FactTables()
    done: list[FactTables] = []
    copies = CopiedGraphs()
    for i, model in enumerate(models):
        name = graph_name(i - 1)
        j = i if same is None else same[i]
        if j != i and (model is models[j] or inference_context(model) == inference_context(models[j])):
            done.append(done[j].with_graph(name))
            copies.targets.setdefault(graph_name(j - 1), []).append(name)
            copies.tables[graph_name(j - 1)] = done[j]
        else:
            done.append(extract_graph_facts(model, name))
        copies.add(name, done[-1], facts)
        facts.extend(done[-1])
    return facts, copies
