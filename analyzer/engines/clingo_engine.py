"""The clingo engine (`--engine clingo`), embedded through its Python API; the default is seminaive.

The checked program is translated to clingo's input language (see
``docs/datalog_subset.md`` for the full mapping):

* relation ``Name`` becomes predicate ``r_Name`` (clingo predicates start lower-case; the
  prefix keeps names distinct), variable ``x`` becomes ``V_x``, ``_`` stays ``_``;
* symbols become clingo strings (quotes, backslashes and newlines escaped), numbers ints;
* ``%`` becomes ``\\``; ``/`` and ``\\`` truncate toward zero like Soufflé's (C) operators;
* ``cat``/``to_string``/``to_number``/``strlen`` call Python through ``@name(...)`` with a
  context object (:mod:`analyzer.datalog.functors`);
* an aggregate ``n = count : { B(x, _) }`` becomes ``V_n = #count{ W1 : r_B(V_x,W1) }``:
  clingo aggregates range over a *set* of tuples, so the tuple lists every local variable
  of the aggregate body (wildcards are named first) and Soufflé's per-row semantics hold;
  ``min``/``max`` over nothing give ``#sup``/``#inf`` in clingo where Soufflé derives
  nothing, so the result variable is guarded (``V_m != #sup``);
* ``;`` in bodies and multiple heads were already split by the parser (clingo's ``;`` in
  a body is a conjunction, not a disjunction).

clingo integers are signed 32-bit: fact values outside that range are rejected, and
arithmetic overflow wraps around silently (as with Soufflé's default 32-bit ``number``).

Runaway rules (:mod:`analyzer.engines.limits`): grounding cannot be interrupted, so in a rule
that builds values in a recursive component (:func:`~analyzer.engines.limits.value_builders`)
each value it builds for its head goes through ``@grow(i, value)`` and each ``cat`` through
``@cat_in(i, ...)``; both count against the run's :class:`~analyzer.engines.limits.Budget` and,
over it, raise out of ``Control.ground`` (clingo re-raises a callback's exception), naming rule
``i``. The library has 21 such rules; the calls cost ``examples/mixtral_ep2_adamw``'s check
~0.3 s of 5.2 s.

Fact loading: the EDB is formatted (and type-checked) in Python as one block of
``r_Name(...).`` lines and handed to ``Control.add`` in a single call. Measured on this
project's 2-core build machine (clingo 5.8.3, CPython 3.11, a 2-column symbol relation;
format + add + ground): 200,000 tuples in ~1.0 s (~190,000 tuples/s), 1,000,000 tuples in
~7 s (~145,000 tuples/s; clingo's parser is ~75% of that). The ``clingo.backend`` API
(``add_atom`` + ``add_rule`` per tuple) managed ~95,000-100,000 tuples/s, because building
a ``clingo.Symbol`` per value in Python costs more than clingo's own parser; feeding tuples
through an ``@edb()`` context function was ~160,000/s on the same 200k tuples (building the
symbols dominates too). Grounding and solving happen once; a stratified program has exactly
one model, which is read.

Since then (405B TP-8 check, collapsed graphs, ~26,000 fact rows): each relation is checked
and formatted column by column with one ``%`` per row (0.04 -> 0.01 s); relations no rule
reads (node sources and scopes, for the report) are checked but not handed to clingo (the
text 1.4 -> 1.1 MB); the facts of graphs that are relabelled copies of one graph (identical
rank graphs) are parsed once and derived per graph by one rule per relation (clingo's parse
0.08 -> 0.02 s); the translated rules are kept per program; derived symbols are split per
relation by one regex pass. Grounding (~0.15 s for ~81,000 ground rules) is what is left.
Of that, clingo spends a fixed ~70 us per rule even on no facts (0.04 s for the 549 rules of
the library), and per rule literal time in proportion to its relation's atoms: rules that
cannot change an output on the given facts are left out before grounding
(:mod:`analyzer.speedups.relevance`; 405B: 279 of 549 rules kept, parse + ground 0.27 ->
0.22 s), and the translation is kept on the program, which the driver's cache pickles.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from analyzer.datalog import functors
from analyzer.datalog.checks import INT_MAX, INT_MIN
from analyzer.datalog.errors import DatalogError
from analyzer.datalog.normalize import (
    aggregate_locals,
    lift_expressions,
    name_aggregate_wildcards,
)
from analyzer.datalog.syntax import (
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
)
from analyzer.engines.base import Engine, EngineUnavailable, finish_outputs
from analyzer.engines.limits import Budget, OverBudget, built_terms, limit_error, value_builders
from analyzer.speedups.relevance import RuleShape, body_relations, kept_on_facts, program_shapes

__all__ = ["ClingoEngine", "GraphCopies", "facts_text", "predicate_name", "to_clingo"]

_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "\\"}


def predicate_name(relation: str) -> str:
    """The clingo predicate for a relation.

    Args:
        relation: The relation name.

    Returns:
        ``r_<relation>``.
    """
    return f"r_{relation}"


def _quote(text: str) -> str:
    if "\\" in text or '"' in text or "\n" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def _term(term: Term) -> str:
    if isinstance(term, Var):
        return f"V_{term.name}"
    if isinstance(term, Wildcard):
        return "_"
    if isinstance(term, Const):
        return _quote(term.value) if isinstance(term.value, str) else str(term.value)
    if isinstance(term, BinOp):
        return f"({_term(term.left)}{_OPS[term.op]}{_term(term.right)})"
    if isinstance(term, Call):
        return f"@{term.name}({','.join(_term(a) for a in term.args)})"
    raise TypeError(f"unexpected term {term!r}")  # aggregates are handled by _literal


def _atom(atom: Atom) -> str:
    if not atom.args:
        return predicate_name(atom.relation)
    return f"{predicate_name(atom.relation)}({','.join(_term(a) for a in atom.args)})"


def _condition(body: Iterable[BodyLiteral]) -> str:
    parts = []
    for lit in body:
        if isinstance(lit, Atom):
            parts.append(_atom(lit))
        elif isinstance(lit, Negation):
            parts.append("not " + _atom(lit.atom))
        else:
            parts.append(f"{_term(lit.left)}{lit.op}{_term(lit.right)}")
    return ",".join(parts)


def _aggregate(rule: Rule, index: int) -> str:
    lit = rule.body[index]
    assert isinstance(lit, Constraint) and isinstance(lit.right, Aggregate)
    agg = lit.right
    local = [f"V_{name}" for name in aggregate_locals(rule, index)]
    if agg.op == "count":
        elements = local or ["0"]
    else:
        assert agg.target is not None
        elements = [_term(agg.target), *local]
    text = f"{_term(lit.left)}=#{agg.op}{{{','.join(elements)}:{_condition(agg.body)}}}"
    if isinstance(lit.left, Var) and agg.op in ("min", "max"):
        text += f",{_term(lit.left)}!={'#sup' if agg.op == 'min' else '#inf'}"
    return text


def _rule(rule: Rule, guard: int | None = None) -> str:
    """One rule's clingo text; with ``guard`` (the rule's index, a rule that can build values
    forever: :func:`analyzer.engines.limits.value_builders`), every value it builds goes
    through ``@grow(guard, value)``, which counts them (:class:`_Context`)."""
    rule = name_aggregate_wildcards(lift_expressions(rule, head=False), positive=True)
    if guard is not None:
        rule = _grown(rule, guard)
    parts = []
    for i, lit in enumerate(rule.body):
        if isinstance(lit, Constraint) and isinstance(lit.right, Aggregate):
            parts.append(_aggregate(rule, i))
        else:
            parts.append(_condition([lit]))
    return f"{_atom(rule.head)}:-{','.join(parts)}."


def _grown(rule: Rule, index: int) -> Rule:
    """``rule`` with each value it builds for its head (:func:`~analyzer.engines.limits.built_terms`)
    wrapped in ``@grow(index, value)``, and its ``cat`` calls made ``@cat_in(index, ...)``."""

    def named(term: Term) -> Term:  # cat(...) -> @cat_in(index, ...): the rule is known when it runs over
        if isinstance(term, Call):
            args = tuple(map(named, term.args))
            if term.name == "cat":
                return Call("cat_in", (Const(index), *args), term.loc)
            return Call(term.name, args, term.loc)
        if isinstance(term, BinOp):
            return BinOp(term.op, named(term.left), named(term.right), term.loc)
        return term

    built = {id(t) for t in built_terms(rule)}

    def wrap(term: Term) -> Term:
        return Call("grow", (Const(index), named(term)), term.loc) if id(term) in built else term

    head = Atom(rule.head.relation, tuple(map(wrap, rule.head.args)), rule.head.loc)
    body = [
        Constraint(lit.op, wrap(lit.left), wrap(lit.right), lit.loc)
        if isinstance(lit, Constraint) and not isinstance(lit.right, Aggregate)
        else lit
        for lit in rule.body
    ]
    return Rule(head, tuple(body), rule.loc)


def to_clingo(program: Program, outputs: Iterable[str] | None = None) -> str:
    """Translate a checked program (rules, program facts, ``#show``) to clingo text.

    Args:
        program: The program.
        outputs: Relations to show (default ``program.outputs``).

    Returns:
        The clingo program text.
    """
    facts, shows = _facts_and_shows(program, outputs)
    return facts + "".join(_rule(r) + "\n" for r in program.rules) + shows


def _facts_and_shows(program: Program, outputs: Iterable[str] | None = None) -> tuple[str, str]:
    """The clingo text of the program's facts, and of its ``#show`` lines (each line ends
    with a newline)."""
    facts = "".join(_atom(Atom(f.relation, tuple(Const(v) for v in f.values))) + ".\n" for f in program.facts)
    shown = list(dict.fromkeys(program.outputs if outputs is None else outputs))
    shows = "#show.\n" + "".join(f"#show {predicate_name(name)}/{program.decls[name].arity}.\n" for name in shown)
    return facts, shows


# ---------------------------------------------------------------------------------------
# Facts


def _formatter(decl: Decl) -> Callable[[tuple], str]:
    """A function formatting one checked tuple of ``decl`` as a clingo fact line."""
    pred = predicate_name(decl.name)
    kinds = decl.base_types
    arity = decl.arity

    def bad(row: tuple, msg: str) -> DatalogError:
        return DatalogError(f"facts for {decl.name}: {row!r}: {msg}")

    def cell(value: object, kind: str, row: tuple) -> str:
        if kind == "symbol":
            if type(value) is not str:
                raise bad(row, f"expected a symbol (str), got {value!r}")
            return _quote(value)
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise bad(row, f"expected a number (int), got {value!r}")
        number = operator.index(value)  # type: ignore[arg-type]
        if not INT_MIN <= number <= INT_MAX:
            raise bad(row, f"number {number} does not fit in 32 bits")
        return str(number)

    if arity == 0:
        return lambda row: f"{pred}."

    def fmt(row: tuple) -> str:
        if len(row) != arity:
            raise bad(row, f"has {len(row)} values, the relation has {arity} columns")
        return f"{pred}({','.join([cell(v, k, row) for v, k in zip(row, kinds)])})."

    if kinds == ("symbol", "symbol"):  # the common case, inlined

        def fmt2(row: tuple) -> str:
            if len(row) == 2:
                a, b = row
                if type(a) is str and type(b) is str:
                    return f"{pred}({_quote(a)},{_quote(b)})."
            return fmt(row)

        return fmt2
    return fmt


def facts_text(program: Program, facts: Mapping[str, Iterable[tuple]], keep: Container[str] | None = None) -> str:
    """Format (and check) the EDB as clingo facts, one per line.

    Args:
        program: The program (for the declarations).
        facts: Relation name -> tuples.
        keep: only these relations are in the text (all when None); every given relation
            is checked all the same.

    Returns:
        The text.

    Raises:
        DatalogError: On an undeclared relation or a tuple that does not fit.
    """
    chunks = []
    for name, rows in facts.items():
        decl = program.decls.get(name)
        if decl is None:
            raise DatalogError(f"facts given for undeclared relation {name}")
        if keep is None or name in keep:
            chunks.append(_relation_text(decl, rows))
        else:
            _check_only(decl, rows)
    return "\n".join(chunks) + "\n"


def _check_only(decl: Decl, rows: Iterable[tuple]) -> None:
    """Raise as :func:`facts_text` would on a bad tuple of ``decl``, without formatting."""
    rows = [r if type(r) is tuple else tuple(r) for r in rows]
    if rows and (decl.arity == 0 or set(map(len, rows)) != {decl.arity} or not _plain_columns(decl, list(zip(*rows)))):
        _slow_text(decl, rows)


def _plain_columns(decl: Decl, cols: list) -> bool:
    """Whether every symbol column holds only ``str`` and every number column only ``int``
    within 32 bits."""
    for col, kind in zip(cols, decl.base_types):
        types = set(map(type, col))
        if kind == "symbol":
            if types != {str}:
                return False
        elif types != {int} or min(col) < INT_MIN or max(col) > INT_MAX:
            return False
    return True


def _relation_text(decl: Decl, rows: Iterable[tuple], param: int | None = None, pred: str | None = None) -> str:
    """The facts of one relation as clingo text (checked like :func:`_formatter`'s lines).

    The common case (tuples of the right length, ``str`` symbols, ``int`` numbers in 32 bits)
    is checked column by column and formatted with one ``%`` per row; anything else goes
    through :func:`_formatter`, which names the row at fault. ``param``: a column left out,
    with the facts written as predicate ``pred`` (see :func:`_copy_text`)."""
    rows = [r if type(r) is tuple else tuple(r) for r in rows]
    if not rows:
        return ""
    arity = decl.arity
    if arity == 0 or set(map(len, rows)) != {arity}:
        if param is not None:
            raise DatalogError(f"facts for {decl.name}: rows of a copied graph that do not fit the relation")
        return _slow_text(decl, rows)
    cols = list(zip(*rows))
    if not _plain_columns(decl, cols):
        return _slow_text(decl, rows)
    escaped = False
    for i, (col, kind) in enumerate(zip(cols, decl.base_types)):
        if kind == "symbol":
            joined = "".join(col)
            if "\\" in joined or '"' in joined or "\n" in joined:
                cols[i] = [_quote(v)[1:-1] for v in col]
                escaped = True
    if escaped:
        rows = list(zip(*cols))
    cells = ['"%s"' if kind == "symbol" else "%d" for kind in decl.base_types]
    if param is None:
        template = f"{predicate_name(decl.name)}({','.join(cells)})."
    else:  # "%.0s" takes the column's value and writes nothing
        rest = ",".join(c for i, c in enumerate(cells) if i != param)
        template = f"{pred}(%.0s{rest})." if rest else f"{pred}%.0s."
        if param:  # the left-out column is not the first: move its value to the front
            rows = [(r[param], *r[:param], *r[param + 1 :]) for r in rows]
    return "\n".join(map(template.__mod__, rows))


def _slow_text(decl: Decl, rows: list[tuple]) -> str:
    fmt = _formatter(decl)
    return "\n".join([fmt(row) for row in rows])


@dataclass(frozen=True)
class GraphCopies:
    """Graphs whose facts are ``rows`` (the facts of ``graphs[0]``, relation name -> tuples,
    each with a column ``g`` holding ``graphs[0]``) with ``g`` renamed to their name."""

    graphs: tuple[str, ...]
    rows: Mapping[str, list[tuple]]


def _copy_text(program: Program, copy: GraphCopies, n: int, keep: Container[str]) -> str:
    """Clingo text deriving the facts of every graph of ``copy``: each relation's rows once,
    without the graph column, as ``copyN_Name(...)``, and one rule per relation
    ``r_Name(..., G, ...) :- copyN_Name(...), copyN_graph(G).`` with a fact
    ``copyN_graph("g")`` per graph. Checked like :func:`facts_text`."""
    source = copy.graphs[0]
    chunks = [f"copy{n}_graph({_quote(g)})." for g in copy.graphs]
    for name, rows in copy.rows.items():
        decl = program.decls.get(name)
        if decl is None:
            raise DatalogError(f"facts given for undeclared relation {name}")
        cols = decl.column_names
        if "g" not in cols:
            raise DatalogError(f"facts for {name}: a copied graph's relation has no column g")
        gi = cols.index("g")
        if rows and {row[gi] for row in rows} != {source}:
            raise DatalogError(f"facts for {name}: rows of copied graph {source} name another graph")
        if name not in keep:
            _check_only(decl, rows)
            continue
        chunks.append(_relation_text(decl, rows, param=gi, pred=f"copy{n}_{name}"))
        args = [f"V{i}" for i in range(decl.arity) if i != gi]
        head = ",".join("G" if i == gi else f"V{i}" for i in range(decl.arity))
        body = f"copy{n}_{name}({','.join(args)})" if args else f"copy{n}_{name}"
        chunks.append(f"{predicate_name(name)}({head}):-{body},copy{n}_graph(G).")
    return "\n".join(chunks) + "\n"


@dataclass(frozen=True)
class _Compiled:
    """A program's clingo text (its facts, each rule, the ``#show`` lines), the relations it
    reads (in a rule body) or shows, and each rule's :class:`~analyzer.speedups.relevance.RuleShape`."""

    facts: str
    rules: tuple[str, ...]
    shows: str
    read: frozenset[str]
    shapes: tuple[RuleShape, ...]

    @property
    def text(self) -> str:
        """The whole program (as :func:`to_clingo`)."""
        return self.facts + "".join(r + "\n" for r in self.rules) + self.shows


def _compiled(program: Program) -> _Compiled:
    """:func:`to_clingo` of ``program`` and the relations its rules read, kept on the program
    (:meth:`~analyzer.datalog.syntax.Program.kept`: once per program object, and a program pickled
    after this call carries its translation; 0.02-0.04 s a process)."""
    return program.kept("_clingo_compiled", _translated, lambda made: isinstance(made, _Compiled))


def _translated(program: Program) -> _Compiled:
    read: set[str] = set(program.outputs)
    for rule in program.rules:
        body_relations(rule.body, read)
    facts, shows = _facts_and_shows(program)
    guarded = set(value_builders(program))
    rules = tuple(_rule(r, i if i in guarded else None) for i, r in enumerate(program.rules))
    return _Compiled(facts, rules, shows, frozenset(read), program_shapes(program))


# ---------------------------------------------------------------------------------------
# Functors


class _Context:
    """``@cat(...)`` etc. during grounding; errors are kept and raised after grounding."""

    def __init__(self, budget: Budget | None = None) -> None:
        import clingo

        self._clingo = clingo
        self.error: DatalogError | None = None
        self.budget = budget or Budget(0)

    def grow(self, rule, value):
        """A value built by rule ``rule`` (:func:`_grown`), counted: over the run's budget,
        :class:`~analyzer.engines.limits.OverBudget` stops grounding (clingo re-raises it)."""
        self.budget.spend(1, rule.number)
        return value

    def _fail(self, exc: DatalogError) -> list:
        if self.error is None:
            self.error = exc
        return []

    def cat(self, *args):
        return self._clingo.String(self.budget.cat(*(a.string for a in args)))

    def cat_in(self, rule, *args):
        """``cat`` in a rule that can build values forever (:func:`_grown`)."""
        return self._clingo.String(self.budget.cat(*(a.string for a in args), rule=rule.number))

    def to_string(self, value):
        return self._clingo.String(functors.to_string(value.number))

    def to_number(self, value):
        try:
            return self._clingo.Number(functors.to_number(value.string))
        except DatalogError as exc:
            return self._fail(exc)

    def strlen(self, value):
        return self._clingo.Number(functors.strlen(value.string))


# ---------------------------------------------------------------------------------------


class ClingoEngine(Engine):
    """Evaluate with clingo (embedded)."""

    name = "clingo"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why clingo cannot run here, or ``None``.

        Returns:
            A one-line reason, or ``None``.
        """
        try:
            import clingo  # noqa: F401
        except ImportError:
            return "the clingo Python package is not installed; pip install clingo"
        return None

    graph_copies = True  # run() takes copies=
    #: leave out rules that cannot change an output on the given facts (:mod:`analyzer.speedups.relevance`);
    #: off only to compare against the whole program (tests)
    prune = True

    @classmethod
    def prepare(cls, program: Program) -> None:
        """Translate ``program`` to clingo now and keep the text on it (see :func:`_compiled`)."""
        _compiled(program)

    def run(
        self,
        program: Program,
        facts: Mapping[str, Iterable[tuple]],
        *,
        copies: Sequence[GraphCopies] = (),
    ) -> dict[str, list[tuple]]:
        """Evaluate ``program`` over ``facts`` with clingo.

        Args:
            program: A checked program.
            facts: Relation name -> tuples (the EDB).
            copies: graphs whose facts are one graph's with the graph column ``g`` renamed
                (the rank graphs of an SPMD export), not in ``facts``: each relation's rows
                are parsed once and a rule per relation derives them for every graph
                (:func:`_copy_text`); the atoms are the same as with every graph's rows in
                ``facts``. Measured on the collapsed 405B TP-8 check: clingo's parse
                0.08 -> 0.02 s, grounding unchanged (parameterized ``#program`` parts
                grounded once per graph parse as fast but ground 0.05 s slower).

        Returns:
            Every output relation as a sorted list of tuples.

        Raises:
            DatalogError: On bad facts or a functor error (e.g. ``to_number("x")``).
            EngineUnavailable: If clingo is not installed.
        """
        reason = self.unavailable_reason()
        if reason:
            raise EngineUnavailable(reason)
        import clingo

        messages: list[str] = []
        ctl = clingo.Control(["--warn=none"], logger=lambda _code, msg: messages.append(msg))
        compiled = _compiled(program)
        facts = {name: rows if isinstance(rows, list) else list(rows) for name, rows in facts.items()}
        if self.prune:
            rules, read = _relevant_text(compiled, program, facts, copies)
        else:
            rules, read = compiled.text, compiled.read
        edb = facts_text(program, facts, keep=read)
        try:
            ctl.add("base", [], edb)
            for n, copy in enumerate(copies):
                ctl.add("base", [], _copy_text(program, copy, n, read))
            ctl.add("base", [], rules)
            given = sum(map(len, facts.values())) + sum(len(c.graphs) * sum(map(len, c.rows.values())) for c in copies)
            context = _Context(Budget(given))
            ctl.ground([("base", [])], context=context)
        except OverBudget as exc:
            raise limit_error("clingo", program, exc.rule, exc.what) from None
        except RuntimeError as exc:
            detail = " ".join(" ".join(messages).split()) or str(exc)
            raise RuntimeError(f"clingo failed on the translated program: {detail}") from None
        if context.error is not None:
            raise context.error
        symbols = None
        with ctl.solve(yield_=True) as handle:
            for model in handle:
                symbols = model.symbols(shown=True)
                break
        if symbols is None:
            raise RuntimeError("clingo found no model (the translated program is inconsistent)")
        return finish_outputs(program, _read_symbols(program, symbols))


def _relevant_text(
    compiled: _Compiled, program: Program, rows: Mapping[str, list[tuple]], copies: Sequence[GraphCopies]
) -> tuple[str, frozenset[str]]:
    """The clingo text of the rules that can change an output on the facts ``rows`` and
    ``copies`` (:func:`analyzer.speedups.relevance.kept_on_facts`), and the relations those rules
    read or the program shows (the facts of other relations are not handed to clingo)."""
    kept = kept_on_facts(program, rows, copies)
    read = set(program.outputs)
    for i in kept:
        read |= compiled.shapes[i].reads
    text = compiled.facts + "".join(compiled.rules[i] + "\n" for i in kept) + compiled.shows
    return text, frozenset(read)


_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"|(-?\d+)')
_ESCAPE = re.compile(r"\\(.)", re.S)


def _unquote(text: str) -> str:
    """The string a clingo string literal's body stands for (clingo escapes only ``\\``,
    ``"`` and newline)."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _values(text: str, decl: Decl) -> tuple | None:
    """The arguments of a symbol from its text ``name(args)``, or None when they do not
    read as ``decl``'s columns."""
    tokens = _ARG.findall(text.partition("(")[2][:-1])
    if len(tokens) != decl.arity:
        return None
    out = []
    for (string, number), kind in zip(tokens, decl.base_types):
        if (kind == "number") != (number != ""):
            return None
        out.append(int(number) if number else _unquote(string))
    return tuple(out)


def _read_symbols(program: Program, symbols: Sequence[object]) -> dict[str, list[tuple]]:
    """Rows by relation, read from the symbols' text (one call into clingo per symbol instead
    of one per argument); the arguments of all symbols of a relation are split by one regex
    pass over their joined text and converted column by column."""
    by_pred = {predicate_name(name): program.decls[name] for name in program.outputs}
    rows: dict[str, list[tuple]] = {name: [] for name in program.outputs}
    texts: dict[str, list[str]] = {}
    where: dict[str, list[int]] = {}
    for i, text in enumerate(map(str, symbols)):
        pred, _, args = text.partition("(")
        if pred in by_pred:
            texts.setdefault(pred, []).append(args)
            where.setdefault(pred, []).append(i)
    for pred, args in texts.items():
        decl = by_pred[pred]
        read = _read_columns(decl, args)
        if read is None:  # not plain strings and numbers: symbol by symbol
            read = [_symbol_values(symbols[i], decl) for i in where[pred]]
        rows[decl.name].extend(read)
    return rows


def _read_columns(decl: Decl, args: list[str]) -> list[tuple] | None:
    """The rows of ``decl`` from each symbol's text after ``name(`` (or None when one does not
    read as the relation's columns)."""
    arity = decl.arity
    if arity == 0:
        return [()] * len(args)
    tokens = _ARG.findall("".join(args))
    if len(tokens) != arity * len(args):
        return None
    cols = []
    for c, kind in enumerate(decl.base_types):
        col = tokens[c::arity]
        if kind == "number":
            if not all(number for _, number in col):
                return None
            cols.append([int(number) for _, number in col])
        else:
            if any(number for _, number in col):
                return None
            cols.append([_unquote(string) if "\\" in string else string for string, _ in col])
    return list(zip(*cols))


def _symbol_values(sym, decl: Decl) -> tuple:
    values = _values(str(sym), decl)
    if values is None:
        args = sym.arguments  # type: ignore[attr-defined]
        values = tuple(a.number if kind == "number" else a.string for a, kind in zip(args, decl.base_types))
    return values
