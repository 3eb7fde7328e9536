"""An embedded engine that compiles each rule to a Python function and evaluates the program
bottom-up, semi-naively, one strongly connected component at a time.

This is the textbook evaluation of stratified Datalog (Abiteboul, Hull and Vianu,
*Foundations of Databases*, ch. 13 and 15; Soufflé does the same, compiled to C++): the
relations are grouped into components lowest first (:func:`analyzer.dl.strata.strata`);
a component's rules run once over the complete lower components and, when the component is
recursive, again for every round of new rows, each rule once per recursive body atom with
that atom reading only the previous round's new rows (the *delta*) and the others every row
so far; the component is complete when a round adds nothing. Negated atoms and aggregates
read lower components only (the program is stratified), so they see complete relations.

Each rule becomes Python source with one nested loop per positive atom, compiled once per
program (:func:`_plan`; the code object is kept on the program, which the driver's program
cache pickles, as marshal bytes):

* the atoms are joined in a greedy order: next a membership test if one is ready, else the
  atom with the most bound node or value names (:data:`KEY_TYPES`), then the most known
  arguments, ties in the rule's order; every comparison, assignment, negation and aggregate
  comes as soon as its variables are bound. (Counting constants and ranks as well as names
  once ordered a rule of ``rules/parallel/expert_backward.dl`` into a cross product of every
  replicated piece with every Mul node: 114 s on ``examples/mixtral_ep2_adamw``, now 0.5 s);
* an atom with known arguments is read through a hash index on those columns (built the
  first time a rule asks for it, kept up to date as a recursive component grows); an atom
  that binds nothing new is a membership test;
* arithmetic and functors are :mod:`analyzer.dl.functors`' (32-bit wrap-around, ``/`` and
  ``%`` truncating toward zero; a zero divisor makes the rule instance not fire, as in
  clingo); ``to_number`` of a non-number raises :class:`~analyzer.dl.functors.FunctorError`;
* an aggregate ``v = op t : { body }`` collects the distinct bindings of its local variables
  (:func:`analyzer.dl.normalize.aggregate_locals`, wildcards of its positive atoms named
  first): ``count`` is their number, ``sum`` the wrapped sum of ``t`` over them, ``min``/``max``
  derive nothing over no binding (Soufflé; the clingo translation guards ``#sup``/``#inf``
  for the same result).

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
import weakref
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from analyzer.dl import functors
from analyzer.dl.checks import INT_MAX, INT_MIN
from analyzer.dl.errors import DatalogError
from analyzer.dl.normalize import aggregate_locals, lift_expressions, name_aggregate_wildcards
from analyzer.dl.strata import strata
from analyzer.dl.syntax import (
    Aggregate,
    Atom,
    BinOp,
    BodyLiteral,
    Call,
    Const,
    Constraint,
    Decl,
    Negation,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
    body_vars,
    term_vars,
)
from analyzer.engines.base import Engine, check_rows, finish_outputs
from analyzer.engines.relevance import kept_on_facts, program_shapes

__all__ = ["KEY_TYPES", "SemiNaiveEngine", "key_columns", "program_source", "rule_source"]


class SemiNaiveEngine(Engine):
    """Evaluate with rules compiled to Python (embedded, no dependency; the default)."""

    name = "seminaive"
    graph_copies = False  # the driver hands every graph's facts
    #: leave out rules that cannot change an output on the given facts (:mod:`analyzer.engines.relevance`);
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
        rows = _checked_facts(program, facts)
        for fact in program.facts:
            rows.setdefault(fact.relation, set()).add(fact.values)
        kept = set(kept_on_facts(program, facts)) if self.prune else None
        store = _Store(rows)
        code = plan.functions()
        for comp in plan.components:
            _solve(comp, code, store, kept)
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


def _solve(comp: _Component, code: dict, store: _Store, kept: set[int] | None) -> None:
    """Complete one component (module docstring)."""
    rows, index, keys = store.rows, store.index, store.keys
    todo = [r for r in comp.rules if kept is None or r.index in kept]
    out: defaultdict[str, set[tuple]] = defaultdict(set)
    for rule in todo:
        code[rule.full](rows, index, keys, None, out)
    delta = _added(out, store)
    if not comp.recursive:
        return
    reading: defaultdict[str, list] = defaultdict(list)  # relation -> the variants reading its delta
    for rule in todo:
        for fn, rel in rule.deltas:
            reading[rel].append(code[fn])
    while delta:
        given = {rel: list(new) for rel, new in delta.items()}
        out = defaultdict(set)
        for rel in given:
            for fn in reading.get(rel, ()):
                fn(rows, index, keys, given, out)
        delta = _added(out, store)


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


def _checked_facts(program: Program, facts: Mapping[str, list[tuple]]) -> dict[str, set[tuple]]:
    """The EDB as sets of tuples, checked against the declarations column by column (the
    rows of a relation that fails the quick test are checked one by one by
    :func:`~analyzer.engines.base.check_rows` for its message and ``int`` conversion)."""
    out: dict[str, set[tuple]] = {}
    for name, given in facts.items():  # lists
        decl = program.decls.get(name)
        if decl is None:
            raise DatalogError(f"facts given for undeclared relation {name}")
        out[name] = set(given) if _plain(decl, given) else _converted(decl, given)
    return out


def _plain(decl: Decl, rows: list) -> bool:
    """Every row a tuple of ``decl``'s arity, with exact ``str``/``int`` columns, numbers in 32 bits."""
    if not rows:
        return True
    if set(map(type, rows)) != {tuple} or set(map(len, rows)) != {decl.arity}:
        return False
    for col, kind in zip(zip(*rows), decl.base_types):
        if kind == "number":
            if set(map(type, col)) != {int} or min(col) < INT_MIN or max(col) > INT_MAX:
                return False
        elif set(map(type, col)) != {str}:
            return False
    return True


