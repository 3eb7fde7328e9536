"""An embedded engine that compiles each rule to a Python function and evaluates the program
bottom-up, semi-naively, one strongly connected component at a time.

This is the textbook evaluation of stratified Datalog (Abiteboul, Hull and Vianu,
*Foundations of Databases*, ch. 13 and 15; Soufflé does the same, compiled to C++): the
relations are grouped into components lowest first (:func:`analyzer.datalog.strata.strata`);
a component's rules run once over the complete lower components and, when the component is
recursive, again for every round of new rows, each rule once per recursive body atom with
that atom reading only the previous round's new rows (the *delta*) and the others every row
so far; the component is complete when a round adds nothing. Negated atoms and aggregates
read lower components only (the program is stratified), so they see complete relations.

Each rule becomes Python source with one nested loop per positive atom
(:mod:`analyzer.engines.seminaive_codegen`), compiled once per program (:func:`_plan`; the
code objects are kept on the program, which the driver's program cache pickles, as marshal
bytes):

* the atoms are joined in a greedy order: next a membership test if one is ready, else the
  atom with the most bound node or value names (:data:`KEY_TYPES`), then the most known
  arguments, ties in the rule's order; every comparison, assignment, negation and aggregate
  comes as soon as its variables are bound. (Counting constants and ranks as well as names
  once ordered a rule of ``rules/parallel/expert_backward.dl`` into a cross product of every
  replicated piece with every Mul node: 114 s on ``examples/mixtral_ep2_adamw``, now 0.5 s);
* an atom with known arguments is read through a hash index on those columns (built the
  first time a rule asks for it, kept up to date as a recursive component grows); an atom
  that binds nothing new is a membership test;
* arithmetic and functors are :mod:`analyzer.datalog.functors`' (32-bit wrap-around, ``/`` and
  ``%`` truncating toward zero; a zero divisor makes the rule instance not fire, as in
  clingo); ``to_number`` of a non-number raises :class:`~analyzer.datalog.functors.FunctorError`;
* an aggregate ``v = op t : { body }`` collects the distinct bindings of its local variables
  (:func:`analyzer.datalog.normalize.aggregate_locals`, wildcards of its positive atoms named
  first): ``count`` is their number, ``sum`` the wrapped sum of ``t`` over them, ``min``/``max``
  derive nothing over no binding (Soufflé; the clingo translation guards ``#sup``/``#inf``
  for the same result).

Runaway rules stop with an error naming the rule (:class:`DerivationLimit`,
:mod:`analyzer.engines.limits`): a run derives at
most ``max(MAX_DERIVED_ROWS, ROWS_PER_FACT x input rows)`` rows, a recursive component
completes in at most ``max(MAX_ROUNDS, input rows)`` rounds, and ``cat`` builds at most
:data:`MAX_SYMBOL_CHARS` characters of new symbols in a run, and a run takes at most
``$SHARDLOG_ENGINE_SECONDS`` (default 600). A rule whose head builds new
values from derived ones (``Holds(cat(s, "x"), k, a, p) :- Holds(s, k, a, p).``, or ``N(x + 1)
:- N(x).``) derives forever otherwise. The bundled library derives 1-2.2 rows per input row in
at most ~3,200 rounds (``examples/mixtral_ep2_adamw``: 108,459 rows from 49,859, 3,209 rounds)
and builds ~15,000 characters. The limits are checked after each rule's evaluation, so one
join (bounded by the product of its atoms' sizes) is not cut short.

The golden conformance suite (``tests/rules/``) and tests/test_engines.py compare it with
clingo on every case, and tests/test_fast_paths.py on every bundled example's derived
relations. It is the default because the GraphGuard checks are small: on Qwen2 TP-2
(3,600 fact rows, ~3,000 derived rows) clingo spends most of its time on fixed costs
(~12 ms to import, ~7 ms to parse the rules, ~16 ms of grounding per run on no facts,
~3.5 us to parse each fact); see docs/benchmarks.md for the measured comparison.
"""

from __future__ import annotations

