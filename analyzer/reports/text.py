"""Reports of a check: coloured text (rich) and JSON.

JSON schema version 1 (``--json REPORT.json``)::

    {
      "schema_version": 1,
      "verdict": "verified" | "discrepancy" | "unproven" | "inconsistent",
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
      "input_relations": [{"name": str, "relation": str, "source": "inferred" | "spec",
                           "established": "values" | "shapes" | "spec" | "names",
                           "evidence": str}],  # what the stored values showed ("" if not compared)
      "conditional": bool,     # verified, given the assumed input relations
      "assumed": [str],        # input relations upstream of the outputs not checked on values
      # the numeric triage (analyzer/verdict/triage.py) adds to each item: "numbers": "" | "differ"
      # | "agree" | "outputs agree", "numeric_error": float | null, "relation": str,
      # "rank_values": [str], "pattern": [str]
      "unproven": [...],             # steps no rule explains, the numbers agree (items as above,
                                     # kind "unproven" | "unproven-output")
      "triage": str,                 # what the numeric triage did ("" when not run)

      "notes": [str], "no_rule_ops": [str],
      "numeric": {output name: max abs error},   # only with --numeric
      "witness": {"seeds": [int], "skipped": str, "intermediates": int,   # only with --numeric
                  "intermediates_skipped": str, "rechecked": int,  # refutations float64 put within tolerance
                  "outputs": {name: {"error": float, "scale": float, "tolerance": float, "seed": int,
                                     "float64_error": float | null}},
                  "contradictions": [{"kind": "output" | "intermediate" | "input", "value": str, "relation": str,
                                      "rank_values": [str], "error": float, "tolerance": float,
                                      "seed": int, "inputs": [str], "float64_error": float | null,
                                      "rules": [str]}]},  # user rules it is traced to, file:line
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
from rich.markup import escape as _markup

from analyzer.errors import escape as _plain
from analyzer.model import CheckResult

__all__ = [
    "to_json",
    "json_text",
    "write_json",
    "print_text",
    "print_coverage",
    "contradiction_text",
    "inconsistency_hint",
    "given_text",
    "relation_text",
    "EVIDENCE",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1
#: Longest name, path or source line printed (characters; longer ones are cut, saying so).
MAX_SHOWN = 500


def escape(text: object) -> str:
    """A name, path, message or source line from the model for the terminal: control
    characters written as escapes (:func:`analyzer.errors.escape`: a name cannot move the
    cursor, retitle the terminal or start a line of its own), cut at :data:`MAX_SHOWN`
    characters, and rich markup escaped (``[bold]`` in a name is text)."""
    return _markup(_plain(text, MAX_SHOWN))


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
            {
                "name": r.seq_value,
                "relation": str(r.layout),
                "source": r.source,
                "established": r.established,
                "evidence": r.evidence,
            }
            for r in result.inputs.relations
        ],
        "conditional": v.conditional,
        "assumed": [relation_text(r) for r in v.assumed],
        "notes": result.inputs.notes,
        "no_rule_ops": v.no_rule_ops,
        "unproven": [item_of(u) for u in v.unproven],
        "triage": v.triage,
    }
    if result.numeric:
        out["numeric"] = result.numeric
    if result.witness is not None:
        out["witness"] = asdict(result.witness)
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


def json_text(result: CheckResult) -> str:
    """The JSON report as text (indented, ASCII: other characters as ``\\u`` escapes)."""
    return json.dumps(to_json(result), indent=2) + "\n"


def write_json(result: CheckResult, path: str | Path) -> None:
    """Write the JSON report to ``path`` (``-``: standard output), atomically
    (:func:`analyzer.reports.write.write_atomic`)."""
    from analyzer.reports.write import write_atomic

    write_atomic(path, json_text(result))


#: how an input relation was established (``InputRelation.established``), for people
EVIDENCE = {
    "values": "checked on values",
    "shapes": "assumed: names and shapes",
    "spec": "assumed: the spec",
    "names": "assumed: names",
}


def relation_text(rel) -> str:
    """``name = layout [established]`` for an :class:`~analyzer.inputs.infer.InputRelation`."""
    return f"{rel.seq_value} = {rel.layout} [{rel.established}]"


def given_text(assumed: list, limit: int = 6) -> str:
    """The assumed relations of a verdict in one line (the first ``limit``)."""
    shown = ", ".join(relation_text(r) for r in assumed[:limit])
    more = f", ... {len(assumed) - limit} more (--explain lists them)" if len(assumed) > limit else ""
    return shown + more


def contradiction_text(c, n: int) -> str:
    """One line for a :class:`~analyzer.model.Contradiction` (no markup)."""
    on = "rank 0" if n == 1 else f"ranks 0..{n - 1}"
    what = {
        "output": f"output {c.value} = {c.relation} on {on}, which the rules derived",
        "input": f"the input relation {c.value} = {c.relation} on {on}",
    }.get(c.kind, f"intermediate value {c.value} = {c.relation} on {on}, which the rules derived")
    wide = getattr(c, "float64_error", None)
    again = f"; {wide:.3g} in float64" if wide is not None else ""
    text = (
        f"the numeric witness refutes {what}: max abs error {c.error:.3g} > tolerance {c.tolerance:.3g} "
        f"(seed {c.seed}{again})"
    )
    rules = getattr(c, "rules", None)
    if rules:
        text += f"; derived by the user rule{'s' if len(rules) > 1 else ''} {', '.join(rules)}"
    return text


def inconsistency_hint(c) -> str:
    """What a :class:`~analyzer.model.Contradiction` means: a user rule to fix when it is traced
    to one (``c.rules``), else :data:`INCONSISTENCY_HINT`."""
    if getattr(c, "rules", None):
        which = "this user rule derives" if len(c.rules) == 1 else "these user rules derive (together with the library)"
        return (f"{which} a relation the numbers refute: it is wrong for this graph (fix its pattern or remove "
                "it; the program itself may be correct)")
    return INCONSISTENCY_HINT


#: what a contradiction means, for every report
INCONSISTENCY_HINT = (
    "a transfer rule, an oracle or one of these input relations is wrong (the program itself may be "
    "correct); please report it"
)


def _print_witness(result: CheckResult, console: Console, n: int) -> None:
    """The numeric witness's contradictions and why it could not run."""
    w = result.witness
    if w is None:
        return
    if w.skipped:
        why = escape(w.skipped)
        console.print(f"\n[yellow]numeric witness could not run:[/] {why} (the verdict is the rules' alone)")
    elif w.intermediates_skipped:
        why = escape(w.intermediates_skipped)
        console.print(f"\n[yellow]numeric witness: intermediate relations not checked:[/] {why}")
    for i, c in enumerate(w.contradictions, 1):
        console.print()
        console.print(f"[magenta]internal inconsistency {i}[/]: {escape(contradiction_text(c, n))}")
        shown = c.inputs[:8]
        more = f", ... {len(c.inputs) - len(shown)} more" if len(c.inputs) > len(shown) else ""
        console.print(f"  input relations upstream: {escape(', '.join(shown)) or 'none'}{more}")
        console.print(f"  [yellow]hint:[/] {escape(inconsistency_hint(c))}")


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
    n = result.world_size if result.mesh is not None else result.inputs.world_size
    _print_setting(result, console, explain)
    if explain:
        _print_input_relations(result, console, n)
    _print_outputs(result, console, n)
    shown = v.discrepancies if verbose else v.discrepancies[:5]
    for i, d in enumerate(shown, 1):
        console.print()
        if d.kind == "collective":
            _print_collective(console, i, d)
        else:
            _print_frontier(console, i, d, result.inputs.pipeline)
    if len(v.discrepancies) > len(shown):
        console.print(f"\n... {len(v.discrepancies) - len(shown)} more (use --verbose)")
    _print_witness(result, console, n)
    _print_unproven(v, console, verbose)
    _print_notes(result, console, verbose)
    _print_verdict_line(result, console, n)


