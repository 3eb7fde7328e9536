"""Runaway rules: the limits every engine puts on one run, and the error that names the rule.

Datalog without value invention always terminates; this subset has arithmetic and ``cat``, so a
recursive rule that builds new values from derived ones derives forever
(``Holds(cat(s, "x"), k, a, p) :- Holds(s, k, a, p).``, ``N(x + 1) :- N(x).``) until memory is
gone. Every engine stops such a run with a :class:`DerivationLimit` (a
:class:`~analyzer.datalog.errors.DatalogError`: the CLI prints one ``shardlog: error:`` line,
exit code 2), each with the means it has:

* ``seminaive`` (:mod:`analyzer.engines.seminaive_engine`) counts derived rows, rounds of each
  recursive component and the characters ``cat`` builds (:class:`Budget`), and names the rule
  that grew;
* ``clingo`` cannot be interrupted while grounding, so the translation routes every value a
  :func:`value_builders` rule builds through a Python function that counts them (and ``cat``
  counts its characters, as above): over the budget, grounding stops and the rule is named;
* ``souffle`` runs in a subprocess under resource limits (:data:`SOUFFLE_MEMORY` of address
  space, :data:`SOUFFLE_OUTPUT` per output file) and a time limit (``SouffleEngine.timeout``,
  default :data:`SOUFFLE_SECONDS`); Soufflé does not say which rule ran away, so the error
  names the engine, the limit and the :func:`value_builders` rules (those that can);
* ``pydatalog`` counts rows and rounds of its naive iteration, and ``cat``'s characters, like
  ``seminaive``, and names the rule that grew.

The bundled library derives 1-2.2 rows per input row in at most ~3,200 rounds
(``examples/mixtral_ep2_adamw``: 108,459 rows from 49,859, 3,209 rounds) and builds ~15,000
characters, far below these limits.
"""

from __future__ import annotations

import os
import time

from analyzer.datalog.errors import DatalogError
from analyzer.datalog.strata import strata
from analyzer.datalog.syntax import Aggregate, Atom, BinOp, Call, Constraint, Program, Rule, Var

__all__ = [
    "MAX_DERIVED_ROWS",
    "MAX_ROUNDS",
    "MAX_SYMBOL_CHARS",
    "ROWS_PER_FACT",
    "SOUFFLE_MEMORY",
    "SOUFFLE_OUTPUT",
    "ENGINE_SECONDS",
    "SECONDS_VAR",
    "Budget",
    "DerivationLimit",
    "OverBudget",
    "builds_value",
    "built_terms",
    "engine_seconds",
    "limit_error",
    "value_builders",
]

#: Rows one run may derive, at least.
MAX_DERIVED_ROWS = 500_000
#: Rows one run may derive per input row, when that is more than :data:`MAX_DERIVED_ROWS`.
ROWS_PER_FACT = 50
#: Rounds one recursive component may take, at least (at most the number of input rows otherwise).
MAX_ROUNDS = 20_000
#: Characters of new symbols ``cat`` may build in one run.
MAX_SYMBOL_CHARS = 8 << 20
#: Seconds one run may take (every engine), unless ``$SHARDLOG_ENGINE_SECONDS`` says otherwise:
#: the library's largest example takes seconds on seminaive and clingo, minutes on pydatalog.
ENGINE_SECONDS = 600.0
#: The environment variable overriding :data:`ENGINE_SECONDS` (a positive number of seconds).
SECONDS_VAR = "SHARDLOG_ENGINE_SECONDS"
#: Address space of a Soufflé subprocess (bytes).
SOUFFLE_MEMORY = 1 << 30
#: Largest file a Soufflé subprocess may write (bytes): an output relation's CSV.
SOUFFLE_OUTPUT = 1 << 30


class DerivationLimit(DatalogError):
    """A run went over one of the limits of the module docstring; ``loc`` is the rule's when
    the engine tells which rule it was."""


class OverBudget(Exception):
    """Raised inside an engine's evaluation when a :class:`Budget` runs out; the engine turns it
    into a :class:`DerivationLimit` naming the rule."""

    def __init__(self, what: str | OverBudget, rule: int | Rule | None = None) -> None:
        if isinstance(what, OverBudget):  # clingo re-raises a callback's exception as type(exc)(exc)
            what, rule = what.what, what.rule
        super().__init__(what, rule)
        self.what = what
        self.rule = rule