def _converted(decl: Decl, rows: list) -> set[tuple]:
    checked = check_rows(decl, rows)
    if "number" in decl.base_types:
        checked = {tuple(int(v) if isinstance(v, int) else v for v in row) for row in checked}
    return checked


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
        self._globals = dict(_RUNTIME)

    def __missing__(self, name: str):
        exec(marshal.loads(self._code[name]), self._globals)  # noqa: S102 - our generated source (rule_source)
        made = self[name] = self._globals[name]
        return made


_ATTR = "_seminaive_plan"  # where _plan keeps its result on the program (pickled with it)
_PLANS: dict[int, tuple[weakref.ref, tuple, _Plan]] = {}


def _plan(program: Program) -> _Plan:
    """The compiled program, made once per program object (a program is not changed after it
    is loaded; its sizes are compared to be safe) and kept on it; made again when the kept one
    was compiled by another Python."""
    sig = (len(program.rules), len(program.facts), len(program.outputs), len(program.decls))
    hit = _PLANS.get(id(program))
    if hit is not None and hit[0]() is program and hit[1] == sig:
        return hit[2]
    kept = program.__dict__.get(_ATTR)
    if kept is not None and kept[0] == sig and isinstance(kept[1], _Plan) and kept[1].python == _made_here():
        plan = kept[1]
    else:
        plan = _make_plan(program)
        program.__dict__[_ATTR] = (sig, plan)
    for key in [k for k, (ref, _, _) in _PLANS.items() if ref() is None]:
        del _PLANS[key]
    _PLANS[id(program)] = (weakref.ref(program), sig, plan)
    return plan


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


# ---------------------------------------------------------------------------------------
# Code generation


class _NoValue(Exception):
    """A zero divisor: the rule instance does not fire."""


def _div(a: int, b: int) -> int:
    q = functors.div32(a, b)
    if q is None:
        raise _NoValue
    return q


def _mod(a: int, b: int) -> int:
    r = functors.mod32(a, b)
    if r is None:
        raise _NoValue
    return r


