"""Solve one representative rank when every rank runs the same graph on the same relations.

An SPMD export gives every rank the same graph; with input relations that are the same on
every rank (each weight ``Shard(axis)`` or ``Replicate`` on all of them), the ranks differ
only in their number. Where the rules do not look at that number, what they derive for rank
r is what they derive for rank 0 with 0 renamed to r, so the engine can solve a world of
rank 0 alone (keeping the world size N for shape arithmetic) and copy rank 0's rows to the
other ranks (:func:`expand_rows`). On the 405B TP-8 check clingo grounds a quarter of the atoms.

**Names of ranks.** A rank is named by a *rank column* (declared type :data:`RANK_TYPE`,
``.type Rank <: number`` in schemas/facts.dl, whatever the column is called) or a *graph
column* (type ``Graph``: ``"r3"`` is rank 3's graph). A ``number`` column is a value, even
when it holds a rank number (a chunk index). A rule's rank and graph variables are joined into one
*rank* where ``RankGraph(g, r)`` or ``GraphRank(g, r)`` links them.

**Rules that cannot tell ranks apart** (:func:`rule_reason` is None):

* the rule speaks of at most one rank, and each atom of at most one: an atom's rank and graph
  columns hold that rank's variables, or only 0 (rank 0's rows: every rank's rows are rank 0's
  renamed, so reading rank 0 is reading one's own), or ``"seq"``/-1, or ``_``;
* the rank's variables occur in no other column, arithmetic, functor or comparison (but
  ``r >= 0``, true of every rank); a head names no rank constant; no aggregate reads a rank
  column (a count over ranks would be 1 instead of N);
* or the rule is part of an *all-ranks walk*, the library's way to say "on every rank" without
  an aggregate (``core/holds.dl``): a relation ``U`` derived only by ``U(x, 0) :- ...`` (reading
  rank 0) and ``U(x, r1) :- U(x, r), NextRank(r, r1), ...`` (at least one such step: without
  one, ``U``'s rows are rank 0's alone), read at ``LastRank(m)``. With
  every rank alike ``U(x, N-1)`` holds exactly when ``U(x, 0)`` does, so the one-rank world
  has ``LastRank(0)`` and no ``NextRank``.

**Rules that can** (rank r keeps chunk r: ``parallel/sequence.dl``; a gather's output j is rank
j's piece: ``collectives/rearrange.dl``; hints comparing ranks) are harmless when they fire
nowhere. Each gets a *probe* (:func:`with_rank_probes`): its body with every rank and graph
column read at rank 0, its negated atoms left out, and each rank variable that is used as a
number bound to 0..N-1 (``RankNumber``), or to the rank its head names (``Piece(s, 0, ...)``
derives a row of rank 0 alone); the probe derives ``RankProbe(i)`` for rule i, only in
the one-rank world (``OneRankWorld``). The probe over-approximates every instance of the rule
in the full world, so no ``RankProbe`` row means the rule fired nowhere; a row sends the driver
back to the full world. A rule that cannot be probed (an aggregate, ``NextRank`` outside a
walk, a graph used as a value) and is kept for the facts keeps the full world.

**Facts** (:func:`representative_facts`): the rank graphs are relabelled copies of rank 0's
(the driver's graph copies, from byte-identical graphs) and every other fact that names a
rank, renamed to rank 0, equals rank 0's, each naming one rank.

Why the result is exact: let M be the least model of the full world and S the model of the
one-rank world with its rank-0 rows copied to every rank. Every row of S names one rank. An
instance of a rule that cannot tell ranks apart whose body holds in S, renamed to rank 0,
holds in the one-rank world, which derives the renamed head; a rule that can fires nowhere in
S (its probe is empty); so S is closed under the rules and contains M. Every row of S has a
derivation in the full world (rename the one-rank derivation to each rank; a walk's base at
rank 0 extends to every rank because each rank's rows are rank 0's), so S is contained in M.
Stratum by stratum, negation included, S = M. ``tests/test_symmetry.py`` compares every
derived relation with and without the one-rank world on the examples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from analyzer.datalog.normalize import wildcard_singletons
from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    Const,
    Constraint,
    Decl,
    Negation,
    Program,
    Rule,
    Var,
    Wildcard,
    body_vars,
    term_vars,
)

__all__ = [
    "PROBE_PREFIX",
    "RANK_TYPE",
    "expand_rows",
    "has_unprobed_rules",
    "probe_relations",
    "probes_agree",
    "representative_facts",
    "rule_reason",
    "unsupported_rules",
    "with_rank_probes",
]

#: The declared type of the columns that hold a rank (schemas/facts.dl).
RANK_TYPE = "Rank"
#: The relations the probes derive are named this and the probed rule's index.
PROBE_PREFIX = "RankProbe_"
_LINKS = frozenset({"RankGraph", "GraphRank"})  # (graph, rank) pairs: a graph variable's rank
_WALK_INPUTS = frozenset({"NextRank", "LastRank"})
_GUARD = "OneRankWorld"  # the probes' guard: a fact only in the one-rank world
_NUMBERS = "RankNumber"  # 0..N-1 as plain numbers


def _positions(decl: Decl) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(rank column positions, graph column positions) of a relation."""
    ranks = tuple(i for i, (_, kind) in enumerate(decl.columns) if kind == RANK_TYPE)
    graphs = tuple(i for i, (_, kind) in enumerate(decl.columns) if kind == "Graph")
    return ranks, graphs


