"""A pure-Python engine on pyDatalog, for small programs and as a second opinion.

Clauses are built with pyDatalog's Python API (``pyParser.Literal`` and friends), not by
generating pyDatalog source, so no quoting is involved. The mapping:

* relation ``Name`` -> predicate ``r_Name``; variable ``x`` -> ``V_x``; each ``_`` -> a fresh
  variable (a wildcard in a negated atom is existential, as in Soufflé);
* body literals are reordered so every comparison, assignment and negation comes after the
  atoms binding its variables (pyDatalog evaluates left to right and silently derives
  nothing from ``Y == X + 1`` placed before ``X`` is bound);
* arithmetic and functors run as Python functions (:mod:`analyzer.datalog.functors`) on
  operands put in three-address form (pyDatalog cannot nest such operations): 32-bit
  wrap-around, ``/`` and ``%`` truncating toward zero; a zero divisor is guarded by a
  ``!= 0`` test so the rule instance does not fire, as in clingo;
* symbols carry a ``$`` prefix inside pyDatalog, whose ``Term()`` turns the strings
  ``"True"``, ``"False"`` and ``"??"`` into a boolean or a variable even for constants.

Evaluation is bottom-up, one strongly connected component at a time: every rule becomes a
clause with its own head predicate, relations only hold asserted facts, and each component
is iterated (naively) until no rule adds a tuple. pyDatalog's own top-down resolution is
not used for recursion because it loops forever on small mutually recursive programs
(e.g. ``U(n,j) :- U(n,i), I(n,j), Next(i,j).  A(n) :- U(n,i), Last(n,i).  I(n,i) :- A(n),
Last(n,i).`` with facts for ``I``); this way every query is over facts and terminates.

Aggregates are computed in Python: the aggregate body becomes an auxiliary relation; once
its component is complete, its rows are grouped and reduced and the results asserted as a
second auxiliary relation that replaces the aggregate in the rule. ``count``/``sum`` of
nothing give 0 (an extra rule variant with the negated result relation), ``min``/``max``
of nothing derive nothing. When the aggregate body uses a variable of the rule without
binding it (``count : { B(y), y < x }`` with ``x`` bound outside), the auxiliary body also
gets the rule's other literals that do not depend on aggregate results.

Runaway rules (:mod:`analyzer.engines.limits`): the naive iteration counts the rows each
clause adds and the rounds of each component, ``cat`` its characters (kept aside when over the
limit: pyDatalog swallows an exception raised inside an operation), and the run's time is
checked between clauses; over a limit, :class:`~analyzer.engines.limits.DerivationLimit` names
the rule.

What pyDatalog cannot do here raises :class:`EngineUnavailable` naming the construct: such
an aggregate when the literals binding ``x`` are recursive with the rule's head. It is
slow: shardlog's rule library on the 2-rank llama example takes minutes (clingo: 0.5 s).
Use it for tests and small programs.

pyDatalog keeps its clause database per thread (``pyDatalog.Logic``); each run resets the
current thread's database before and after, and runs under a lock because pyDatalog also
has module-level state (e.g. the operation counters).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from analyzer.datalog import functors
from analyzer.datalog.checks import grounded_vars
from analyzer.datalog.errors import DatalogError
from analyzer.datalog.normalize import (
    FreshVars,
    aggregate_locals,
    lift_expressions,
    name_aggregate_wildcards,
    order_body,
    rule_var_names,
)
from analyzer.datalog.strata import scc_order, strata
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
    body_vars,
    term_vars,
)
from analyzer.engines.base import (
    Engine,
    EngineUnavailable,
    finish_outputs,
    validate_facts,
)
from analyzer.engines.limits import Budget, OverBudget, builds_value, limit_error

__all__ = ["PyDatalogEngine"]

_LOCK = threading.Lock()
#: Prefix of every symbol inside pyDatalog: its Term() turns the strings "True", "False"
#: and "??" into other things even when forced to be constants.
_SYM = "$"
_CMP = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass
class _AggPlan:
    """One aggregate evaluated in Python."""

    op: str
    body_pred: str
    res_pred: str
    n_keys: int


@dataclass
class _Plan:
    """The program rewritten for pyDatalog: plain rules plus aggregates done in Python."""

    rules: list[Rule] = field(default_factory=list)
    aggregates: list[_AggPlan] = field(default_factory=list)
    arities: dict[str, int] = field(default_factory=dict)


def _pred(relation: str) -> str:
    """pyDatalog predicate of a relation; internal relations are named ``%...`` (never a user name)."""
    return f"aux_{relation[1:]}" if relation.startswith("%") else f"r_{relation}"


def _plan(program: Program) -> _Plan:
    plan = _Plan(arities={name: d.arity for name, d in program.decls.items()})
    comp_of = {name: i for i, comp in enumerate(strata(program)) for name in comp}
    counter = 0
    for rule in program.rules:
        rule = name_aggregate_wildcards(lift_expressions(rule, head=True))
        fresh = FreshVars(rule_var_names(rule))
        rule = Rule(rule.head, _flatten(rule.body, fresh), rule.loc)
        variants: list[tuple[BodyLiteral, ...]] = [()]
        for index, lit in enumerate(rule.body):
            if not (isinstance(lit, Constraint) and isinstance(lit.right, Aggregate)):
                variants = [v + (lit,) for v in variants]
                continue
            counter += 1
            agg = lit.right
            local = aggregate_locals(rule, index)
            inner = [v.name for v in body_vars(agg.body)]
            if agg.target is not None:
                inner.extend(v.name for v in term_vars(agg.target))
            keys = [name for name in dict.fromkeys(inner) if name not in local]
            self_grounded = grounded_vars(agg.body)
            context: list[BodyLiteral] = []
            if any(key not in self_grounded for key in keys):
                context = _binding_context(rule, keys, comp_of, agg)
            body_pred, res_pred = f"%agg{counter}_body", f"%agg{counter}_res"
            head_args: list[Term] = [Var(k) for k in keys] + [Var(v) for v in local]
            aux_body = context + list(agg.body)
            if agg.target is not None:
                target = fresh.var("target", agg.loc)
                aux_body.append(Constraint("=", target, agg.target, agg.loc))
                head_args.append(target)
            aux_body = list(_flatten(aux_body, fresh))
            plan.rules.append(Rule(Atom(body_pred, tuple(head_args), agg.loc), tuple(aux_body), rule.loc))
            plan.arities[body_pred] = len(head_args)
            plan.arities[res_pred] = len(keys) + 1
            plan.aggregates.append(_AggPlan(agg.op, body_pred, res_pred, len(keys)))
            found = Atom(res_pred, tuple(Var(k) for k in keys) + (lit.left,), lit.loc)
            new_variants = [v + (found,) for v in variants]
            if agg.op in ("count", "sum") and not (isinstance(lit.left, Const) and lit.left.value != 0):
                missing = Negation(Atom(res_pred, tuple(Var(k) for k in keys) + (Wildcard(lit.loc),), lit.loc), lit.loc)
                zero: tuple[BodyLiteral, ...] = (missing,)
                if isinstance(lit.left, Var):
                    zero += (Constraint("=", lit.left, Const(0, lit.loc), lit.loc),)
                new_variants += [v + zero for v in variants]
            variants = new_variants
        for body in variants:
            plan.rules.append(Rule(rule.head, body, rule.loc))
    return plan


def _binding_context(rule: Rule, keys: list[str], comp_of: dict[str, int], agg: Aggregate) -> list[BodyLiteral]:
    """The rule's literals that bind an aggregate's outer variables, for its auxiliary body.

    Needed when the aggregate body uses an outer variable without binding it (e.g.
    ``count : { B(y), y < x }``): the rows are then computed per binding of the rule's
    other literals. Those literals must not depend on aggregate results, and must be
    complete before the head's stratum (not recursive with the head).

    Raises:
        EngineUnavailable: When no such context exists.
    """
    results = {
        lit.left.name
        for lit in rule.body
        if isinstance(lit, Constraint) and isinstance(lit.right, Aggregate) and isinstance(lit.left, Var)
    }
    context = [lit for lit in rule.body if not (isinstance(lit, Constraint) and isinstance(lit.right, Aggregate))]
    tainted = set(results)
    changed = True
    while changed:  # drop what depends on aggregate results (assignments pass the taint on)
        changed = False
        for lit in list(context):
            names = {v.name for v in body_vars([lit])}
            if names & tainted:
                context.remove(lit)
                if isinstance(lit, Constraint) and lit.op == "=":
                    tainted |= names
                changed = True
    changed = True
    while changed:  # then what is no longer bound
        changed = False
        bound = grounded_vars(context)
        for lit in list(context):
            if not isinstance(lit, Atom) and not {v.name for v in body_vars([lit])} <= bound:
                context.remove(lit)
                changed = True
    bound = grounded_vars(context)
    missing = [k for k in keys if k not in bound and k not in grounded_vars(agg.body)]
    recursive = [a.relation for a in _atoms(context) if comp_of.get(a.relation) == comp_of.get(rule.head.relation)]
    if missing or recursive:
        why = f"variable {missing[0]}" if missing else f"recursive relation {recursive[0]}"
        raise EngineUnavailable(
            f"pydatalog cannot evaluate the {agg.op} aggregate at {agg.loc}: its body uses variables of the "
            f"enclosing rule that it does not bind, and the rule binds them through {why}; use --engine clingo"
        )
    return context


def _flatten(body: Iterable[BodyLiteral], fresh: FreshVars) -> tuple[BodyLiteral, ...]:
    """Three-address form: operands of every operation and functor become variables or constants.

    pyDatalog cannot nest Python-function operations, and a division's divisor must be a
    plain value to be guarded by ``!= 0``.
    """
    out: list[BodyLiteral] = []

    def simple(term: Term) -> Term:
        if isinstance(term, (Var, Const, Wildcard)):
            return term
        v = fresh.var("e", term.loc)
        out.append(Constraint("=", v, shallow(term), term.loc))
        return v

    def shallow(term: Term) -> Term:
        if isinstance(term, BinOp):
            return BinOp(term.op, simple(term.left), simple(term.right), term.loc)
        if isinstance(term, Call):
            return Call(term.name, tuple(simple(a) for a in term.args), term.loc)
        return term

    for lit in body:
        if isinstance(lit, Constraint) and not isinstance(lit.right, Aggregate):
            lit = Constraint(lit.op, shallow(lit.left), shallow(lit.right), lit.loc)
        out.append(lit)
    return tuple(out)


def _atoms(body: Iterable[BodyLiteral]) -> Iterable[Atom]:
    for lit in body:
        if isinstance(lit, Atom):
            yield lit
        elif isinstance(lit, Negation):
            yield lit.atom


# ---------------------------------------------------------------------------------------
# Building pyDatalog clauses


class _Builder:
    """Turns syntax nodes into pyDatalog objects for one run."""

    def __init__(self, errors: list[DatalogError], budget: Budget | None = None) -> None:
        from pyDatalog import pyParser

        self.pp = pyParser
        self.errors = errors
        self.wild = 0
        self.budget = budget or Budget(0)
        self.over: OverBudget | None = None

    # Python functions used as pyDatalog operations ------------------------------------
    def _guarded(self, fn: Callable[..., object]) -> Callable[..., object]:
        errors = self.errors

        def call(*args: object) -> object:
            try:
                return fn(*args)
            except DatalogError as exc:
                errors.append(exc)
                return None

        call.__name__ = getattr(fn, "__name__", "fn")
        return call

    def _counted_cat(self, *parts: str) -> str | None:
        """``cat`` within the run's :class:`~analyzer.engines.limits.Budget`; over it, the
        :class:`~analyzer.engines.limits.OverBudget` is kept in ``self.over`` (pyDatalog swallows
        an exception raised inside an operation) and the rule instance does not fire."""
        try:
            return _SYM + self.budget.cat(*(p[1:] for p in parts))
        except OverBudget as exc:
            self.over = self.over or exc
            return None

    def var(self, name: str) -> object:
        return self.pp.Term(f"V_{name}")

    def const(self, value: object) -> object:
        return self.pp.Term(_SYM + value if isinstance(value, str) else value, forced_type="constant")

    def term(self, term: Term) -> object:
        pp = self.pp
        if isinstance(term, Var):
            return self.var(term.name)
        if isinstance(term, Wildcard):
            self.wild += 1
            return pp.Term(f"W_{self.wild}")
        if isinstance(term, Const):
            return self.const(term.value)
        if isinstance(term, BinOp):
            fn = _ARITH[term.op]
            return pp.Operation(None, fn, [self.term(term.left), self.term(term.right)])
        if isinstance(term, Call):
            if term.name == "cat":  # counts the characters it builds (analyzer.engines.limits)
                fn = self._guarded(self._counted_cat)
            else:
                fn = self._guarded(_FUNCTORS[term.name])
            return pp.Operation(None, fn, [self.term(a) for a in term.args])
        raise EngineUnavailable(f"pydatalog cannot evaluate {type(term).__name__} at {term.loc}; use --engine clingo")

    def atom(self, atom: Atom) -> object:
        return self.pp.Literal.make(_pred(atom.relation), [self.term(a) for a in atom.args])

    def literals(self, lit: BodyLiteral) -> list[object]:
        if isinstance(lit, Atom):
            return [self.atom(lit)]
        if isinstance(lit, Negation):
            return [~self.atom(lit.atom)]
        assert isinstance(lit, Constraint)
        out = [self._nonzero(d) for d in _divisors(lit.left) + _divisors(lit.right)]
        out.append(self.pp.Literal.make_for_comparison(self.term(lit.left), _CMP[lit.op], self.term(lit.right)))
        return out

    def _nonzero(self, divisor: Term) -> object:
        return self.pp.Literal.make_for_comparison(self.term(divisor), "!=", self.const(0))

    def add_rule(self, rule: Rule) -> None:
        body = order_body(rule.body)
        parts: list[object] = []
        for lit in body:
            parts.extend(self.literals(lit))
        head = self.atom(rule.head)
        if not parts:
            raise EngineUnavailable(f"pydatalog cannot evaluate a rule with an empty body at {rule.loc}")
        conj = parts[0]
        for p in parts[1:]:
            conj = conj & p
        head <= conj  # noqa: B015 - pyDatalog's clause operator


def _divisors(term: Term) -> list[Term]:
    """Divisors of ``/`` and ``%`` inside ``term``, innermost first."""
    out: list[Term] = []
    if isinstance(term, BinOp):
        out.extend(_divisors(term.left))
        out.extend(_divisors(term.right))
        if term.op in ("/", "%"):
            out.append(term.right)
    elif isinstance(term, Call):
        for a in term.args:
            out.extend(_divisors(a))
    return out


_ARITH: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: functors.wrap32(a + b),
    "-": lambda a, b: functors.wrap32(a - b),
    "*": lambda a, b: functors.wrap32(a * b),
    "/": functors.div32,
    "%": functors.mod32,
}
_FUNCTORS: dict[str, Callable[..., object]] = {
    "cat": lambda *parts: _SYM + functors.cat(*(p[1:] for p in parts)),
    "to_string": lambda n: _SYM + functors.to_string(n),
    "to_number": lambda text: functors.to_number(text[1:]),
    "strlen": lambda text: functors.strlen(text[1:]),
}


def _encode(row: tuple) -> tuple:
    return tuple(_SYM + v if isinstance(v, str) else v for v in row)


def _decode(row: tuple) -> tuple:
    return tuple(v[1:] if isinstance(v, str) else v for v in row)


def _reduce(op: str, rows: Iterable[tuple], n_keys: int) -> dict[tuple, int]:
    groups: dict[tuple, list[tuple]] = {}
    for row in set(rows):
        groups.setdefault(row[:n_keys], []).append(row)
    out = {}
    for key, members in groups.items():
        if op == "count":
            out[key] = len(members)
        elif op == "sum":
            out[key] = functors.wrap32(sum(m[-1] for m in members))
        elif op == "min":
            out[key] = min(m[-1] for m in members)
        else:
            out[key] = max(m[-1] for m in members)
    return out


# ---------------------------------------------------------------------------------------


class PyDatalogEngine(Engine):
    """Evaluate with pyDatalog (pure Python; for small programs)."""

    name = "pydatalog"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why pyDatalog cannot run here, or ``None``.

        Returns:
            A one-line reason, or ``None``.
        """
        try:
            import pyDatalog  # noqa: F401
        except ImportError:
            return "the pyDatalog package is not installed; pip install pyDatalog or use --engine clingo"
        return None

    def run(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
        """Evaluate ``program`` over ``facts`` with pyDatalog.

        Args:
            program: A checked program.
            facts: Relation name -> tuples (the EDB).

        Returns:
            Every output relation as a sorted list of tuples.

        Raises:
            DatalogError: On bad facts or a functor error.
            EngineUnavailable: If pyDatalog is missing or cannot express a construct.
        """
        reason = self.unavailable_reason()
        if reason:
            raise EngineUnavailable(reason)
        edb = validate_facts(program, facts)
        plan = _plan(program)
        with _LOCK:
            from pyDatalog import Logic

            Logic()
            try:
                return self._evaluate(program, plan, edb)
            finally:
                Logic()

    def _evaluate(self, program: Program, plan: _Plan, edb: dict[str, set[tuple]]) -> dict[str, list[tuple]]:
        from pyDatalog import pyDatalog, pyEngine

        errors: list[DatalogError] = []
        budget = Budget(sum(map(len, edb.values())))
        builder = _Builder(errors, budget)
        known: dict[str, set[tuple]] = {name: set() for name in plan.arities}

        def add(name: str, rows: Iterable[tuple]) -> int:
            new = set(rows) - known[name]
            pred = _pred(name)
            for row in new:
                pyDatalog.assert_fact(pred, *row)
            known[name] |= new
            return len(new)

        for fact in program.facts:
            add(fact.relation, [_encode(fact.values)])
        for name, rows in edb.items():
            add(name, (_encode(row) for row in rows))
        # One clause per rule, under its own head predicate; relations themselves only hold
        # facts, so no clause is recursive and pyDatalog's resolution always terminates.
        by_head: dict[str, list[tuple[str, int]]] = {}
        for k, rule in enumerate(plan.rules):
            clause = f"%rule{k}"
            builder.add_rule(Rule(Atom(clause, rule.head.args, rule.head.loc), rule.body, rule.loc))
            by_head.setdefault(rule.head.relation, []).append((clause, len(rule.head.args)))
        db = pyEngine.Logic.tl.logic.Db
        for name, arity in plan.arities.items():
            pred = _pred(name)
            if f"{pred}/{arity}" not in db:  # make it known (empty) so queries and negations work
                pyDatalog.assert_fact(pred, *([0] * arity))
                pyDatalog.retract_fact(pred, *([0] * arity))

        def ask(clause: str, arity: int) -> list[tuple]:
            query = builder.pp.Literal.make(_pred(clause), [builder.pp.Term(f"Q_{i}") for i in range(arity)])
            answer = query.ask()
            if answer is True:
                return [()]
            return [tuple(row) for row in (answer or [])]

        aggregates = {agg.res_pred: agg for agg in plan.aggregates}
        for comp in _components(plan):
            if len(comp) == 1 and comp[0] in aggregates:
                agg = aggregates[comp[0]]
                values = _reduce(agg.op, known[agg.body_pred], agg.n_keys)
                add(agg.res_pred, [(*key, value) for key, value in values.items()])
                continue
            clauses = [c for name in comp for c in by_head.get(name, ())]
            heads = [name for name in comp for _ in by_head.get(name, ())]
            rounds = 0
            while clauses:  # naive iteration to the component's fixpoint, within the run's limits
                grown: dict[str, int] = {}
                for head, clause in zip(heads, clauses):
                    try:
                        grown[clause[0]] = added = add(head, ask(*clause))
                        if builder.over is not None:
                            raise builder.over
                        budget.spend(added)
                    except OverBudget as exc:
                        raise limit_error("pydatalog", program, plan.rules[int(clause[0][5:])], exc.what) from None
                if not sum(grown.values()):
                    break
                rounds += 1
                if rounds > budget.rounds:
                    blamed = _grown_rule(plan, grown)
                    raise limit_error("pydatalog", program, blamed, f"over {budget.rounds:,} rounds")
        if errors:
            raise errors[0]
        return finish_outputs(program, {name: [_decode(row) for row in known[name]] for name in program.outputs})


def _grown_rule(plan: _Plan, grown: dict[str, int]) -> Rule:
    """The rule to blame for a round's growth: of the clauses that added most rows, one whose
    head builds a value first."""
    most = max(grown.values())
    rules = [plan.rules[int(clause[5:])] for clause, n in grown.items() if n == most]
    return next((r for r in rules if builds_value(r)), rules[0])


def _components(plan: _Plan) -> list[list[str]]:
    """Relations (with the auxiliary ones) in strongly connected components, lowest first."""
    edges = [(r.head.relation, a.relation) for r in plan.rules for a in _atoms(r.body)]
    edges += [(agg.res_pred, agg.body_pred) for agg in plan.aggregates]
    return scc_order(plan.arities, edges)