_RUNTIME = {
    "_w32": functors.wrap32,
    "_div": _div,
    "_mod": _mod,
    "_NoValue": _NoValue,
    "_ONCE": (0,),
    "_cat": functors.cat,
    "_to_string": functors.to_string,
    "_to_number": functors.to_number,
    "_strlen": functors.strlen,
    "__builtins__": {"len": len, "sum": sum, "min": min, "max": max, "set": set},
}
_MAX_LOOPS = 15  # nested loops per generated function before a continuation (see _RuleWriter.split)
_FUNCTORS = {"cat": "_cat", "to_string": "_to_string", "to_number": "_to_number", "strlen": "_strlen"}


def rule_source(rule: Rule, name: str, delta: int | None = None, keys: Collection[tuple[str, int]] = ()) -> str:
    """Python source of a function evaluating ``rule``.

    The function is ``name(rows, index, keys, delta_rows, out)``: ``rows`` maps every relation
    to its set of tuples, ``index``/``keys`` are :class:`_Store`'s, ``delta_rows`` maps a
    relation to the previous round's new rows and ``out`` a head relation to the set the
    derived tuples go into.

    Args:
        rule: A normalised rule of a checked program.
        name: The function's name.
        delta: Position in ``rule.body`` of the atom that reads ``delta_rows``, or None.
        keys: ``(relation, column)`` pairs whose values pick out few rows (:func:`key_columns`);
            a bound one weighs most when the atoms are ordered.

    Returns:
        The source text (a ``def``).

    Raises:
        DatalogError: If a literal can never have its variables bound (not a safe rule).
    """
    rule = name_aggregate_wildcards(lift_expressions(rule, head=True))
    return _RuleWriter(rule, name, delta, frozenset(keys)).source()


#: Declared types whose values are identifiers (a house convention of schemas/: node and value
#: names); an atom with a bound column of such a type matches few rows.
KEY_TYPES = frozenset({"NodeId", "ValueId"})


def key_columns(program: Program) -> frozenset[tuple[str, int]]:
    """The ``(relation, column)`` pairs of ``program`` whose declared type is in :data:`KEY_TYPES`.

    The join order uses them in place of statistics, which a plan compiled once per program
    does not have: a bound graph name, rank, axis or layout kind leaves many rows, a bound
    node or value name few.

    Args:
        program: A checked program.

    Returns:
        The pairs.
    """
    columns = ((name, i, t) for name, decl in program.decls.items() for i, (_, t) in enumerate(decl.columns))
    return frozenset((name, i) for name, i, t in columns if t in KEY_TYPES)


def _vars(lit: BodyLiteral) -> set[str]:
    return {v.name for v in body_vars((lit,))}