def _walks(program: Program) -> set[str]:
    """Relations derived only by the base and step rules of an all-ranks walk."""
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        by_head.setdefault(rule.head.relation, []).append(rule)
    out = set()
    for name, rules in by_head.items():
        ranks, graphs = _positions(program.decls[name])
        if len(ranks) != 1 or graphs:
            continue
        at = ranks[0]
        bases = [r for r in rules if isinstance(r.head.args[at], Const) and r.head.args[at].value == 0]
        steps = [r for r in rules if _is_step(r, name, at)]
        # a relation derived at rank 0 alone, with no step, is rank 0's rows, not a walk
        if bases and steps and all(r in bases or r in steps for r in rules):
            out.add(name)
    return out


def _is_step(rule: Rule, name: str, at: int) -> bool:
    """``U(x, r1) :- U(x, r), NextRank(r, r1), ...`` with r used nowhere else."""
    r1 = rule.head.args[at]
    if not isinstance(r1, Var):
        return False
    prev = [lit for lit in rule.body if isinstance(lit, Atom) and lit.relation == name]
    nxt = [lit for lit in rule.body if isinstance(lit, Atom) and lit.relation == "NextRank"]
    if len(prev) != 1 or len(nxt) != 1 or not isinstance(prev[0].args[at], Var):
        return False
    r = prev[0].args[at]
    if nxt[0].args != (r, r1) or r == r1:
        return False
    return sum(1 for lit in rule.body for v in _literal_vars(lit) if v == r.name) == 2


def _literal_vars(lit) -> Iterable[str]:
    """Names of the variables of a body literal (with repeats; aggregates included)."""
    return (v.name for v in body_vars((lit,)))


def _term_vars(term) -> Iterable[str]:
    """Names of the variables of a term (with repeats; aggregates included)."""
    return (v.name for v in term_vars(term))


def _atoms(body) -> Iterable[Atom]:
    for lit in body:
        if isinstance(lit, Atom):
            yield lit
        elif isinstance(lit, Negation):
            yield lit.atom


def _has_aggregate(rule: Rule) -> bool:
    terms = [t for a in [rule.head, *_atoms(rule.body)] for t in a.args]
    terms += [t for c in rule.body if isinstance(c, Constraint) for t in (c.left, c.right)]
    return any(isinstance(t, Aggregate) for t in terms)


@dataclass
class _Scan:
    """What one rule says about ranks."""

    decls: Mapping[str, Decl]
    faults: list[str] = field(default_factory=list)
    ranks: set[str] = field(default_factory=set)  # variables in rank columns (not LastRank's)
    graphs: set[str] = field(default_factory=set)  # variables in graph columns
    final: set[str] = field(default_factory=set)  # variables bound by LastRank
    parent: dict[str, str] = field(default_factory=dict)
    zero: set[str] = field(default_factory=set)  # variables bound to rank 0 (or its graph)

    def root(self, v: str) -> str:
        while self.parent.get(v, v) != v:
            v = self.parent[v]
        return v

    def join(self, a: str, b: str) -> None:
        self.parent.setdefault(a, a)
        self.parent.setdefault(b, b)
        self.parent[self.root(a)] = self.root(b)


