"""Reports of a check: coloured text (rich) and JSON.

JSON schema version 1 (``--json REPORT.json``)::

    {
      "schema_version": 1,
      "verdict": "verified" | "discrepancy",
      "world_size": int, "engine": str, "seconds": float,
      "timings": {"facts": s, "oracles": s, "engine": s},
      "outputs": [{"name": str, "relation": str | null, "rank_values": [str]}],
      "discrepancies": [            # earliest frontier first
        {"kind": "frontier" | "output" | "collective", "graph": "seq" | "r0" ...,
         "node": str, "op_type": str, "scope": str, "source": "file:line", "code": str,
         "outputs": [str], "message": str,
         "inputs": [{"name": str, "relations": [str], "producer": str | null,
                     "producer_op": str | null, "producer_scope": str}],
         "rank_nodes": {"0": [str], ...}, "hint": str, "hints": [str], "hint_ids": [str],
         "origin_node": str, "origin_scope": str, "origin_source": str,  # where a pending
                                                      # Partial reaching the frontier was made
         "source_from": "node" | "module" | "",     # the node's own frame, its module's call, none
         "source_context": str,                      # innermost framework frame when none is yours
         "rules_tried": [str], "stage": int | null}],
      "input_relations": [{"name": str, "relation": str, "source": "inferred" | "spec"}],
      "notes": [str], "no_rule_ops": [str],
      "numeric": {output name: max abs error},   # only with --numeric
      "pipeline": {"stages": [[file]], "boundaries": [[str]]},  # only with --pp
      "mesh": {"axes": {name: size}, "checks": [{"axis": str, "label": str, "ranks": [int],
               "verdict": str, "reused": str}]}   # only with a mesh spec (docs/mesh.md)
    }
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from analyzer.model import CheckResult

__all__ = ["to_json", "write_json", "print_text", "print_coverage", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


def to_json(result: CheckResult) -> dict:
    """The JSON report as a dict (schema in the module docstring)."""
    v = result.verdict_
    discrepancies = []
    for d in v.discrepancies:
        item = asdict(d)
        item["rank_nodes"] = {str(k): val for k, val in d.rank_nodes.items()}
        item["hint"] = d.hints[0] if d.hints else ""
        discrepancies.append(item)
    out = {
        "schema_version": SCHEMA_VERSION,
        "verdict": v.verdict,
        "world_size": result.world_size,
        "engine": result.engine,
        "seconds": round(result.seconds, 4),
        "timings": {k: round(t, 4) for k, t in result.derivation.timings.items()},
        "outputs": [{"name": o.name, "relation": o.relation, "rank_values": o.rank_values} for o in v.outputs],
        "discrepancies": discrepancies,
        "input_relations": [
            {"name": r.seq_value, "relation": str(r.layout), "source": r.source} for r in result.inputs.relations
        ],
        "notes": result.inputs.notes,
        "no_rule_ops": v.no_rule_ops,
    }
    if result.numeric:
        out["numeric"] = result.numeric
    if result.mesh is not None:
        out["mesh"] = {
            "axes": dict(result.mesh.axes),
            "checks": [
                {"axis": c.axis, "label": c.label, "ranks": c.ranks, "verdict": c.result.verdict, "reused": c.reused}
                for c in result.mesh.checks
            ],
        }
    if result.inputs.pipeline is not None:
        out["pipeline"] = {"stages": result.inputs.pipeline.stages, "boundaries": result.inputs.pipeline.boundaries}
    return out


def write_json(result: CheckResult, path: str | Path) -> None:
    """Write the JSON report to ``path``."""
    Path(path).write_text(json.dumps(to_json(result), indent=2) + "\n", encoding="utf-8")


def _ranks_text(n: int, pipeline: bool = False) -> str:
    if pipeline:
        return "the chained stages" if n == 1 else f"the chained stages of ranks 0..{n - 1}"
    return "rank 0" if n == 1 else f"ranks 0..{n - 1}"


def print_text(result: CheckResult, console: Console, *, verbose: bool = False, explain: bool = False) -> None:
    """Print the human report.

    Args:
        result: the check result.
        console: a rich console (colour is decided by it).
        verbose: also list every discrepancy's rank nodes and all notes.
        explain: list the input relations that were inferred or read from the spec.
    """
    v = result.verdict_
    n = result.inputs.world_size
    pp = result.inputs.pipeline
    mesh = result.mesh
    if mesh is not None:  # a mesh check (analyzer/mesh.py): one line per one-axis check
        n = result.world_size
        console.print(f"mesh {escape(mesh.text)}, checked per axis:")
        for c in mesh.checks:
            how = f"same graphs as {c.reused}" if c.reused else f"{c.result.seconds:.2f} s"
            console.print(f"  {escape(c.label)}: {c.result.verdict} ({escape(how)})")
    if pp is not None:
        chain = " -> ".join(Path(st[0]).name + (f" (x{len(st)} ranks)" if len(st) > 1 else "") for st in pp.stages)
        console.print(f"pipeline: {pp.degree} stages, chained by boundary tensor names: {escape(chain)}")
        if explain:
            for s, names in enumerate(pp.boundaries[1:], 1):
                console.print(f"  stage {s} receives {escape(', '.join(names)) or 'nothing'}")
    if explain:
        console.print(f"[bold]input relations[/] ({len(result.inputs.relations)}):")
        for r in result.inputs.relations:
            on = _ranks_text(n, pp is not None)
            console.print(f"  {escape(r.seq_value)} = {r.layout} on {on}  [dim]({r.source})[/]")
        for note in result.inputs.notes:
            console.print(f"  [yellow]no relation:[/] {escape(note)}")
    for o in v.outputs:
        if o.relation:
            on = _ranks_text(n, pp is not None) + (f" (mesh {mesh.text})" if mesh is not None else "")
            console.print(f"{escape(o.name)} = {o.relation} on {escape(on)}")
        else:
            console.print(f"{escape(o.name)} = [red]no relation[/]")
        if o.name in result.numeric:
            console.print(f"  numeric witness: max abs error {result.numeric[o.name]:.3g}")
    shown = v.discrepancies if verbose else v.discrepancies[:5]
    for i, d in enumerate(shown, 1):
        console.print()
        if d.kind == "collective":
            console.print(f"[red]discrepancy {i}[/]: {escape(d.message)}")
            if d.node and d.graph != "seq":
                console.print(f"  on {_graph_text(d.graph)}: [bold]{escape(d.node)}[/] ({escape(d.op_type)})")
                if d.scope:
                    console.print(f"  scope:  {escape(d.scope)}")
                _print_source(console, d)
                for h in d.hints:
                    console.print(f"  [yellow]hint:[/] {escape(h)}")
            continue
        where = f"on {_graph_text(d.graph)}" if d.graph != "seq" else "frontier"
        console.print(f"[red]discrepancy {i}[/] ({where}): [bold]{escape(d.node)}[/] ({escape(d.op_type)})")
        if d.message:
            console.print(f"  {escape(d.message)}")
        if d.scope:
            console.print(f"  scope:  {escape(d.scope)}")
        if pp is not None and d.stage is not None and d.stage < pp.degree:
            console.print(f"  stage:  {d.stage} ({escape(', '.join(pp.stages[d.stage]))})")
        _print_source(console, d)
        for inp in d.inputs:
            if inp.relations:
                rels = ", ".join(inp.relations)
            else:
                rels = "no relation" if d.graph == "seq" else "not a piece of any sequential value"
            where_made = f", {escape(inp.producer_scope)}" if inp.producer_scope else ""
            prod = (
                f" <- {escape(inp.producer)} ({escape(inp.producer_op or '')}{where_made})"
                if inp.producer
                else " (graph input or weight)"
            )
            console.print(f"  input {escape(inp.name)}: {escape(rels)}{prod}")
        if d.graph == "seq":
            if d.rank_nodes:
                for r, names in sorted(d.rank_nodes.items()):
                    console.print(f"  paired on rank {r}: {escape(', '.join(names))}")
            else:
                console.print("  paired with no rank node")
        if d.origin_node:
            in_scope = f" in [bold]{escape(d.origin_scope)}[/]" if d.origin_scope else ""
            console.print(
                f"  the partial sum comes from {escape(d.origin_node)}{in_scope}"
                f"{' (' + escape(d.origin_source) + ')' if d.origin_source else ''}: reduce it there"
            )
        if d.rules_tried:
            console.print(
                f"  rules tried: {escape(', '.join(d.rules_tried))} (no pattern matches these input relations)"
            )
        for h in d.hints:
            console.print(f"  [yellow]hint:[/] {escape(h)}")
    if len(v.discrepancies) > len(shown):
        console.print(f"\n... {len(v.discrepancies) - len(shown)} more (use --verbose)")
    if v.no_rule_ops:
        console.print(f"\nops with no transfer rule on the frontier: {escape(', '.join(v.no_rule_ops))}")
    if result.derivation.capped:
        console.print(f"[yellow]driver stopped at its safety cap of {result.derivation.rounds} rounds[/]")
    if verbose and result.derivation.memo:
        console.print(f"layer memoization: {escape(result.derivation.memo)}")
    if verbose and result.derivation.one_rank:
        console.print(f"rank graphs alike: rank 0 solved, its rows copied to ranks 1..{result.inputs.world_size - 1}")
    colour = "green" if v.verdict == "verified" else "red"
    size = f"world size {n}" if pp is None else f"{pp.degree} stages x {n} tensor-parallel ranks"
    if mesh is not None:
        size = f"world size {n}, mesh {mesh.text}"
    console.print(f"\n[bold {colour}]{v.verdict}[/] ({size}, engine {result.engine}, {result.seconds:.2f} s)")


def _graph_text(graph: str) -> str:
    """``r1`` -> ``rank 1`` (the graph names of the fact tables are internal)."""
    return f"rank {graph[1:]}" if graph.startswith("r") and graph[1:].isdigit() else graph


def _print_source(console: Console, d) -> None:
    """The source line of a discrepancy, or why there is none (analyzer/verdict/sources.py)."""
    if d.source:
        how = ""
        if d.source_from == "module":
            how = f"  [dim](the call of {escape(d.scope) or 'its module'}: the node has no frame of its own)[/]"
        console.print(f"  source: {escape(d.source)}{how}")
        if d.code:
            console.print(f"          [dim]{escape(d.code)}[/]")
        return
    context = f" (innermost frame, framework code: {escape(d.source_context)})" if d.source_context else ""
    console.print(f"  source: none in your code was exported for this node{context}")


def print_coverage(result: CheckResult, console: Console, *, verbose: bool = False) -> None:
    """Print, per rule file, how many of its rules fired on this run (and, with ``verbose``,
    the rules that did not, as file:line head)."""
    from collections import defaultdict

    per_file: dict[str, list] = defaultdict(list)
    for cov in result.derivation.coverage:
        per_file[cov.file].append(cov)
    console.print("\n[bold]rule coverage[/] (rules whose body matched at least once):")
    for file in sorted(per_file):
        rules = per_file[file]
        fired = sum(c.fired for c in rules)
        short = "/".join(Path(file).parts[-2:])
        console.print(f"  {escape(short)}: {fired}/{len(rules)}")
        if verbose:
            for c in rules:
                if not c.fired:
                    console.print(f"    not fired: line {c.line} ({escape(c.head)})")