import marshal
import operator
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from analyzer.datalog.errors import DatalogError
from analyzer.datalog.strata import strata
from analyzer.datalog.syntax import Atom, BinOp, Call, Program
from analyzer.engines.base import Engine, finish_outputs, validate_facts
from analyzer.engines.limits import (
    MAX_DERIVED_ROWS,
    MAX_ROUNDS,
    MAX_SYMBOL_CHARS,
    ROWS_PER_FACT,
    DerivationLimit,
    OverBudget,
    limit_error,
)
from analyzer.engines.limits import Budget as _Budget
from analyzer.engines.seminaive_codegen import RUNTIME, key_columns, rule_source
from analyzer.speedups.relevance import kept_on_facts, program_shapes

__all__ = [
    "MAX_DERIVED_ROWS",
    "MAX_ROUNDS",
    "MAX_SYMBOL_CHARS",
    "ROWS_PER_FACT",
    "DerivationLimit",
    "SemiNaiveEngine",
    "program_source",
]

class SemiNaiveEngine(Engine):
    """Evaluate with rules compiled to Python (embedded, no dependency; the default)."""

    name = "seminaive"
    graph_copies = False  # the driver hands every graph's facts
    #: leave out rules that cannot change an output on the given facts (:mod:`analyzer.speedups.relevance`);
    #: off only to compare against the whole program (tests)
    prune = True

    @classmethod
    def prepare(cls, program: Program) -> None:
        """Compile ``program`` now and keep the code and the rule shapes the pruning reads on it
        (see :func:`_plan`; a cached program is then run without unpickling its rules)."""
        _plan(program)
        program_shapes(program)

    def run(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
        """Evaluate ``program`` over ``facts`` to its least model.

        Args:
            program: A checked, stratified program.
            facts: Relation name -> tuples (the EDB).

        Returns:
            Every output relation as a sorted list of tuples.

        Raises:
            DatalogError: On facts that do not fit their declarations, or a functor error
                (e.g. ``to_number("x")``).
        """
        plan = _plan(program)
        facts = _lists(facts)
        rows = validate_facts(program, facts)
        for fact in program.facts:
            rows.setdefault(fact.relation, set()).add(fact.values)
        kept = set(kept_on_facts(program, facts)) if self.prune else None
        store = _Store(rows)
        code = plan.functions()
        budget = _Budget(sum(len(r) for r in facts.values()))
        code.set_cat(budget.cat)
        for comp in plan.components:
            _solve(comp, code, store, kept, budget, program)
        return finish_outputs(program, store.rows)


# ---------------------------------------------------------------------------------------
# Evaluation


class _Store:
    """Every relation's rows (a set of tuples each) and the hash indexes rules asked for.

    ``index["Rel:0,2"]`` maps the values of columns 0 and 2 of ``Rel`` (one value for one
    column, else a tuple, in column order) to the rows holding them; ``keys["Rel:0,2"]`` is
    the set of those values. Both are built on first use and updated by :meth:`add`. (The
    generated code names them by string: a string's hash is cached, a tuple's is not.)
    """

    def __init__(self, rows: dict[str, set[tuple]]) -> None:
        self.rows: defaultdict[str, set[tuple]] = defaultdict(set, rows)
        self.index = _Built(self._index)
        self.keys = _Built(self._keys)
        self._of: defaultdict[str, list] = defaultdict(list)  # rel -> [(key fn, index or key set)]

    def _index(self, name: str) -> dict:
        rel, key = _key_of(name)
        found: dict = {}
        _grouped(found, key, self.rows[rel])
        self._of[rel].append((key, found))
        return found

    def _keys(self, name: str) -> set:
        rel, key = _key_of(name)
        found = set(map(key, self.rows[rel]))
        self._of[rel].append((key, found))
        return found

    def add(self, rel: str, new: set[tuple]) -> None:
        """Add rows not yet in ``rel`` (``new`` is disjoint from its rows)."""
        self.rows[rel] |= new
        for key, found in self._of.get(rel, ()):
            if isinstance(found, set):
                found.update(map(key, new))
            else:
                _grouped(found, key, new)


def _grouped(index: dict, key, rows: Iterable[tuple]) -> None:
    """Add ``rows`` to ``index`` under their ``key`` (a plain dict: ~25% faster to fill than a
    ``defaultdict(list)``, and ``.get(k, ())`` is what the generated code reads)."""
    for k, row in zip(map(key, rows), rows):
        group = index.get(k)
        if group is None:
            index[k] = [row]
        else:
            group.append(row)


class _Built(dict):
    """A dict that builds a missing entry with ``make(name)``."""

    def __init__(self, make) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, name: str):
        made = self[name] = self._make(name)
        return made