def rule_reason(rule: Rule, decls: Mapping[str, Decl], walks: set[str]) -> str | None:
    """Why ``rule`` may tell ranks apart (module docstring), or None when it cannot."""
    if rule.head.relation in walks:
        at = _positions(decls[rule.head.relation])[0][0]
        if _is_step(rule, rule.head.relation, at):
            rest = tuple(
                lit
                for lit in rule.body
                if not (isinstance(lit, Atom) and lit.relation in (rule.head.relation, "NextRank"))
            )
            return rule_reason(Rule(rule.head, rest), decls, set())
    scan = _Scan(decls)
    for atom in _atoms(rule.body):
        if atom.relation == "LastRank":
            scan.final.update(_literal_vars(atom))
    atoms = [(rule.head, True), *((a, False) for a in _atoms(rule.body))]
    for atom, head in atoms:
        _collect(scan, atom, head, walks)
    outer = {v for atom, _ in atoms for t in atom.args for v in _term_vars(t)}
    aggregates = [
        s for c in rule.body if isinstance(c, Constraint) for s in (c.left, c.right) if isinstance(s, Aggregate)
    ]
    inner: list[Atom] = []
    for agg in aggregates:  # a count over one rank's rows is the same in both worlds, over ranks not
        for atom in _atoms(agg.body):
            decl = decls.get(atom.relation)
            if decl is None:
                continue
            _collect(scan, atom, False, walks)
            inner.append(atom)
            for i in sum(_positions(decl), ()):
                a = atom.args[i]
                if not (isinstance(a, Var) and a.name in outer) and not (
                    isinstance(a, Const) and a.value in (0, "seq")
                ):
                    scan.faults.append(f"an aggregate ranges over the ranks of {atom.relation}")
    ident = scan.ranks | scan.graphs
    for atom, head in [*atoms, *((a, False) for a in inner)]:  # one rank per atom, rank variables nowhere else
        _one_rank(scan, atom, head, walks)
    constraints = [c for c in rule.body if isinstance(c, Constraint)]
    constraints += [c for agg in aggregates for c in agg.body if isinstance(c, Constraint)]
    for c in constraints:
        sides = [s for s in (c.left, c.right) if not isinstance(s, Aggregate)]
        sides += [s.target for s in (c.left, c.right) if isinstance(s, Aggregate) and s.target is not None]
        used = {v for s in sides for v in _term_vars(s)} & (ident | scan.final)
        if used and not _every_rank_passes(c, scan.ranks):
            scan.faults.append(f"compares rank {', '.join(sorted(used))}")
    zero = {scan.root(v) for v in scan.zero}
    groups = {scan.root(v) for v in ident} - zero
    if len(groups) > 1:
        scan.faults.append(f"speaks of {len(groups)} ranks ({', '.join(sorted(ident))})")
    return "; ".join(dict.fromkeys(scan.faults)) or None


def _collect(scan: _Scan, atom: Atom, head: bool, walks: set[str]) -> None:
    decl = scan.decls.get(atom.relation)
    if decl is None:
        return
    if atom.relation in _WALK_INPUTS and (head or atom.relation == "NextRank"):
        scan.faults.append(f"{atom.relation} outside an all-ranks walk")
    ranks, graphs = _positions(decl)
    for i in ranks + graphs:
        t = atom.args[i]
        if isinstance(t, Var):
            if t.name in scan.final:
                if atom.relation not in walks and atom.relation != "LastRank":
                    scan.faults.append(f"LastRank's rank read by {atom.relation}")
                continue
            (scan.ranks if i in ranks else scan.graphs).add(t.name)
            scan.parent.setdefault(t.name, t.name)
        elif isinstance(t, Const):
            if i in graphs and t.value != "seq":
                scan.faults.append(f"graph constant {t.value!r} in {atom.relation}")
            elif i in ranks and head and not (atom.relation in walks and t.value == 0):
                scan.faults.append(f"rank constant {t.value} in the head {atom.relation}")
            elif i in ranks and t.value not in (0, -1):
                scan.faults.append(f"rank constant {t.value} in {atom.relation}")
        elif not isinstance(t, Wildcard):
            scan.faults.append(f"computed rank in {atom.relation}")
    if atom.relation in _LINKS:
        g, r = atom.args[graphs[0]], atom.args[ranks[0]]
        if isinstance(g, Var) and isinstance(r, Var):
            scan.join(g.name, r.name)
        elif isinstance(g, Var) and isinstance(r, Const) and r.value == 0:
            scan.zero.add(g.name)