def _print_setting(result: CheckResult, console: Console, explain: bool) -> None:
    """The mesh's per-axis checks and the pipeline's stages, when the check has them."""
    mesh, pp = result.mesh, result.inputs.pipeline
    if mesh is not None:  # a mesh check (analyzer/mesh.py): one line per one-axis check
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


def _print_input_relations(result: CheckResult, console: Console, n: int) -> None:
    """``--explain``: each input relation, how it was established, and the inputs with none."""
    rels = result.inputs.relations
    checked = sum(r.established == "values" for r in rels)
    console.print(
        f"[bold]input relations[/] ({len(rels)}: {checked} checked on values, {len(rels) - checked} assumed):"
    )
    on = _ranks_text(n, result.inputs.pipeline is not None)
    for r in rels:
        how = EVIDENCE.get(r.established, r.established) + (f": {r.evidence}" if r.evidence else "")
        held = [k for k, d in enumerate(r.rank_values) if d]
        where = on if len(held) == len(r.rank_values) else "rank" + ("s " if len(held) > 1 else " ") + ", ".join(
            map(str, held)) + " only"
        console.print(f"  {escape(r.seq_value)} = {escape(r.layout)} on {where}  [dim]({r.source}; {escape(how)})[/]")
    for note in result.inputs.notes:
        console.print(f"  [yellow]no relation:[/] {escape(note)}")


