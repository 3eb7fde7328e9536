"""Semantic checks of a parsed program: declarations, arity, types, safety, stratification.

The checks follow Soufflé's rules for the supported subset:

* every relation used is declared, with the declared arity;
* facts are constants of the column types; numbers fit in 32 bits (Soufflé's default
  ``number`` and clingo's integers are both 32-bit);
* a variable has one base type (``symbol`` or ``number``) per rule; arithmetic and the
  ordering comparisons ``< <= > >=`` are on numbers only;
* every variable of the head, of a negated atom, of a comparison or of an expression is
  grounded: bound by a positive atom, or by ``v = expr`` whose other side is grounded;
  variables shared between an aggregate and the rest of the rule are grounded outside it;
* ``_`` appears only as an atom argument (never in a head or an expression);
* no relation depends on itself through a negation or an aggregate.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from analyzer.datalog.errors import DatalogError, Loc
from analyzer.datalog.strata import check_stratified
from analyzer.datalog.syntax import (
    FUNCTORS,
    Aggregate,
    Atom,
    BaseType,
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

__all__ = ["INT_MAX", "INT_MIN", "check_program", "check_rule", "grounded_vars"]

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


def _type_of_value(value: str | int) -> BaseType:
    return "symbol" if isinstance(value, str) else "number"


def check_program(program: Program) -> None:
    """Run every check on ``program``.

    Args:
        program: The parsed program.

    Raises:
        DatalogError: At the first problem found.
    """
    for fact in program.facts:
        decl = _decl(program, fact.relation, fact.loc)
        if len(fact.values) != decl.arity:
            raise DatalogError(
                f"arity mismatch: {fact.relation} has {decl.arity} columns, the fact has {len(fact.values)}",
                fact.loc,
            )
        for i, (value, want) in enumerate(zip(fact.values, decl.base_types)):
            if _type_of_value(value) != want:
                raise DatalogError(
                    f"type mismatch: column {i + 1} ({decl.columns[i][0]}) of {fact.relation} is a {want}, "
                    f"the fact has {value!r}",
                    fact.loc,
                )
            _check_range(value, fact.loc)
    for rule in program.rules:
        check_rule(rule, program.decls)
    check_stratified(program.rules, program.decls)


def _decl(program: Program, name: str, loc: Loc) -> Decl:
    decl = program.decls.get(name)
    if decl is None:
        raise DatalogError(f"undeclared relation {name}", loc)
    return decl


def _check_range(value: str | int, loc: Loc) -> None:
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        raise DatalogError(f"number {value} does not fit in 32 bits", loc)


# ---------------------------------------------------------------------------------------


def _all_atoms(rule: Rule) -> Iterator[Atom]:
    yield rule.head
    yield from _body_atoms(rule.body)


def _body_atoms(body: Iterable[BodyLiteral]) -> Iterator[Atom]:
    for lit in body:
        if isinstance(lit, Atom):
            yield lit
        elif isinstance(lit, Negation):
            yield lit.atom
        else:
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    yield from _body_atoms(side.body)


def _subterms(term: Term) -> Iterator[Term]:
    yield term
    if isinstance(term, BinOp):
        yield from _subterms(term.left)
        yield from _subterms(term.right)
    elif isinstance(term, Call):
        for arg in term.args:
            yield from _subterms(arg)
    elif isinstance(term, Aggregate):
        if term.target is not None:
            yield from _subterms(term.target)
        for lit in term.body:
            for t in _literal_terms(lit):
                yield from _subterms(t)


def _literal_terms(lit: BodyLiteral) -> Iterator[Term]:
    if isinstance(lit, Atom):
        yield from lit.args
    elif isinstance(lit, Negation):
        yield from lit.atom.args
    else:
        yield lit.left
        yield lit.right


def check_rule(rule: Rule, decls: dict[str, Decl]) -> None:
    """Check one normalised rule against the declarations.

    Args:
        rule: The rule.
        decls: Declarations by relation name.

    Raises:
        DatalogError: On an undeclared relation, an arity mismatch, a misplaced wildcard or
            aggregate, an unknown functor, a type error or an ungrounded variable.
    """
    for atom in _all_atoms(rule):
        decl = decls.get(atom.relation)
        if decl is None:
            raise DatalogError(f"undeclared relation {atom.relation}", atom.loc)
        if len(atom.args) != decl.arity:
            raise DatalogError(
                f"arity mismatch: {atom.relation} has {decl.arity} columns, used with {len(atom.args)}",
                atom.loc,
            )
    _check_shapes(rule)
    _check_types(rule, decls)
    _check_safety(rule)


def _check_shapes(rule: Rule) -> None:
    """Wildcards only as atom arguments; known functors; aggregates only as ``v = agg``."""
    for arg in rule.head.args:
        for t in _subterms(arg):
            if isinstance(t, Wildcard):
                raise DatalogError(f"wildcard '_' in the head of {rule.head.relation}", t.loc)
    for lit in rule.body:
        _check_literal_shape(lit, top=True)


def _check_literal_shape(lit: BodyLiteral, *, top: bool) -> None:
    if isinstance(lit, (Atom, Negation)):
        atom = lit.atom if isinstance(lit, Negation) else lit
        for arg in atom.args:
            if not isinstance(arg, Wildcard):
                _check_expr_shape(arg)
        return
    for side in (lit.left, lit.right):
        if isinstance(side, Aggregate):
            if not top:
                raise DatalogError("unsupported construct: aggregate nested inside an aggregate", side.loc)
            if side.target is not None:
                _check_expr_shape(side.target)
            for inner in side.body:
                _check_literal_shape(inner, top=False)
        else:
            _check_expr_shape(side)


def _check_expr_shape(term: Term) -> None:
    for t in _subterms(term):
        if isinstance(t, Wildcard):
            raise DatalogError("wildcard '_' is only allowed as an atom argument", t.loc)
        if isinstance(t, Call):
            if t.name not in FUNCTORS:
                raise DatalogError(
                    f"unsupported construct: functor {t.name}(...) (supported: {', '.join(FUNCTORS)}); "
                    f"if {t.name} is a relation, it cannot be used inside an expression",
                    t.loc,
                )
            want = len(FUNCTORS[t.name][0])
            ok = len(t.args) >= want if t.name == "cat" else len(t.args) == want
            if not ok:
                raise DatalogError(
                    f"{t.name} takes {want}{' or more' if t.name == 'cat' else ''} arguments, got {len(t.args)}", t.loc
                )
        if isinstance(t, Const):
            _check_range(t.value, t.loc)
        if isinstance(t, Aggregate) and t is not term:
            raise DatalogError("unsupported construct: aggregate inside an expression", t.loc)


# ---------------------------------------------------------------------------------------
# Types


class _Types:
    def __init__(self) -> None:
        self.env: dict[str, BaseType] = {}
        self.changed = False

    def expect(self, term: Term, want: BaseType, why: str) -> None:
        if isinstance(term, Wildcard):
            return
        if isinstance(term, Var):
            have = self.env.get(term.name)
            if have is None:
                self.env[term.name] = want
                self.changed = True
            elif have != want:
                raise DatalogError(
                    f"type mismatch: variable {term.name} is a {have} elsewhere in this rule but {why} needs a {want}",
                    term.loc,
                )
            return
        have = self.infer(term)
        if have is not None and have != want:
            shown = repr(term.value) if isinstance(term, Const) else _describe(term)
            raise DatalogError(f"type mismatch: {shown} is a {have} but {why} needs a {want}", term.loc)
        if isinstance(term, BinOp):
            self.expect(term.left, "number", f"operator {term.op}")
            self.expect(term.right, "number", f"operator {term.op}")
        elif isinstance(term, Call):
            arg_types, _ = FUNCTORS[term.name]
            for i, arg in enumerate(term.args):
                self.expect(arg, arg_types[min(i, len(arg_types) - 1)], f"argument {i + 1} of {term.name}")
        elif isinstance(term, Aggregate) and term.target is not None:
            self.expect(term.target, "number", f"{term.op} aggregate")

    def infer(self, term: Term) -> BaseType | None:
        if isinstance(term, Const):
            return _type_of_value(term.value)
        if isinstance(term, Var):
            return self.env.get(term.name)
        if isinstance(term, (BinOp, Aggregate)):
            return "number"
        if isinstance(term, Call):
            return FUNCTORS[term.name][1]
        return None


def _describe(term: Term) -> str:
    if isinstance(term, BinOp):
        return f"expression with {term.op}"
    if isinstance(term, Call):
        return f"{term.name}(...)"
    if isinstance(term, Aggregate):
        return f"{term.op} aggregate"
    return "term"


def _constraints(body: Iterable[BodyLiteral]) -> Iterator[Constraint]:
    for lit in body:
        if isinstance(lit, Constraint):
            yield lit
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    yield from _constraints(side.body)


def _check_types(rule: Rule, decls: dict[str, Decl]) -> None:
    types = _Types()
    for atom in _all_atoms(rule):
        decl = decls[atom.relation]
        for i, arg in enumerate(atom.args):
            types.expect(arg, decl.base_types[i], f"column {i + 1} ({decl.columns[i][0]}) of {atom.relation}")
    constraints = list(_constraints(rule.body))
    while True:
        types.changed = False
        for c in constraints:
            if c.op in ("=", "!="):
                left, right = types.infer(c.left), types.infer(c.right)
                if left is not None:
                    types.expect(c.right, left, f"'{c.op}' with a {left} on the left")
                elif right is not None:
                    types.expect(c.left, right, f"'{c.op}' with a {right} on the right")
            else:
                types.expect(c.left, "number", f"comparison {c.op}")
                types.expect(c.right, "number", f"comparison {c.op}")
            for side in (c.left, c.right):
                if isinstance(side, Aggregate) and side.target is not None:
                    types.expect(side.target, "number", f"{side.op} aggregate")
        if not types.changed:
            break


# ---------------------------------------------------------------------------------------
# Safety (groundedness)


def grounded_vars(body: Iterable[BodyLiteral], initially: Iterable[str] = ()) -> set[str]:
    """Variables grounded by a conjunction, Soufflé style.

    A variable is grounded if it is an argument of a positive atom, or is one side of
    ``=`` whose other side is grounded (an aggregate counts as grounded).

    Args:
        body: The literals (aggregate bodies are not entered).
        initially: Variables grounded from an enclosing scope.

    Returns:
        The names of the grounded variables.
    """
    lits = list(body)
    grounded = set(initially)
    for lit in lits:
        if isinstance(lit, Atom):
            grounded.update(a.name for a in lit.args if isinstance(a, Var))
    changed = True
    while changed:
        changed = False
        for lit in lits:
            if not (isinstance(lit, Constraint) and lit.op == "="):
                continue
            for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if (
                    isinstance(side, Var)
                    and side.name not in grounded
                    and (
                        isinstance(other, Aggregate)
                        or all(v.name in grounded for v in term_vars(other, into_aggregates=False))
                    )
                ):
                    grounded.add(side.name)
                    changed = True
    return grounded


def _ungrounded(term: Term, grounded: set[str]) -> Var | None:
    for v in term_vars(term, into_aggregates=False):
        if v.name not in grounded:
            return v
    return None


def _check_safety(rule: Rule) -> None:
    grounded = grounded_vars(rule.body)
    for arg in rule.head.args:
        v = _ungrounded(arg, grounded)
        if v is not None:
            raise DatalogError(
                f"unsafe rule: variable {v.name} in the head of {rule.head.relation} is not grounded "
                "(bind it in a positive body atom)",
                v.loc,
            )
    for index, lit in enumerate(rule.body):
        if isinstance(lit, Atom):
            for arg in lit.args:
                v = _ungrounded(arg, grounded)
                if v is not None:
                    raise DatalogError(f"unsafe rule: variable {v.name} in an expression is not grounded", v.loc)
        elif isinstance(lit, Negation):
            for arg in lit.atom.args:
                v = _ungrounded(arg, grounded)
                if v is not None:
                    raise DatalogError(
                        f"unsafe rule: variable {v.name} in negated atom !{lit.atom.relation}(...) is not grounded "
                        "(use _ for 'any value')",
                        v.loc,
                    )
        else:
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    _check_aggregate_safety(rule, index, side, grounded)
                else:
                    v = _ungrounded(side, grounded)
                    if v is not None:
                        raise DatalogError(f"unsafe rule: variable {v.name} in '{lit.op}' is not grounded", v.loc)


def _outside_names(rule: Rule, index: int, agg: Aggregate) -> set[str]:
    names = {v.name for a in rule.head.args for v in term_vars(a)}
    for i, lit in enumerate(rule.body):
        if i != index:
            names.update(v.name for v in body_vars([lit]))
        else:
            assert isinstance(lit, Constraint)
            other = lit.left if lit.right is agg else lit.right
            names.update(v.name for v in term_vars(other))
    return names


def _check_aggregate_safety(rule: Rule, index: int, agg: Aggregate, grounded: set[str]) -> None:
    outside = _outside_names(rule, index, agg)
    inner_vars = list(body_vars(agg.body))
    if agg.target is not None:
        inner_vars.extend(term_vars(agg.target))
    for v in inner_vars:
        if v.name in outside and v.name not in grounded:
            raise DatalogError(
                f"unsafe rule: variable {v.name} is shared between an aggregate and the rest of the rule "
                "but is not grounded outside the aggregate",
                v.loc,
            )
    inner_grounded = grounded_vars(agg.body, grounded & outside)
    for lit in agg.body:
        for t in _literal_terms(lit):
            if isinstance(lit, Atom) and isinstance(t, (Var, Wildcard)):
                continue
            v = _ungrounded(t, inner_grounded)
            if v is not None:
                raise DatalogError(
                    f"unsafe rule: variable {v.name} inside the {agg.op} aggregate is not grounded", v.loc
                )
    if agg.target is not None:
        v = _ungrounded(agg.target, inner_grounded)
        if v is not None:
            raise DatalogError(
                f"unsafe rule: variable {v.name} in the {agg.op} target is not grounded by the aggregate body", v.loc
            )