def _key_of(name: str):
    """``"Rel:0,2"`` -> (``"Rel"``, the function giving a row's values in those columns)."""
    rel, _, cols = name.rpartition(":")
    return rel, operator.itemgetter(*map(int, cols.split(",")))


def _solve(comp: _Component, code: dict, store: _Store, kept: set[int] | None, budget: _Budget, program) -> None:
    """Complete one component (module docstring)."""
    rows, index, keys = store.rows, store.index, store.keys
    todo = [r for r in comp.rules if kept is None or r.index in kept]
    out: defaultdict[str, set[tuple]] = defaultdict(set)
    for rule in todo:
        _call(code, rule.full, rule.index, program, rows, index, keys, None, out)
    delta = _added(out, store)
    _spend(budget, delta, comp, todo, program)
    if not comp.recursive:
        return
    reading: defaultdict[str, list] = defaultdict(list)  # relation -> the variants reading its delta
    for rule in todo:
        for fn, rel in rule.deltas:
            reading[rel].append((fn, rule.index))
    rounds = 0
    while delta:
        rounds += 1
        if rounds > budget.rounds:
            raise _limit(program, _grown_rule(comp, todo, delta, program), f"over {budget.rounds:,} rounds")
        given = {rel: list(new) for rel, new in delta.items()}
        out = defaultdict(set)
        for rel in given:
            for fn, i in reading.get(rel, ()):
                _call(code, fn, i, program, rows, index, keys, given, out)
        delta = _added(out, store)
        _spend(budget, delta, comp, todo, program)


def _call(code: dict, fn: str, rule_index: int, program, *args) -> None:
    """Run one rule function; a functor error or a limit met inside it names the rule."""
    try:
        code[fn](*args)
    except OverBudget as exc:
        raise _limit(program, rule_index, exc.what) from None
    except DatalogError as exc:  # a functor error (to_number("x")): say which rule
        rule = program.rules[rule_index]
        raise DatalogError(f"{exc.message} (in the rule deriving {rule.head.relation})", rule.loc) from None


def _spend(budget: _Budget, delta: Mapping[str, set], comp: _Component, todo, program) -> None:
    try:
        budget.spend(sum(len(new) for new in delta.values()))
    except OverBudget as exc:
        raise _limit(program, _grown_rule(comp, todo, delta, program), exc.what) from None


def _grown_rule(comp: _Component, todo, delta: Mapping[str, set], program) -> int:
    """The rule to blame for the last round's growth: one deriving the relation that grew most,
    one whose head builds a value (a functor or arithmetic) first."""
    grown = max(delta, key=lambda rel: len(delta[rel])) if delta else None
    candidates = [r.index for r in todo if program.rules[r.index].head.relation == grown] or [r.index for r in todo]
    builds = [i for i in candidates if any(isinstance(t, (Call, BinOp)) for t in program.rules[i].head.args)]
    return (builds or candidates)[0]


def _limit(program, rule_index: int, what: str) -> DerivationLimit:
    return limit_error("seminaive", program, rule_index, what)


def _added(out: Mapping[str, set[tuple]], store: _Store) -> dict[str, set[tuple]]:
    """Add the rows of ``out`` to the store; the ones that were new, by relation (none empty)."""
    delta = {}
    for rel, derived in out.items():
        new = derived - store.rows[rel]
        if new:
            store.add(rel, new)
            delta[rel] = new
    return delta


