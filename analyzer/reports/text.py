"""Reports of a check: coloured text (rich) and JSON.

JSON schema version 1 (``--json REPORT.json``)::

    {
      "schema_version": 1,
      "verdict": "verified" | "discrepancy" | "unproven",
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
         "origin_node": str, "origin_scope": str, "origin_source": str,
         "rules_tried": [str], "stage": int | null}],  # where a pending
                                                      # Partial reaching the frontier was made
      # the numeric triage (analyzer/verdict/triage.py) adds to each item: "numbers": "" | "differ"
      # | "agree" | "outputs agree", "numeric_error": float | null, "relation": str,
      # "rank_values": [str], "pattern": [str]
      "unproven": [...],             # steps no rule explains, the numbers agree (items as above,
                                     # kind "unproven" | "unproven-output")
      "triage": str,                 # what the numeric triage did ("" when not run)
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
    def item_of(d) -> dict:
        item = asdict(d)
        item["rank_nodes"] = {str(k): val for k, val in d.rank_nodes.items()}
        item["hint"] = d.hints[0] if d.hints else ""
        return item

    discrepancies = [item_of(d) for d in v.discrepancies]
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
        "unproven": [item_of(u) for u in v.unproven],
        "triage": v.triage,
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
                console.print(f"  {escape(d.graph)} node: [bold]{escape(d.node)}[/] ({escape(d.op_type)})")
                console.print(f"  scope:  {escape(d.scope) or '?'}")
                if d.source:
                    console.print(f"  source: {escape(d.source)}")
                for h in d.hints:
                    console.print(f"  [yellow]hint:[/] {escape(h)}")
            continue
        where = f"{d.graph} node" if d.graph != "seq" else "frontier"
        console.print(f"[red]discrepancy {i}[/] ({where}): [bold]{escape(d.node)}[/] ({escape(d.op_type)})")
        if d.message:
            console.print(f"  {escape(d.message)}")
        console.print(f"  scope:  {escape(d.scope) or '?'}")
        if pp is not None and d.stage is not None and d.stage < pp.degree:
            console.print(f"  stage:  {d.stage} ({escape(', '.join(pp.stages[d.stage]))})")
        if d.source:
            console.print(f"  source: {escape(d.source)}")
        if d.code:
            console.print(f"          [dim]{escape(d.code)}[/]")
        for inp in d.inputs:
            rels = ", ".join(inp.relations) if inp.relations else ("no relation" if d.graph == "seq" else "")
            prod = (
                f" <- {escape(inp.producer)} ({escape(inp.producer_op or '')}, {escape(inp.producer_scope) or '?'})"
                if inp.producer
                else " (graph input or weight)"
            )
            console.print(f"  input {escape(inp.name)}: {rels}{prod}")
        if d.graph == "seq":
            if d.rank_nodes:
                for r, names in sorted(d.rank_nodes.items()):
                    console.print(f"  paired on rank {r}: {escape(', '.join(names))}")
            else:
                console.print("  paired with no rank node")
        if d.origin_node:
            console.print(
                f"  the partial sum comes from {escape(d.origin_node)} in [bold]{escape(d.origin_scope) or '?'}[/]"
                f"{' (' + escape(d.origin_source) + ')' if d.origin_source else ''}: reduce it there"
            )
        if d.rules_tried:
            console.print(
                f"  rules tried: {escape(', '.join(d.rules_tried))} (no pattern matches these input relations)"
            )
        if d.numbers == "differ":
            err = f" (the paired rank nodes' output is off by {d.numeric_error:.3g})" if d.numeric_error else ""
            console.print(f"  numbers differ: no rank value equals this value{err}")
        for h in d.hints:
            console.print(f"  [yellow]hint:[/] {escape(h)}")
    if len(v.discrepancies) > len(shown):
        console.print(f"\n... {len(v.discrepancies) - len(shown)} more (use --verbose)")
    _print_unproven(v, console, verbose)
    if v.no_rule_ops:
        console.print(f"\nops with no transfer rule on the frontier: {escape(', '.join(v.no_rule_ops))}")
    if result.derivation.capped:
        console.print(f"[yellow]driver stopped at its safety cap of {result.derivation.rounds} rounds[/]")
    if verbose and result.inputs.expand_ops:
        ops = ", ".join(sorted(f"{d}::{op}" if d else op for d, op in result.inputs.expand_ops))
        console.print(f"fused ops expanded through their ONNX function bodies: {escape(ops)}")
    if verbose and result.derivation.memo:
        console.print(f"layer memoization: {escape(result.derivation.memo)}")
    if verbose and result.derivation.one_rank:
        console.print(f"rank graphs alike: rank 0 solved, its rows copied to ranks 1..{result.inputs.world_size - 1}")
    if v.triage and (v.verdict != "verified" or verbose):
        console.print(f"[dim]numeric triage: {escape(v.triage)}[/]")
    colour = {"verified": "green", "unproven": "yellow"}.get(v.verdict, "red")
    size = f"world size {n}" if pp is None else f"{pp.degree} stages x {n} tensor-parallel ranks"
    if mesh is not None:
        size = f"world size {n}, mesh {mesh.text}"
    console.print(f"\n[bold {colour}]{v.verdict}[/] ({size}, engine {result.engine}, {result.seconds:.2f} s)")


def _print_unproven(v, console: Console, verbose: bool) -> None:
    """The steps no rule explains but the numbers agree on, with the pattern a rule must match."""
    shown = v.unproven if verbose else v.unproven[:5]
    for i, u in enumerate(shown, 1):
        console.print()
        console.print(f"[yellow]unproven {i}[/]: [bold]{escape(u.node)}[/] ({escape(u.op_type)})")
        console.print(f"  scope:  {escape(u.scope) or '?'}")
        if u.source:
            console.print(f"  source: {escape(u.source)}")
        if u.code:
            console.print(f"          [dim]{escape(u.code)}[/]")
        console.print(f"  {escape(u.message)}")
        for line in u.pattern:
            console.print(f"    {escape(line)}")
    if len(v.unproven) > len(shown):
        console.print(f"\n... {len(v.unproven) - len(shown)} more unproven steps (use --verbose)")
    if v.unproven:
        console.print("write a rule for each pattern (docs/rules.md, 'Adding a rule') to turn it into a proof")


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