def _one_rank(scan: _Scan, atom: Atom, head: bool, walks: set[str]) -> None:
    decl = scan.decls.get(atom.relation)
    if decl is None:
        return
    ranks, graphs = _positions(decl)
    names: set[str] = set()
    zero = False
    for i in ranks + graphs:
        t = atom.args[i]
        if isinstance(t, Var) and t.name not in scan.final:
            if scan.root(t.name) in {scan.root(z) for z in scan.zero}:
                zero = True
            else:
                names.add(scan.root(t.name))
        elif isinstance(t, Const) and t.value == 0 and i in ranks:
            zero = True
    if len(names) + zero > 1:
        scan.faults.append(f"{atom.relation} names two ranks")
    if head and zero and atom.relation not in walks:
        scan.faults.append(f"the head {atom.relation} is about rank 0")
    ident = scan.ranks | scan.graphs | scan.final
    for i, t in enumerate(atom.args):
        if i not in ranks and i not in graphs:
            used = set(_term_vars(t)) & ident
            if used:
                scan.faults.append(f"rank {', '.join(sorted(used))} used as a value of {atom.relation}")


def _every_rank_passes(c: Constraint, ranks: set[str]) -> bool:
    """``r >= 0`` (or ``r > -1``, ``r != -1``) on a rank variable: true of every rank."""
    if not (isinstance(c.left, Var) and c.left.name in ranks and isinstance(c.right, Const)):
        return False
    return (c.op, c.right.value) in {(">=", 0), (">", -1), ("!=", -1)}


# ---------------------------------------------------------------------------------------
# probes

_ATTR = "_rank_symmetry"


@dataclass(frozen=True)
class _Analysis:
    reasons: tuple[str | None, ...]  # per rule of the program before probes
    probes: Mapping[str, int]  # probe relation -> the rule it watches
    unprobed: frozenset[int]  # rules that may tell ranks apart and have no probe


def with_rank_probes(program: Program) -> Program:
    """Add a probe for each rule that may tell ranks apart (module docstring), once per
    program (the driver calls it before the program is cached). Returns ``program``."""
    if _ATTR in program.__dict__:
        return program
    walks = _walks(program)
    reasons = tuple(rule_reason(rule, program.decls, walks) for rule in program.rules)
    probes: dict[str, int] = {}
    unprobed = set()
    if _GUARD in program.decls and _NUMBERS in program.decls:
        for i, why in enumerate(reasons):
            if why is None:
                continue
            probe = _probe(program.rules[i], i, program.decls)
            if probe is None:
                unprobed.add(i)
                continue
            rule, decl = probe
            probes[decl.name] = i
            program.decls[decl.name] = decl
            program.outputs.append(decl.name)
            program.rules.append(rule)
    else:
        unprobed = {i for i, why in enumerate(reasons) if why}
    program.__dict__[_ATTR] = _Analysis(reasons, probes, frozenset(unprobed))
    return program