def _print_outputs(result: CheckResult, console: Console, n: int) -> None:
    """One line per sequential output: the relation the rules derived, and the witness's error."""
    mesh = result.mesh
    ranks = _ranks_text(n, result.inputs.pipeline is not None) + (f" (mesh {mesh.text})" if mesh is not None else "")
    for o in result.verdict_.outputs:
        if o.relation:
            on = ranks
            console.print(f"output {escape(o.name)} = {escape(o.relation)} on {escape(on)}")
        else:
            console.print(f"output {escape(o.name)} = [red]no relation[/]")
        if o.name in result.numeric:
            w = result.witness.outputs.get(o.name) if result.witness is not None else None
            extra = f" (tolerance {w.tolerance:.3g}, seed {w.seed})" if w is not None else ""
            if w is not None and w.float64_error is not None:
                extra += f"; in float64 {w.float64_error:.3g}"
            console.print(f"  numeric witness: max abs error {result.numeric[o.name]:.3g}{extra}")


def _print_collective(console: Console, i: int, d) -> None:
    """A discrepancy at a collective (wrong group, axis or order): its message and the rank node."""
    console.print(f"[red]discrepancy {i}[/]: {escape(d.message)}")
    if d.node and d.graph != "seq":
        console.print(f"  on {_graph_text(d.graph)}: [bold]{escape(d.node)}[/] ({escape(d.op_type)})")
        if d.scope:
            console.print(f"  scope:  {escape(d.scope)}")
        _print_source(console, d)
        _print_hints(console, d)


def _print_frontier(console: Console, i: int, d, pp) -> None:
    """A frontier discrepancy: the node, where it is, its inputs' relations, pairing and hints."""
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
        _print_frontier_input(console, d, inp)
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
        console.print(f"  rules tried: {escape(', '.join(d.rules_tried))} (no pattern matches these input relations)")
    if d.numbers == "differ":
        err = f" (the paired rank nodes' output is off by {d.numeric_error:.3g})" if d.numeric_error else ""
        console.print(f"  numbers differ: no rank value equals this value{err}")
    _print_hints(console, d)


def _print_frontier_input(console: Console, d, inp) -> None:
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


def _print_hints(console: Console, d) -> None:
    for h in d.hints:
        console.print(f"  [yellow]hint:[/] {escape(h)}")


def _print_notes(result: CheckResult, console: Console, verbose: bool) -> None:
    """Ops without a rule, and with ``--verbose`` what the speed paths and the rewrite stage did."""
    v = result.verdict_
    if v.no_rule_ops:
        console.print(f"\nops with no transfer rule on the frontier: {escape(', '.join(v.no_rule_ops))}")
    if verbose and result.inputs.expand_ops:
        ops = ", ".join(sorted(f"{d}::{op}" if d else op for d, op in result.inputs.expand_ops))
        console.print(f"fused ops expanded through their ONNX function bodies: {escape(ops)}")
    if verbose and result.derivation.memo:
        console.print(f"layer memoization: {escape(result.derivation.memo)}")
    if verbose and result.derivation.one_rank:
        console.print(f"rank graphs alike: rank 0 solved, its rows copied to ranks 1..{result.inputs.world_size - 1}")
    if v.triage and (v.verdict != "verified" or verbose):
        console.print(f"[dim]numeric triage: {escape(v.triage)}[/]")


def _print_verdict_line(result: CheckResult, console: Console, n: int) -> None:
    """The assumptions a verified rests on, then the verdict line: the only line that starts with
    ``verified`` or ``discrepancy`` (every name is escaped onto its own line's middle: output lines
    start with ``output ``)."""
    v, mesh, pp = result.verdict_, result.mesh, result.inputs.pipeline
    colour = {"verified": "green", "unproven": "yellow", "inconsistent": "magenta"}.get(v.verdict, "red")
    size = f"world size {n}" if pp is None else f"{pp.degree} stages x {n} tensor-parallel ranks"
    if mesh is not None:
        size = f"world size {n}, mesh {mesh.text}"
    given = ""
    if v.conditional:
        k = len(v.assumed)
        console.print(f"\ngiven (not checked on values): {escape(given_text(v.assumed))}")
        given = f", given {k} assumed input relation{'s' if k > 1 else ''}"
    else:
        console.print()
    tail = f"({escape(size)}, engine {result.engine}, {result.seconds:.2f} s)"
    console.print(f"[bold {colour}]{v.verdict}[/]{given} {tail}")


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


def _print_unproven(v, console: Console, verbose: bool) -> None:
    """The steps no rule explains but the numbers agree on, with the pattern a rule must match."""
    shown = v.unproven if verbose else v.unproven[:5]
    for i, u in enumerate(shown, 1):
        console.print()
        console.print(f"[yellow]unproven {i}[/]: [bold]{escape(u.node)}[/] ({escape(u.op_type)})")
        if u.scope:
            console.print(f"  scope:  {escape(u.scope)}")
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