def _lists(facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
    return {name: rows if isinstance(rows, list) else list(rows) for name, rows in facts.items()}


# ---------------------------------------------------------------------------------------
# The compiled program


# Named tuples, not dataclasses: the plan is unpickled by every check (a tuple is rebuilt
# faster than an object's __dict__) and the module is imported by every check.
class _CompiledRule(NamedTuple):
    index: int  # in program.rules
    full: str  # the function reading every row of every atom
    deltas: tuple[tuple[str, str], ...]  # (function, relation) per recursive atom, which reads the delta


class _Component(NamedTuple):
    relations: tuple[str, ...]
    recursive: bool
    rules: tuple[_CompiledRule, ...]


class _Plan:
    """A program's components in evaluation order and the code of their rules: per function,
    the marshal bytes of a compiled module defining it, loaded when a run first calls it (a
    check calls about half of them: the rest are left out by the pruning). ``python`` names
    the interpreter and plan format the bytes are for (see :func:`_made_here`)."""

    def __init__(self, components: tuple[_Component, ...], code: dict[str, bytes], python: str) -> None:
        self.components = components
        self.code = code
        self.python = python

    def functions(self) -> _Functions:
        """The rule functions by name (each module executed once per plan object)."""
        made = self.__dict__.get("_functions")
        if made is None:
            made = self.__dict__["_functions"] = _Functions(self.code)
        return made

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_functions"}


class _Functions(dict):
    """Rule functions by name, each made from its marshal bytes on first use."""

    def __init__(self, code: dict[str, bytes]) -> None:
        super().__init__()
        self._code = code
        self._globals = dict(RUNTIME)

    def set_cat(self, cat) -> None:
        """The ``cat`` the rule functions call (a run's :meth:`_Budget.cat`)."""
        self._globals["_cat"] = cat

    def __missing__(self, name: str):
        exec(marshal.loads(self._code[name]), self._globals)  # noqa: S102 - our generated source (rule_source)
        made = self[name] = self._globals[name]
        return made


def _plan(program: Program) -> _Plan:
    """The compiled program, kept on it (:meth:`~analyzer.datalog.syntax.Program.kept`: once per
    program object, and pickled with it by the program cache); made again when the kept one was
    compiled by another Python or plan format."""
    return program.kept("_seminaive_plan", _make_plan, _current)


def _current(plan: object) -> bool:
    return isinstance(plan, _Plan) and plan.python == _made_here()


def program_source(program: Program) -> str:
    """The Python source of every rule function of ``program`` (to read what a rule compiles to).

    Args:
        program: A checked program.

    Returns:
        The functions' source, in evaluation order.
    """
    return "\n".join(source for _, source in _sources(program)[1])


def _sources(program: Program) -> tuple[list[_Component], list[tuple[str, str]]]:
    by_head: dict[str, list[int]] = defaultdict(list)
    for i, rule in enumerate(program.rules):
        by_head[rule.head.relation].append(i)
    sources: list[tuple[str, str]] = []
    components = []
    keys = key_columns(program)
    for relations in strata(program):
        members = set(relations)
        compiled = []
        recursive = False
        for i in sorted(i for rel in relations for i in by_head.get(rel, ())):
            rule = program.rules[i]
            sources.append((f"r{i}", rule_source(rule, f"r{i}", keys=keys)))
            deltas = []
            for j, lit in enumerate(rule.body):
                if isinstance(lit, Atom) and lit.relation in members:
                    recursive = True
                    sources.append((f"r{i}_d{j}", rule_source(rule, f"r{i}_d{j}", delta=j, keys=keys)))
                    deltas.append((f"r{i}_d{j}", lit.relation))
            compiled.append(_CompiledRule(i, f"r{i}", tuple(deltas)))
        if compiled:
            components.append(_Component(tuple(relations), recursive, tuple(compiled)))
    return components, sources


def _make_plan(program: Program) -> _Plan:
    components, sources = _sources(program)
    code = {name: marshal.dumps(compile(text, f"<rule {name}>", "exec")) for name, text in sources}
    return _Plan(tuple(components), code, _made_here())


_PLAN_FORMAT = "4"  # change it when _Plan or the generated code's conventions change


def _made_here() -> str:
    """What a kept plan must have been made by: marshal bytes differ between Python versions."""
    return f"{sys.version} / plan {_PLAN_FORMAT}"