class _RuleWriter:
    def __init__(self, rule: Rule, name: str, delta: int | None, keys: frozenset[tuple[str, int]]) -> None:
        self.rule = rule
        self.keys = keys
        self.name = name
        self.delta = delta
        self.lines: list[str] = []
        self.depth = 1
        self.loops = 0  # open for loops: a failed test skips to the next row, or returns before any
        self.prelude: dict[str, str] = {}  # local name -> expression, bound at the top
        self.early: list[str] = []  # relations whose emptiness means no instance
        self.temp = 0
        self.parts: list[list[str]] = []  # continuation functions (see split)

    # -- output

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def loop(self, text: str) -> None:
        self.emit(text)
        self.depth += 1
        self.loops += 1

    def require(self, cond: str) -> None:
        """Go on only where ``cond`` holds (tests do not nest: Python allows 20 nested blocks)."""
        self.emit(f"if not ({cond}): {'continue' if self.loops else 'return'}")

    def local(self, expr: str, stem: str) -> str:
        for known, e in self.prelude.items():
            if e == expr:
                return known
        name = f"{stem}{len(self.prelude)}"
        self.prelude[name] = expr
        return name

    def fresh(self) -> str:
        self.temp += 1
        return f"_x{self.temp}"

    def source(self) -> str:
        rule = self.rule
        body = list(enumerate(rule.body))
        bound: set[str] = set()
        first = None
        if self.delta is not None:
            first = self.delta
            atom = rule.body[first]
            self.atom(atom, bound, source=f"delta[{atom.relation!r}]")
            body = [(i, lit) for i, lit in body if i != first]
        self.early = [lit.relation for _, lit in body if isinstance(lit, Atom)]
        self.join(body, bound, self.head)
        top = [f"def {self.name}(rows, index, keys, delta, out):"]
        for rel in dict.fromkeys(self.early):
            top.append(f"    if not rows[{rel!r}]:")
            top.append("        return")
        top += [f"    {k} = {v}" for k, v in self.prelude.items()]
        top += [line for part in self.parts for line in part]
        return "\n".join(top + self.lines) + "\n"

    def head(self, bound: set[str]) -> None:
        args = ", ".join(self.term(a, bound) for a in self.rule.head.args)
        out = self.local(f"out[{self.rule.head.relation!r}].add", "_o")
        self.emit(f"{out}(({args}{',' if len(self.rule.head.args) == 1 else ''}))")

    # -- joins

    def join(self, pending: list[tuple[int, BodyLiteral]], bound: set[str], then) -> None:
        """Emit the literals ``pending`` in a greedy order, then ``then(bound)`` innermost."""
        pending = list(pending)
        while True:
            tests = ((i, lit) for i, lit in pending if not isinstance(lit, Atom))
            ready = next(((i, lit) for i, lit in tests if self.ready(i, lit, bound)), None)
            if ready is not None:
                pending.remove(ready)
                self.literal(ready[0], ready[1], bound)
                continue
            atoms = [(i, lit) for i, lit in pending if isinstance(lit, Atom)]
            if not atoms:
                break
            if self.loops >= _MAX_LOOPS:
                self.split(pending, bound, then)
                return
            best = max(atoms, key=lambda item: self.score(item[0], item[1], bound))
            pending.remove(best)
            self.atom(best[1], bound)
        if pending:
            literal = pending[0][1]
            raise DatalogError(f"rule cannot be evaluated: {literal} never has its variables bound", self.rule.loc)
        then(bound)

    def split(self, pending: list[tuple[int, BodyLiteral]], bound: set[str], then) -> None:
        """Go on in a continuation function taking the bound variables (Python allows 20 nested
        blocks in one function; the longest rules of the library join more atoms than that)."""
        name = f"_c{len(self.parts)}"
        params = ", ".join(f"v_{v}" for v in sorted(bound))
        self.emit(f"{name}({params})")
        saved = self.lines, self.depth, self.loops
        self.lines, self.depth, self.loops = [], 2, 0
        self.join(pending, bound, then)
        self.parts.append([f"    def {name}({params}):", *self.lines])
        self.lines, self.depth, self.loops = saved

    def score(self, position: int, atom: Atom, bound: set[str]) -> tuple:
        """Which atom to join next (the highest): a membership test (no new variable), then the
        most bound identifier columns (:func:`key_columns`), the most known arguments, the
        rule's order."""
        known = [isinstance(a, Const) or (isinstance(a, Var) and a.name in bound) for a in atom.args]
        test = all(k or isinstance(a, Wildcard) for k, a in zip(known, atom.args))
        ids = sum(1 for i, k in enumerate(known) if k and (atom.relation, i) in self.keys)
        return test, ids, sum(known), -position

    def ready(self, i: int, lit: BodyLiteral, bound: set[str]) -> bool:
        if isinstance(lit, Negation):
            return _vars(lit) <= bound
        assert isinstance(lit, Constraint)
        if isinstance(lit.right, Aggregate):
            local = set(aggregate_locals(self.rule, i))
            return (_vars(lit) - local - _names(lit.left)) <= bound
        left, right = _names(lit.left), _names(lit.right)
        if lit.op == "=":
            if isinstance(lit.left, Var) and lit.left.name not in bound and right <= bound:
                return True
            if isinstance(lit.right, Var) and lit.right.name not in bound and left <= bound:
                return True
        return (left | right) <= bound

    def atom(self, atom: Atom, bound: set[str], source: str | None = None) -> None:
        """A positive atom: loop over its matching rows (or test one), binding its new variables."""
        rel = atom.relation
        key_cols, key_vals, free, checks = [], [], [], []
        seen: set[str] = set()
        for col, arg in enumerate(atom.args):
            if isinstance(arg, Const):
                key_cols.append(col)
                key_vals.append(repr(arg.value))
            elif isinstance(arg, Var) and arg.name in bound:
                key_cols.append(col)
                key_vals.append(f"v_{arg.name}")
            elif isinstance(arg, Var) and arg.name in seen:
                checks.append(f"_t[{col}] == v_{arg.name}")
            elif isinstance(arg, Var):
                seen.add(arg.name)
                free.append((col, arg.name))
        row = self.fresh()
        if source is not None:  # the delta atom, first: filter its rows on the constants
            self.loop(f"for {row} in {source}:")
            conds = [f"{row}[{c}] == {v}" for c, v in zip(key_cols, key_vals)]
            if conds:
                self.require(" and ".join(conds))
            self.unpack(row, free, atom.args)
            if checks:  # a variable repeated in the atom: its later columns equal the first
                self.require(" and ".join(c.replace("_t[", f"{row}[") for c in checks))
            bound.update(name for _, name in free)
            return
        key = key_vals[0] if len(key_vals) == 1 else f"({', '.join(key_vals)})"
        if not free and not checks:
            if len(key_cols) == len(atom.args):
                test = f"{key}{',' if len(key_vals) == 1 else ''}"
                self.require(f"({test}) in {self.local(f'rows[{rel!r}]', '_s')}")
            elif key_cols:
                self.require(f"{key} in {self.local(f'keys[{_index_name(rel, key_cols)!r}]', '_k')}")
            else:
                self.require(self.local(f"rows[{rel!r}]", "_s"))
            return
        if key_cols:
            self.loop(f"for {row} in {self.local(f'index[{_index_name(rel, key_cols)!r}]', '_i')}.get({key}, ()):")
        else:
            self.loop(f"for {row} in {self.local(f'rows[{rel!r}]', '_s')}:")
        self.unpack(row, free, atom.args)
        if checks:
            self.require(" and ".join(c.replace("_t[", f"{row}[") for c in checks))
        bound.update(name for _, name in free)

    def unpack(self, row: str, free: list[tuple[int, str]], args: tuple) -> None:
        if not free:
            return
        if len(free) == 1:
            col, name = free[0]
            self.emit(f"v_{name} = {row}[{col}]")
            return
        names = dict(free)
        targets = [f"v_{names[c]}" if c in names else "_" for c in range(len(args))]
        self.emit(f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = {row}")

    def literal(self, i: int, lit: BodyLiteral, bound: set[str]) -> None:
        if isinstance(lit, Negation):
            self.negation(lit.atom, bound)
        elif isinstance(lit.right, Aggregate):
            self.aggregate(i, lit, bound)
        else:
            self.constraint(lit, bound)

    def negation(self, atom: Atom, bound: set[str]) -> None:
        rel = atom.relation
        cols = [c for c, a in enumerate(atom.args) if not isinstance(a, Wildcard)]
        vals = [self.term(atom.args[c], bound) for c in cols]
        if len(cols) == len(atom.args):
            test = f"({', '.join(vals)}{',' if len(vals) == 1 else ''})"
            self.require(f"{test} not in {self.local(f'rows[{rel!r}]', '_s')}")
        elif cols:
            key = vals[0] if len(vals) == 1 else f"({', '.join(vals)})"
            self.require(f"{key} not in {self.local(f'keys[{_index_name(rel, cols)!r}]', '_k')}")
        else:
            self.require(f"not {self.local(f'rows[{rel!r}]', '_s')}")

    def constraint(self, lit: Constraint, bound: set[str]) -> None:
        if lit.op == "=":
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, Var) and var.name not in bound:
                    self.assign(f"v_{var.name}", expr, bound)
                    bound.add(var.name)
                    return
        left = self.value(lit.left, bound)
        right = self.value(lit.right, bound)
        op = "==" if lit.op == "=" else lit.op
        self.require(f"{left} {op} {right}")

    def value(self, term: Term, bound: set[str]) -> str:
        """An expression for ``term``; one that may divide by zero is computed into a temporary first."""
        if not _divides(term):
            return self.term(term, bound)
        tmp = self.fresh()
        self.assign(tmp, term, bound)
        return tmp

    def assign(self, target: str, term: Term, bound: set[str]) -> None:
        expr = self.term(term, bound)
        if not _divides(term):
            self.emit(f"{target} = {expr}")
            return
        self.emit("try:")
        self.emit(f"    {target} = {expr}")
        self.emit("except _NoValue:")
        self.emit(f"    {'continue' if self.loops else 'return'}")

    def term(self, term: Term, bound: set[str]) -> str:
        if isinstance(term, Const):
            return repr(term.value)
        if isinstance(term, Var):
            if term.name not in bound:
                raise DatalogError(f"variable {term.name} is used before it is bound", term.loc)
            return f"v_{term.name}"
        if isinstance(term, BinOp):
            a, b = self.term(term.left, bound), self.term(term.right, bound)
            if term.op == "/":
                return f"_div({a}, {b})"
            if term.op == "%":
                return f"_mod({a}, {b})"
            return f"_w32({a} {term.op} {b})"
        if isinstance(term, Call):
            return f"{_FUNCTORS[term.name]}({', '.join(self.term(a, bound) for a in term.args)})"
        raise DatalogError(f"cannot evaluate {term!r} here", getattr(term, "loc", None))

    def aggregate(self, i: int, lit: Constraint, bound: set[str]) -> None:
        """``v = op target : { body }`` (module docstring)."""
        agg = lit.right
        assert isinstance(agg, Aggregate)
        local = aggregate_locals(self.rule, i)
        acc = self.fresh()
        self.emit(f"{acc} = {'set()' if agg.op == 'count' else '{}'}")
        depth, loops = self.depth, self.loops
        self.loop("for _ in _ONCE:")  # a failed test in the body ends the collection, not the rule
        inner = set(bound)
        names = ", ".join(f"v_{n}" for n in local)
        tuple_text = f"({names}{',' if len(local) == 1 else ''})"

        def collect(have: set[str]) -> None:
            if agg.op == "count":
                self.emit(f"{acc}.add({tuple_text})")
            else:
                self.emit(f"{acc}[{tuple_text}] = {self.value(agg.target, have)}")

        self.join(list(enumerate(agg.body)), inner, collect)
        self.depth, self.loops = depth, loops
        value = self.fresh()
        if agg.op == "count":
            self.emit(f"{value} = len({acc})")
        elif agg.op == "sum":
            self.emit(f"{value} = _w32(sum({acc}.values()))")
        else:
            self.require(acc)
            self.emit(f"{value} = {agg.op}({acc}.values())")
        if isinstance(lit.left, Var) and lit.left.name not in bound:
            self.emit(f"v_{lit.left.name} = {value}")
            bound.add(lit.left.name)
        else:
            self.require(f"{self.term(lit.left, bound)} == {value}")


def _index_name(rel: str, cols: list[int]) -> str:
    return f"{rel}:{','.join(map(str, cols))}"


def _names(term: Term) -> set[str]:
    return {v.name for v in term_vars(term)}


def _divides(term: Term) -> bool:
    if isinstance(term, BinOp):
        return term.op in "/%" or _divides(term.left) or _divides(term.right)
    if isinstance(term, Call):
        return any(_divides(a) for a in term.args)
    return False
