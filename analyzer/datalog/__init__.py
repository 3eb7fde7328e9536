"""Front end for the Soufflé-syntax Datalog subset the analysis rules are written in.

``load_program`` parses and checks ``.dl`` files into a :class:`Program` (see
``docs/datalog_subset.md`` for the subset); ``read_decls`` is how the rest of the project
learns relation names and column order from ``schemas/*.dl``; the ``*_facts_dir`` helpers
read and write Soufflé's tab-separated fact files. Engines live in :mod:`analyzer.engines`;
golden-case testing of rules is in :mod:`analyzer.datalog.golden`. The parser (and lark) is
imported on first use of one of its functions: a check whose program comes from the cache
never needs it.
"""

from __future__ import annotations

from analyzer.datalog.errors import DatalogError, Loc
from analyzer.datalog.facts_io import (
    read_facts_dir,
    read_relation_file,
    write_facts_dir,
    write_relation_file,
)
from analyzer.datalog.printer import to_souffle
from analyzer.datalog.strata import strata
from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    BinOp,
    Call,
    Const,
    Constraint,
    Decl,
    Fact,
    Negation,
    Program,
    Rule,
    TypeDecl,
    Var,
    Wildcard,
)

__all__ = [
    "Aggregate",
    "Atom",
    "BinOp",
    "Call",
    "Const",
    "Constraint",
    "DatalogError",
    "Decl",
    "Fact",
    "Loc",
    "Negation",
    "Program",
    "Rule",
    "TypeDecl",
    "Var",
    "Wildcard",
    "load_program",
    "parse_string",
    "read_decls",
    "read_facts_dir",
    "read_relation_file",
    "strata",
    "to_souffle",
    "write_facts_dir",
    "write_relation_file",
]

_PARSER_NAMES = frozenset({"load_program", "parse_string", "read_decls"})


def __getattr__(name: str):
    if name in _PARSER_NAMES:
        from analyzer.datalog import parser

        return getattr(parser, name)
    raise AttributeError(f"module 'analyzer.datalog' has no attribute {name!r}")