def _probe(rule: Rule, index: int, decls: Mapping[str, Decl]) -> tuple[Rule, Decl] | None:
    """The probe of ``rule`` (module docstring) and its relation's declaration: column
    ``rank_number`` (-1 when the probe only tells whether the rule has an instance), then the
    columns of the rule's head; None when it cannot have one."""
    if _has_aggregate(rule) or any(a.relation == "NextRank" for a in _atoms(rule.body)):
        return None
    exact = _speaks_of_one_rank(rule, decls)
    rank_vars: set[str] = set()
    graph_vars: set[str] = set()
    body: list = [Atom(_GUARD, (Wildcard(),))]
    for lit in rule.body:
        if isinstance(lit, Constraint):
            body.append(lit)
            continue
        if isinstance(lit, Negation) and not exact:
            continue  # leaving a negation out only adds instances
        atom = lit.atom if isinstance(lit, Negation) else lit
        read = _at_rank_zero(atom, decls, rank_vars, graph_vars)
        if read is None:
            return None
        body.append(Negation(read) if isinstance(lit, Negation) else read)
    values = set()  # variables read as values once the rank and graph columns are rank 0's
    for lit in body:
        if isinstance(lit, (Atom, Negation)):
            atom = lit.atom if isinstance(lit, Negation) else lit
            decl = decls.get(atom.relation)
            ranks, graphs = _positions(decl) if decl is not None else ((), ())
            for i, t in enumerate(atom.args):
                if i not in ranks and i not in graphs:
                    values.update(_term_vars(t))
        else:
            values.update(_literal_vars(lit))
    head = _at_rank_zero(rule.head, decls, set(), set())
    if head is None:
        return None
    head_decl = decls.get(rule.head.relation)
    ranks, graphs = _positions(head_decl) if head_decl is not None else ((), ())
    values.update(v for i, t in enumerate(head.args) if i not in ranks and i not in graphs for v in _term_vars(t))
    if graph_vars & values:
        return None  # a graph name used as a value
    name = f"{PROBE_PREFIX}{index}"
    if not exact:
        for v in sorted(rank_vars & values):
            body.append(Atom(_NUMBERS, (Var(v),)))
        decl = Decl(name, (("rank_number", "number"),), ("number",))
        return wildcard_singletons(Rule(Atom(name, (Const(-1),)), tuple(body))), decl
    number = sorted(rank_vars)[0] if rank_vars else "rank_number_"
    for v in sorted(rank_vars - {number}):  # one rank: its variables are one number
        body.append(Constraint("=", Var(v), Var(number)))
    # a head that names a rank (Piece(s, 0, ...)) derives its row at that rank alone, not at
    # every rank: the probe's rows must say so, or a one-rank solve would copy it to the others
    for i in ranks:
        t = rule.head.args[i]
        if isinstance(t, Const) and t.value != -1:
            body.append(Constraint("=", Var(number), Const(t.value)))
    body.append(Atom(_NUMBERS, (Var(number),)))
    # the probe's copy of the head's columns: rank 0's, read as plain values (not copied to each rank)
    cols = tuple((f"c{i}", "number" if kind == RANK_TYPE else kind) for i, (_, kind) in enumerate(head_decl.columns))
    decl = Decl(name, (("rank_number", "number"), *cols), ("number", *head_decl.base_types))
    return wildcard_singletons(Rule(Atom(name, (Var(number), *head.args)), tuple(body))), decl


def _at_rank_zero(atom: Atom, decls: Mapping[str, Decl], rank_vars: set[str], graph_vars: set[str]) -> Atom | None:
    """``atom`` with its rank columns 0 and its graph constants ``"r0"`` (None: a graph
    constant that names no rank); adds the variables it had there to the two sets."""
    decl = decls.get(atom.relation)
    if decl is None:
        return None
    ranks, graphs = _positions(decl)
    args = list(atom.args)
    for i in ranks:
        t = args[i]
        if isinstance(t, Var):
            rank_vars.add(t.name)
        if isinstance(t, Var) or (isinstance(t, Const) and t.value != -1):
            args[i] = Const(0)
    for i in graphs:
        t = args[i]
        if isinstance(t, Var):
            graph_vars.add(t.name)
        elif isinstance(t, Const) and t.value != "seq":
            if not (isinstance(t.value, str) and t.value[:1] == "r" and t.value[1:].isdigit()):
                return None
            args[i] = Const("r0")
    return Atom(atom.relation, tuple(args))


def _speaks_of_one_rank(rule: Rule, decls: Mapping[str, Decl]) -> bool:
    """Whether every atom of ``rule`` names one rank, the same one (or rank 0 only): its probe
    can keep the negations and give the rule's rows rank by rank."""
    scan = _Scan(decls)
    atoms = [(rule.head, True), *((a, False) for a in _atoms(rule.body))]
    for atom, head in atoms:
        _collect(scan, atom, head, set())
    for atom, head in atoms:
        _one_rank(scan, atom, head, set())
    zero = {scan.root(v) for v in scan.zero}
    groups = {scan.root(v) for v in scan.ranks | scan.graphs} - zero
    return len(groups) <= 1 and not any("names two ranks" in f for f in scan.faults)


def _analysis(program: Program) -> _Analysis:
    with_rank_probes(program)
    return program.__dict__[_ATTR]


def has_unprobed_rules(program: Program) -> bool:
    """Whether some rule of ``program`` may tell ranks apart and has no probe."""
    return bool(_analysis(program).unprobed)


def unsupported_rules(program: Program, kept: Iterable[int]) -> list[tuple[Rule, str]]:
    """The rules among ``kept`` (indices into ``program.rules``) that may tell ranks apart and
    have no probe: the one-rank world cannot stand in for the full one."""
    a = _analysis(program)
    return [(program.rules[i], a.reasons[i] or "") for i in kept if i in a.unprobed]


def probe_relations(program: Program) -> list[str]:
    """The relations of the probes of ``program``."""
    return list(_analysis(program).probes)


