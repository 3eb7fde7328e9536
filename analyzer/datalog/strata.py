"""Relation dependency graph, strongly connected components and stratification.

A program is stratifiable when no relation depends on itself through a negation or an
aggregate. :func:`check_stratified` raises a :class:`DatalogError` naming such a cycle;
:func:`strata` lists the components lowest first (the evaluation order).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from analyzer.datalog.errors import NOWHERE, DatalogError, Loc
from analyzer.datalog.syntax import Aggregate, Atom, Constraint, Negation, Program, Rule

__all__ = ["Edge", "check_stratified", "dependency_edges", "scc_order", "strata"]


@dataclass(frozen=True)
class Edge:
    """``head`` depends on ``dep``; ``kind`` is ``"pos"``, ``"neg"`` or ``"agg"``."""

    head: str
    dep: str
    kind: str
    loc: Loc = NOWHERE


def _rule_edges(rule: Rule) -> Iterator[Edge]:
    head = rule.head.relation
    for lit in rule.body:
        if isinstance(lit, Atom):
            yield Edge(head, lit.relation, "pos", lit.loc)
        elif isinstance(lit, Negation):
            yield Edge(head, lit.atom.relation, "neg", lit.loc)
        elif isinstance(lit, Constraint):
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    for inner in side.body:
                        atom = inner.atom if isinstance(inner, Negation) else inner
                        if isinstance(atom, Atom):
                            yield Edge(head, atom.relation, "agg", side.loc)


def dependency_edges(rules: Iterable[Rule]) -> list[Edge]:
    """All dependency edges of ``rules``.

    Args:
        rules: The rules.

    Returns:
        One edge per body atom (negated atoms give ``neg`` edges, atoms inside aggregates
        ``agg`` edges).
    """
    return [edge for rule in rules for edge in _rule_edges(rule)]


def scc_order(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components, dependencies first (iterative Tarjan).

    Args:
        nodes: All node names.
        edges: ``(head, dep)`` pairs: ``head`` depends on ``dep``.

    Returns:
        Components in an order where every component comes after the ones it depends on.
    """
    succ: dict[str, list[str]] = {}
    for n in nodes:
        succ.setdefault(n, [])
    for head, dep in edges:
        succ.setdefault(head, []).append(dep)
        succ.setdefault(dep, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in succ:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            children = succ[node]
            if i < len(children):
                work.append((node, i + 1))
                child = children[i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _path(start: str, goal: str, succ: dict[str, set[str]], allowed: set[str]) -> list[str]:
    prev: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for nxt in sorted(succ.get(node, ())):
            if nxt in allowed and nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    path = [goal]
    while prev.get(path[-1]) is not None:
        path.append(prev[path[-1]])  # type: ignore[arg-type]
    return list(reversed(path))


def check_stratified(rules: Iterable[Rule], nodes: Iterable[str] = ()) -> list[list[str]]:
    """Check that no relation depends on itself through negation or aggregation.

    Args:
        rules: The rules.
        nodes: Extra relation names (e.g. declared relations without rules).

    Returns:
        The strongly connected components, dependencies first.

    Raises:
        DatalogError: Naming the cycle, at the offending negation or aggregate.
    """
    edges = dependency_edges(rules)
    comps = scc_order(list(nodes), [(e.head, e.dep) for e in edges])
    comp_of = {n: i for i, comp in enumerate(comps) for n in comp}
    succ: dict[str, set[str]] = {}
    for e in edges:
        succ.setdefault(e.head, set()).add(e.dep)
    for e in edges:
        if e.kind == "pos" or comp_of[e.head] != comp_of[e.dep]:
            continue
        members = set(comps[comp_of[e.head]])
        back = _path(e.dep, e.head, succ, members) if e.dep != e.head else [e.head]
        cycle = " -> ".join([e.head, *back])
        how = "negation of" if e.kind == "neg" else "an aggregate over"
        raise DatalogError(
            f"program is not stratifiable: {e.head} uses {how} {e.dep} inside the recursive cycle {cycle}",
            e.loc,
        )
    return comps


def strata(program: Program) -> list[list[str]]:
    """The program's relations grouped into strongly connected components, lowest first.

    Args:
        program: A checked program.

    Returns:
        Components in evaluation order.
    """
    return check_stratified(program.rules, program.decls)
