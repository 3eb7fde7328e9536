"""Code generation for the seminaive engine (:mod:`analyzer.engines.seminaive_engine`): one
Python function per rule, or per rule and recursive body atom (the delta variants).

A generated function is ``name(rows, index, keys, delta, out)`` and holds one nested loop per
positive atom, in a greedy join order (:meth:`_RuleWriter.score`); tests, assignments,
negations and aggregates come as soon as their variables are bound, written as ``if not
(...): continue`` so that only loops nest (Python allows 20 nested blocks; a longer join goes
on in a continuation function). Arithmetic and functors are :mod:`analyzer.datalog.functors`';
a zero divisor makes the rule instance not fire.
"""

from __future__ import annotations

from collections.abc import Collection

from analyzer.datalog import functors
from analyzer.datalog.errors import DatalogError
from analyzer.datalog.normalize import (
    aggregate_locals,
    lift_expressions,
    name_aggregate_wildcards,
    ready_literal,
    rule_var_names,
)
from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    BinOp,
    BodyLiteral,
    Call,
    Const,
    Constraint,
    Negation,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
)

__all__ = ["KEY_TYPES", "RUNTIME", "key_columns", "rule_source"]


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


#: The globals the generated functions run with.
RUNTIME = {
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


def _is_aggregate(lit: BodyLiteral) -> bool:
    return isinstance(lit, Constraint) and isinstance(lit.right, Aggregate)


class _RuleWriter:
    def __init__(self, rule: Rule, name: str, delta: int | None, keys: frozenset[tuple[str, int]]) -> None:
        self.rule = rule
        self.keys = keys
        # the variables aggregates share with the rest of the rule (ready_literal's outer)
        local = (aggregate_locals(rule, i) for i, lit in enumerate(rule.body) if _is_aggregate(lit))
        self.outer = rule_var_names(rule).difference(*local)
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
            ready = next(((i, lit) for i, lit in pending if self.test_ready(lit, bound)), None)
            if ready is not None:
                pending.remove(ready)
                self.literal(ready[0], ready_literal(ready[1], bound, self.outer), bound)
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

    def test_ready(self, lit: BodyLiteral, bound: set[str]) -> bool:
        """A comparison, assignment, negation or aggregate that can be evaluated now."""
        return not isinstance(lit, Atom) and ready_literal(lit, bound, self.outer) is not None

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
        """A comparison, or an assignment (``ready_literal`` puts its variable on the left)."""
        if lit.op == "=" and isinstance(lit.left, Var) and lit.left.name not in bound:
            self.assign(f"v_{lit.left.name}", lit.right, bound)
            bound.add(lit.left.name)
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


def _divides(term: Term) -> bool:
    if isinstance(term, BinOp):
        return term.op in "/%" or _divides(term.left) or _divides(term.right)
    if isinstance(term, Call):
        return any(_divides(a) for a in term.args)
    return False