def probes_agree(derived: Mapping[str, list[tuple]], program: Program, world_size: int) -> bool:
    """Whether the probes' rows of a one-rank solve allow copying rank 0's rows: each probed
    rule derives the same rows at every rank 0..N-1 (module docstring)."""
    for name in _analysis(program).probes:
        per_rank: dict[int, set[tuple]] = {}
        for row in derived.get(name, ()):
            if row[0] < 0:
                return False
            per_rank.setdefault(row[0], set()).add(row[1:])
        if per_rank and (len(per_rank) != world_size or any(rows != per_rank[0] for rows in per_rank.values())):
            return False
    return True


# ---------------------------------------------------------------------------------------
# facts and rows


def _identity(row: tuple, ranks: Sequence[int], graphs: Sequence[int], rank_of: Mapping[str, int]) -> set[int]:
    out = {row[i] for i in ranks if row[i] >= 0}
    for i in graphs:
        if row[i] != "seq":
            out.add(rank_of.get(row[i], -2))
    return out


def representative_facts(
    tuples: Mapping[str, list[tuple]], decls: Mapping[str, Decl], world_size: int, copied: Mapping[str, Sequence[str]]
) -> dict[str, list[tuple]] | None:
    """The facts of the one-rank world, or None when the ranks' facts differ.

    Args:
        tuples: every fact, relation -> rows, but the rows of the rank graphs in ``copied``.
        decls: the program's declarations.
        world_size: N.
        copied: source graph -> graphs whose facts are relabelled copies of its facts (the
            driver's graph copies); must be ``{"r0": ["r1", ..., "r{N-1}"]}``.

    Returns:
        ``tuples`` with rank 0's rows and the rows naming no rank, ``LastRank(0)``,
        ``OneRankWorld(N)`` and no ``NextRank``; rank 0's graph facts stay the caller's.
    """
    if world_size < 2 or dict(copied) != {"r0": [f"r{r}" for r in range(1, world_size)]}:
        return None
    rank_of = {f"r{r}": r for r in range(world_size)}
    known = set(rank_of.values())
    out: dict[str, list[tuple]] = {"NextRank": [], "LastRank": [(0,)], _GUARD: [(world_size,)]}
    for name, rows in tuples.items():
        if name in out:
            continue
        ranks, graphs = _positions(decls[name])
        if not (ranks or graphs):
            out[name] = rows
            continue
        if name == "GraphRank":
            out[name] = [row for row in rows if row[ranks[0]] in (-1, 0)]
            continue
        mine: list[tuple] = []
        base: set[tuple] = set()
        others: dict[int, set[tuple]] = {}
        for row in rows:
            who = _identity(row, ranks, graphs, rank_of)
            if not who:
                mine.append(row)
                continue
            if len(who) > 1 or not who <= known:
                return None  # a fact naming two ranks, or an unknown graph
            (r,) = who
            if r == 0:
                mine.append(row)
                base.add(row)
            else:
                others.setdefault(r, set()).add(_rename(row, ranks, graphs, r, 0))
        if any(others.get(r, set()) != base for r in range(1, world_size)):
            return None
        out[name] = mine
    return out


def _rename(row: tuple, ranks: Sequence[int], graphs: Sequence[int], old: int, new: int) -> tuple:
    cells = list(row)
    for i in ranks:
        if cells[i] == old:
            cells[i] = new
    name_old, name_new = f"r{old}", f"r{new}"
    for i in graphs:
        if cells[i] == name_old:
            cells[i] = name_new
    return tuple(cells)


def expand_rows(
    derived: Mapping[str, list[tuple]], decls: Mapping[str, Decl], world_size: int
) -> dict[str, list[tuple]]:
    """The full world's relations from the one-rank world's: every row naming rank 0 copied to
    each rank 1..N-1 (rank columns 0 -> r, graph ``"r0"`` -> ``"r{r}"``), each relation sorted."""
    out: dict[str, list[tuple]] = {}
    for name, rows in derived.items():
        decl = decls.get(name)
        ranks, graphs = _positions(decl) if decl is not None else ((), ())
        if not rows or not (ranks or graphs):
            out[name] = rows
            continue
        extra = []
        for row in rows:
            if any(row[i] == 0 for i in ranks) or any(row[i] == "r0" for i in graphs):
                extra.extend(_rename(row, ranks, graphs, 0, r) for r in range(1, world_size))
        out[name] = sorted(set(rows).union(extra)) if extra else rows
    return out