class Budget:
    """What is left of one run's limits: derived rows (or values built), rounds of a recursive
    component, characters built by ``cat``.

    Args:
        input_rows: rows of the run's EDB (the row and round limits grow with it).
    """

    def __init__(self, input_rows: int, seconds: float | None = None) -> None:
        self.rows = max(MAX_DERIVED_ROWS, ROWS_PER_FACT * input_rows)
        self.row_limit = self.rows
        self.rounds = max(MAX_ROUNDS, input_rows)
        self.chars = MAX_SYMBOL_CHARS
        self.seconds = engine_seconds() if seconds is None else seconds
        self.deadline = time.monotonic() + self.seconds

    def check_time(self, rule: int | Rule | None = None) -> None:
        """Raise :class:`OverBudget` when the run is over its time limit."""
        if time.monotonic() > self.deadline:
            raise OverBudget(f"over {self.seconds:g} s (${SECONDS_VAR})", rule)

    def cat(self, *parts: str, rule: int | None = None) -> str:
        """``cat`` that counts the characters it builds (for ``rule``, when known).

        Raises:
            OverBudget: over :data:`MAX_SYMBOL_CHARS` characters in this run.
        """
        made = "".join(parts)
        self.chars -= len(made)
        if self.chars < 0:
            raise OverBudget(f"over {MAX_SYMBOL_CHARS:,} characters of new symbols built by cat", rule)
        return made

    def spend(self, rows: int, rule: int | Rule | None = None) -> None:
        """Count ``rows`` new rows (or values built by ``rule``).

        Raises:
            OverBudget: over the run's row limit.
        """
        self.rows -= rows
        if self.rows < 0:
            raise OverBudget(f"over {self.row_limit:,} derived rows", rule)
        self.check_time(rule)


def engine_seconds() -> float:
    """The time limit of one engine run: ``$SHARDLOG_ENGINE_SECONDS`` or :data:`ENGINE_SECONDS`.

    Raises:
        InputError: the variable is set to something else than a positive number.
    """
    text = os.environ.get(SECONDS_VAR, "").strip()
    if not text:
        return ENGINE_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        from analyzer.errors import InputError, escape

        raise InputError(f"${SECONDS_VAR}={escape(text[:40])}: not a positive number of seconds")
    return value


def limit_error(engine: str, program: Program, rule: int | Rule | None, what: str) -> DerivationLimit:
    """The one-line error of a run stopped at a limit: naming the rule (an index in
    ``program.rules`` or the rule; its ``file:line`` is the error's location) when it is known,
    else the rules that can build new values from derived ones (:func:`value_builders`)."""
    if rule is not None:
        r = program.rules[rule] if isinstance(rule, int) else rule
        return DerivationLimit(
            f"derivation stopped: {what} ({engine} engine limits) while evaluating the rule deriving "
            f"{r.head.relation}: does it build new values from derived ones forever?",
            r.loc,
        )
    builders = sorted(value_builders(program), key=lambda i: _in_library(program.rules[i].loc.file))
    shown = ", ".join(f"{program.rules[i].loc} ({program.rules[i].head.relation})" for i in builders[:3])
    more = f" and {len(builders) - 3} more" if len(builders) > 3 else ""
    who = (
        f"recursive rules that build new values from derived ones: {shown}{more}"
        if builders
        else "no recursive rule builds new values: a join too large for the limits?"
    )
    return DerivationLimit(
        f"derivation stopped: {what} ({engine} engine limits; {engine} does not say which rule); {who}"
    )


def _in_library(file: str | None) -> bool:
    """Whether a rule file is one of the bundled library's (a user's rules are named first)."""
    from pathlib import Path

    from analyzer.solve.rulebook import rules_dir, schemas_dir

    if not file:
        return True
    folders = {rules_dir().resolve(), schemas_dir().resolve()}
    return any(folder in Path(file).resolve().parents for folder in folders)


def value_builders(program: Program) -> list[int]:
    """Indices of the rules that can derive without end: in a recursive component (a body atom
    of the head's component) and building a value (arithmetic or a functor in the head or in a
    comparison of the body). Kept on the program."""
    return program.kept("_value_builders", _value_builders)


def _value_builders(program: Program) -> list[int]:
    comp = {name: i for i, names in enumerate(strata(program)) for name in names}
    out = []
    for i, rule in enumerate(program.rules):
        home = comp.get(rule.head.relation)
        recursive = any(isinstance(lit, Atom) and comp.get(lit.relation) == home for lit in rule.body)
        if recursive and builds_value(rule):
            out.append(i)
    return out


def built_terms(rule: Rule) -> list:
    """The terms of ``rule`` that build a value reaching its head: arithmetic or a functor as a
    head argument, or assigned by a body ``=`` to a variable of the head that no positive body
    atom binds (``j = i + 1``). A value tested only (``x < y + 1``) builds nothing new."""
    head_vars = {t.name for t in rule.head.args if isinstance(t, Var)}
    bound = {t.name for lit in rule.body if isinstance(lit, Atom) for t in lit.args if isinstance(t, Var)}
    out = [t for t in rule.head.args if isinstance(t, (BinOp, Call))]
    for lit in rule.body:
        if isinstance(lit, Constraint) and lit.op == "=" and not isinstance(lit.right, Aggregate):
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if (isinstance(var, Var) and var.name in head_vars and var.name not in bound
                        and isinstance(expr, (BinOp, Call))):
                    out.append(expr)
    return out


def builds_value(rule: Rule) -> bool:
    """Whether ``rule`` builds a value that reaches its head (:func:`built_terms`)."""
    return bool(built_terms(rule))
