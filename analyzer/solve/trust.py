"""The trust boundary of user rules (``--rules DIR``).

User rule files extend the library the way its transfer and collective rules do: they derive
the layout of a node's output (``OutLayout``), a rank's piece of a value after a collective
(``Piece``), the layout of a node's input some parallel forms rewrite (``InPiece``), the ops
that have a rule (``KnownOp``), and relations they declare themselves. They cannot derive the
relations that make the verdict or that the core library derives from the facts: every
relation declared in ``schemas/`` (the facts, ``Holds``, ``Pair``, ``OutputRelation``,
``Frontier``, ``Hint``, the ``Check_*`` relations, ...), ``rules/core/`` and
``rules/diagnose/``, except the extension points above. One line in a user file such as
``OutputRelation(s, "Replicate", -1, "") :- GraphOutput("seq", s, _).`` would otherwise turn
any graph into ``verified``.

A user rule that derives an extension point wrongly is still a wrong rule: ``--numeric``
runs the graphs and reports the error of each output.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from analyzer.errors import InputError
from analyzer.solve.rulebook import rules_dir, schemas_dir

__all__ = ["EXTENSION_POINTS", "check_user_files", "check_user_rules", "protected_relations"]

#: Relations of the schema and the core library that user rules may derive.
EXTENSION_POINTS = frozenset({"OutLayout", "Piece", "InPiece", "KnownOp"})


def protected_relations(program) -> frozenset[str]:
    """The relations user rules may not derive: declared in ``schemas/``, ``rules/core/`` or
    ``rules/diagnose/``, except :data:`EXTENSION_POINTS`."""
    folders = {schemas_dir().resolve(), (rules_dir() / "core").resolve(), (rules_dir() / "diagnose").resolve()}
    out = set()
    for name, decl in program.decls.items():
        if decl.source and Path(decl.source).resolve().parent in folders and name not in EXTENSION_POINTS:
            out.add(name)
    return frozenset(out)


def check_user_files(user_files: Sequence[str | Path], library) -> None:
    """:func:`check_user_rules` of the user files alone, parsed without the library (fast: a
    refused or malformed user file is reported without parsing and checking the library's
    ~1,100 rules when the program cache does not hold this combination yet).

    Args:
        user_files: the ``*.dl`` files of the ``--rules`` folders.
        library: the bundled program (its declarations say what is protected).

    Raises:
        InputError: as :func:`check_user_rules`.
        DatalogError: a user file does not parse.
    """
    from analyzer.datalog import load_program
    from analyzer.solve.rulebook import schema_files

    schemas = schema_files()  # the types user declarations use
    parsed = load_program([*schemas, *user_files], check=False)
    bundled = {str(p) for p in schemas}
    user = [c for c in [*parsed.rules, *parsed.facts] if c.loc.file not in bundled]
    _refuse(user, protected_relations(library))


def check_user_rules(program, bundled_files: Collection[str | Path]) -> None:
    """Refuse a rule or fact of a user file (any file not in ``bundled_files``) whose head is
    a :func:`protected_relations` relation.

    Raises:
        InputError: ``file:line:col: a --rules file cannot derive R (...)``.
    """
    bundled = {str(p) for p in bundled_files}
    user = [c for c in [*program.rules, *program.facts] if c.loc.file is not None and c.loc.file not in bundled]
    if not user:
        return
    _refuse(user, protected_relations(program))


def _refuse(clauses, protected: frozenset[str]) -> None:
    for clause in sorted(clauses, key=lambda c: (c.loc.file or "", c.loc.line or 0)):
        relation = clause.head.relation if hasattr(clause, "head") else clause.relation
        if relation in protected:
            raise InputError(
                f"{clause.loc}: a --rules file cannot derive {relation}: it is a relation of the verdict or of "
                f"the core library (user rules derive {', '.join(sorted(EXTENSION_POINTS))} and relations "
                "they declare)"
            )
