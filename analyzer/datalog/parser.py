"""Parse Soufflé-subset Datalog files into a checked :class:`~analyzer.datalog.syntax.Program`.

The grammar is ``grammar.lark`` (LALR, next to this module). Parsing happens in three steps:

1. Lark builds a tree for each file; ``#include "x.dl"`` items are resolved relative to the
   including file and parsed in place (each file at most once, like ``#pragma once``).
2. A transformer turns the tree into syntax nodes and normalises rules: multiple heads and
   ``;`` disjunctions are split into several rules, and aggregates written anywhere but
   ``v = <aggregate>`` are bound to a fresh variable first.
3. :func:`analyzer.datalog.checks.check_program` checks declarations, arities, types, variable
   safety and stratification.

Every problem raises :class:`~analyzer.datalog.errors.DatalogError` with ``file:line:col``.
"""

from __future__ import annotations

import contextvars
import functools
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from analyzer.datalog.checks import check_program
from analyzer.datalog.errors import DatalogError, Loc
from analyzer.datalog.normalize import FreshVars
from analyzer.datalog.syntax import (
    Aggregate,
    Atom,
    BaseType,
    BinOp,
    BodyLiteral,
    Call,
    Const,
    Constraint,
    Decl,
    Fact,
    Negation,
    Program,
    Rule,
    Term,
    TypeDecl,
    Var,
    Wildcard,
    body_vars,
    term_vars,
)
from analyzer.errors import InputError
from analyzer.inputs.files import list_files, read_text

__all__ = ["SOUFFLE_RESERVED", "load_program", "parse_string", "read_decls"]

_GRAMMAR = Path(__file__).with_name("grammar.lark")
_BUILTIN_TYPES: dict[str, BaseType] = {"symbol": "symbol", "number": "number"}
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_QUALIFIERS = {"btree", "brie", "eqrel", "inline", "no_inline", "magic", "no_magic", "overridable", "btree_delete"}
_KNOWN_DIRECTIVES = {".decl", ".type", ".input", ".output"}
#: Words Soufflé's scanner (src/parser/scanner.ll) returns as keyword tokens, so that they cannot
#: name a relation, column, type or variable there (functor names are called as functors here).
#: ``fold`` and ``__ITERATION__`` are keywords after Soufflé 2.5 and reserved here too.
SOUFFLE_RESERVED = frozenset(
    """
    as autoinc band bnot bor brie bshl bshr bshru btree btree_delete bxor cat contains count eqrel
    false fold inline input land lnot lor lxor magic match max mean min nil no_inline no_magic ord
    output overridable printsize range stateful strlen substr sum to_float to_number to_string
    to_unsigned true __FILE__ __INCL__ __ITERATION__ __LINE__
    """.split()
)
_RENAMES = {"count": "n_count' or 'cnt", "sum": "total", "min": "lo", "max": "hi", "as": "a_s", "cat": "cat_"}
_AGGREGATE_WORD = re.compile(r"(?<!\w)(count|sum|min|max)(?!\w)")
_NOT_CODE = re.compile(r'//[^\n]*|/\*(?:.|\n)*?\*/|"(?:\\.|[^"\\\n])*"')
_TOKEN_TEXT = {
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "DOT": ".",
    "COLON": ":",
    "SEMICOLON": ";",
    "BANG": "!",
    "LBRACE": "{",
    "RBRACE": "}",
    "PLUS": "+",
    "MINUS": "-",
    "STAR": "*",
    "SLASH": "/",
    "PERCENT": "%",
    "CMP": "comparison",
    "NAME": "name",
    "STRING": "string",
    "INT": "integer",
    "IF": ":-",
    "VBAR": "|",
    "EQUAL": "=",
    "$END": "end of file",
}


#: Block comments seen by the lexer during the current parse (doc comments are kept).
_COMMENTS: contextvars.ContextVar[list[Token]] = contextvars.ContextVar("dl_comments")


def _collect_comment(token: Token) -> Token:
    sink = _COMMENTS.get(None)
    if sink is not None:
        sink.append(token)
    return token


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(
        _GRAMMAR.read_text(encoding="utf-8"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        lexer_callbacks={"BLOCK_COMMENT": _collect_comment},
    )


# ---------------------------------------------------------------------------------------
# Raw items produced by the transformer (resolved into a Program by the loader).


@dataclass(frozen=True)
class _Include:
    path: str
    loc: Loc


@dataclass(frozen=True)
class _RawDecl:
    name: str
    columns: tuple[tuple[str, str, Loc], ...]
    doc: str | None
    loc: Loc


@dataclass(frozen=True)
class _IO:
    kind: str  # "input" | "output"
    names: tuple[tuple[str, Loc], ...]


@dataclass
class _Items:
    items: list[object] = field(default_factory=list)


def _reserved_error(word: str, role: str, loc: Loc) -> DatalogError:
    rename = _RENAMES.get(word, f"{word}_")
    return DatalogError(
        f"'{word}' is a reserved word in Soufflé and cannot be a {role} name; rename it (e.g. '{rename}')", loc
    )


def _check_name(token: Token | str, role: str, loc: Loc) -> None:
    """Raise a one-line error when ``token`` is one of :data:`SOUFFLE_RESERVED`."""
    if str(token) in SOUFFLE_RESERVED:
        raise _reserved_error(str(token), role, loc)


def _unescape(token: Token, loc: Loc) -> str:
    body = str(token)[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1]
            if nxt not in _ESCAPES:
                raise DatalogError(f"unknown escape sequence \\{nxt} in string", loc)
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _clean_doc(comment: str) -> str | None:
    text = comment[3:-2]
    lines = [re.sub(r"^\s*\* ?", "", line) for line in text.splitlines()]
    doc = textwrap.dedent("\n".join(lines)).strip()
    return doc or None


@v_args(meta=True)
class _ToSyntax(Transformer):
    """Lark tree -> raw items; rules are already normalised here."""

    def __init__(self, file: str | None, text: str, comments: list[Token]) -> None:
        super().__init__(visit_tokens=False)
        self.file = file
        self.text = text
        self.comments = comments

    # -- helpers ---------------------------------------------------------------------
    def _loc(self, meta: object) -> Loc:
        if getattr(meta, "empty", True):
            return Loc(self.file)
        return Loc(self.file, meta.line, meta.column)  # type: ignore[attr-defined]

    def _tloc(self, token: Token) -> Loc:
        return Loc(self.file, token.line, token.column)

    def _doc_for(self, start: int) -> str | None:
        best = None
        for tok in self.comments:
            if tok.end_pos is not None and tok.end_pos <= start:
                best = tok
        if best is None or not str(best).startswith("/**") or str(best) == "/**/":
            return None
        between = self.text[best.end_pos : start]
        if not re.fullmatch(r"\s*(\.decl\s*)?", between) or between.count("\n") > 1:
            return None
        return _clean_doc(str(best))

    # -- top level ---------------------------------------------------------------------
    def start(self, meta: object, children: list[object]) -> _Items:
        items: list[object] = []
        for child in children:
            if isinstance(child, list):
                items.extend(child)
            else:
                items.append(child)
        return _Items(items)

    def subtype(self, meta: object, children: list[Token]) -> TypeDecl:
        name, parent = children
        _check_name(name, "type", self._tloc(name))
        # The base type is resolved by the loader once all types are known.
        return TypeDecl(str(name), str(parent), "symbol", self._tloc(name))

    def type_equiv(self, meta: object, children: list[Token]) -> TypeDecl:
        raise DatalogError(
            f"unsupported construct: '.type {children[0]} = ...' (union/equivalence types); "
            "declare '.type T <: symbol' or '.type T <: number'",
            self._loc(meta),
        )

    def column(self, meta: object, children: list[Token]) -> tuple[str, str, Loc]:
        name, type_name = children
        _check_name(name, "column", self._tloc(name))
        return (str(name), str(type_name), self._tloc(type_name))

    def rel_decl(self, meta: object, children: list[object]) -> _RawDecl:
        name = children[0]
        assert isinstance(name, Token)
        _check_name(name, "relation", self._tloc(name))
        columns = tuple(c for c in children[1:] if c is not None)
        names = [c[0] for c in columns]  # type: ignore[index]
        for col_name in names:
            if names.count(col_name) > 1:
                raise DatalogError(f"column '{col_name}' appears twice in .decl {name}", self._tloc(name))
        start = meta.start_pos if not getattr(meta, "empty", True) else name.start_pos  # type: ignore[attr-defined]
        return _RawDecl(str(name), columns, self._doc_for(start), self._tloc(name))  # type: ignore[arg-type]

    def _io(self, kind: str, meta: object, children: list[object]) -> _IO:
        params = children[-1]
        if params is not None:
            raise DatalogError(
                f"unsupported construct: .{kind} parameters; the engines always use the default "
                "files <Relation>.facts (input) and <Relation>.csv (output)",
                self._loc(meta),
            )
        names = tuple((str(t), self._tloc(t)) for t in children[:-1] if isinstance(t, Token))
        return _IO(kind, names)

    def input_decl(self, meta: object, children: list[object]) -> _IO:
        return self._io("input", meta, children)

    def output_decl(self, meta: object, children: list[object]) -> _IO:
        return self._io("output", meta, children)

    def io_params(self, meta: object, children: list[object]) -> bool:
        return True

    def io_param(self, meta: object, children: list[object]) -> None:
        return None

    def include(self, meta: object, children: list[Token]) -> _Include:
        loc = self._loc(meta)
        return _Include(_unescape(children[0], loc), loc)

    # -- clauses -------------------------------------------------------------------------
    def fact(self, meta: object, children: list[Call]) -> Fact:
        call = children[0]
        _check_name(call.name, "relation", call.loc)
        values: list[str | int] = []
        for arg in call.args:
            if not isinstance(arg, Const):
                what = "variable" if isinstance(arg, (Var, Wildcard)) else "expression"
                raise DatalogError(f"fact {call.name}(...) has a {what} argument; facts must be constants", arg.loc)
            values.append(arg.value)
        return Fact(call.name, tuple(values), self._loc(meta))

    def rule(self, meta: object, children: list[object]) -> list[Rule]:
        loc = self._loc(meta)
        heads = [c for c in children if isinstance(c, Call)]
        disjuncts = [c for c in children if isinstance(c, list)]
        rules = []
        for head in heads:
            _check_name(head.name, "relation", head.loc)
            for conj in disjuncts:
                rules.append(_normalise_rule(Atom(head.name, head.args, head.loc), tuple(conj), loc))
        return rules

    def conj(self, meta: object, children: list[BodyLiteral]) -> list[BodyLiteral]:
        return list(children)

    def pos_atom(self, meta: object, children: list[Call]) -> Atom:
        call = children[0]
        _check_name(call.name, "relation", call.loc)
        return Atom(call.name, call.args, call.loc)

    def neg_atom(self, meta: object, children: list[Call]) -> Negation:
        call = children[0]
        _check_name(call.name, "relation", call.loc)
        return Negation(Atom(call.name, call.args, call.loc), self._loc(meta))

    def constraint(self, meta: object, children: list[object]) -> Constraint:
        left, op, right = children
        return Constraint(str(op), left, right, self._loc(meta))  # type: ignore[arg-type]

    def call(self, meta: object, children: list[object]) -> Call:
        name = children[0]
        assert isinstance(name, Token)
        args = tuple(c for c in children[1:] if c is not None)
        return Call(str(name), args, self._tloc(name))  # type: ignore[arg-type]

    # -- terms -------------------------------------------------------------------------
    def var(self, meta: object, children: list[Token]) -> Term:
        tok = children[0]
        if str(tok) == "_":
            return Wildcard(self._tloc(tok))
        _check_name(tok, "variable", self._tloc(tok))
        return Var(str(tok), self._tloc(tok))

    def string(self, meta: object, children: list[Token]) -> Const:
        loc = self._tloc(children[0])
        return Const(_unescape(children[0], loc), loc)

    def number(self, meta: object, children: list[Token]) -> Const:
        return Const(int(children[0]), self._tloc(children[0]))

    def neg(self, meta: object, children: list[Term]) -> Term:
        (arg,) = children
        if isinstance(arg, Const) and isinstance(arg.value, int):
            return Const(-arg.value, self._loc(meta))
        return BinOp("-", Const(0, arg.loc), arg, self._loc(meta))

    def _bin(self, op: str, meta: object, children: list[Term]) -> BinOp:
        left, right = children
        return BinOp(op, left, right, self._loc(meta))

    def add(self, meta: object, children: list[Term]) -> BinOp:
        return self._bin("+", meta, children)

    def sub(self, meta: object, children: list[Term]) -> BinOp:
        return self._bin("-", meta, children)

    def mul(self, meta: object, children: list[Term]) -> BinOp:
        return self._bin("*", meta, children)

    def div(self, meta: object, children: list[Term]) -> BinOp:
        return self._bin("/", meta, children)

    def mod(self, meta: object, children: list[Term]) -> BinOp:
        return self._bin("%", meta, children)

    def aggregate(self, meta: object, children: list[object]) -> Aggregate:
        op = children[0]
        assert isinstance(op, Token)
        if str(op) == "count":
            target, body = None, children[1]
        else:
            target, body = children[1], children[2]
        return Aggregate(str(op), target, tuple(body), self._tloc(op))  # type: ignore[arg-type]

    def agg_body(self, meta: object, children: list[list[BodyLiteral]]) -> list[BodyLiteral]:
        return children[0]

    def agg_single(self, meta: object, children: list[Call]) -> list[BodyLiteral]:
        call = children[0]
        _check_name(call.name, "relation", call.loc)
        return [Atom(call.name, call.args, call.loc)]


# ---------------------------------------------------------------------------------------
# Rule normalisation: aggregates only as `Var = Aggregate` constraints.


def _normalise_rule(head: Atom, body: tuple[BodyLiteral, ...], loc: Loc) -> Rule:
    used = {v.name for v in body_vars(body)} | {v.name for a in head.args for v in term_vars(a)}
    fresh = FreshVars(used, prefix="")  # used twice: no "_" (Soufflé reads "_x" as meant to occur once)
    extra: list[Constraint] = []

    def lift(term: Term) -> Term:
        """Replace every aggregate inside ``term`` by a fresh variable bound in ``extra``."""
        if isinstance(term, Aggregate):
            _reject_nested(term)
            v = fresh.var("agg", term.loc)
            extra.append(Constraint("=", v, term, term.loc))
            return v
        if isinstance(term, BinOp):
            return BinOp(term.op, lift(term.left), lift(term.right), term.loc)
        if isinstance(term, Call):
            return Call(term.name, tuple(lift(a) for a in term.args), term.loc)
        return term

    new_head = Atom(head.relation, tuple(lift(a) for a in head.args), head.loc)
    new_body: list[BodyLiteral] = []
    for lit in body:
        if isinstance(lit, Atom):
            new_body.append(Atom(lit.relation, tuple(lift(a) for a in lit.args), lit.loc))
        elif isinstance(lit, Negation):
            atom = lit.atom
            new_body.append(Negation(Atom(atom.relation, tuple(lift(a) for a in atom.args), atom.loc), lit.loc))
        elif lit.op == "=" and isinstance(lit.right, Aggregate) and isinstance(lit.left, (Var, Const)):
            _reject_nested(lit.right)
            new_body.append(lit)
        elif lit.op == "=" and isinstance(lit.left, Aggregate) and isinstance(lit.right, (Var, Const)):
            _reject_nested(lit.left)
            new_body.append(Constraint("=", lit.right, lit.left, lit.loc))
        else:
            new_body.append(Constraint(lit.op, lift(lit.left), lift(lit.right), lit.loc))
    return Rule(new_head, tuple(new_body) + tuple(extra), loc)


def _reject_nested(agg: Aggregate) -> None:
    terms: list[Term] = [] if agg.target is None else [agg.target]
    for lit in agg.body:
        if isinstance(lit, Atom):
            terms.extend(lit.args)
        elif isinstance(lit, Negation):
            terms.extend(lit.atom.args)
        else:
            terms.extend((lit.left, lit.right))
    stack = list(terms)
    while stack:
        t = stack.pop()
        if isinstance(t, Aggregate):
            raise DatalogError("unsupported construct: aggregate nested inside an aggregate", t.loc)
        if isinstance(t, BinOp):
            stack.extend((t.left, t.right))
        elif isinstance(t, Call):
            stack.extend(t.args)


# ---------------------------------------------------------------------------------------
# Parse errors -> one-line DatalogError.


def _describe_expected(expected: Iterable[str]) -> str:
    names = sorted({_TOKEN_TEXT.get(e, e.lower().replace("__anon", "?")) for e in expected if not e.startswith("__")})
    if not names:
        return ""
    shown = ", ".join(f"'{n}'" if len(n) <= 2 else n for n in names[:8])
    return f" (expected {shown}{', ...' if len(names) > 8 else ''})"


def _hint(text: str, pos: int) -> str | None:
    rest = text[pos:]
    before = text[:pos]
    m = re.match(r"\.([A-Za-z_][\w-]*)", rest)
    if m and f".{m.group(1)}" not in _KNOWN_DIRECTIVES:
        return f"unsupported directive '.{m.group(1)}' (supported: .type, .decl, .input, .output)"
    m = re.match(r"#\s*(\w+)", rest)
    if m and m.group(1) != "include":
        return f"unsupported preprocessor directive '#{m.group(1)}' (only #include is supported)"
    m = re.search(r"\)\s*([a-z_]+)\s*$", before)
    if m and m.group(1) in _QUALIFIERS:
        return f"unsupported construct: relation qualifier '{m.group(1)}'"
    m = re.match(r"([a-z_]+)\b", rest)
    if m and m.group(1) in _QUALIFIERS and re.search(r"\)\s*$", before):
        return f"unsupported construct: relation qualifier '{m.group(1)}'"
    if rest[:1] == "[":
        return "unsupported construct: records '[...]'"
    if rest[:1] == "$":
        return "unsupported construct: algebraic data types '$Branch(...)'"
    if rest[:1] == "@":
        return "unsupported construct: user-defined functors '@f(...)'"
    if re.match(r"\.\d", rest) and re.search(r"\d$", before):
        return "unsupported construct: float constants"
    return None


def _aggregate_word_misused(text: str, pos: int) -> tuple[int, str] | None:
    """``count``/``sum``/``min``/``max`` where a term may start are aggregate keywords; one that
    is not followed by an aggregate's ``:`` before the error (``R(count) :- ...``) is a variable
    named after a reserved word. Returns its offset and the word."""
    code = _NOT_CODE.sub(lambda m: " " * len(m.group()), text[:pos])  # offsets kept
    neck = code.rfind(":-")
    clause_start = max(code.rfind(".") + 1, neck + 2 if neck >= 0 else 0)
    clause = code[clause_start:]
    for m in reversed(list(_AGGREGATE_WORD.finditer(clause))):
        after = clause[m.end() :]
        if not re.search(r":(?!-)", after):
            return clause_start + m.start(), m.group(1)
    return None


def _gap_before(text: str, pos: int) -> str:
    """The whitespace (and comments) between the previous token and ``pos``."""
    stripped = re.sub(r"//[^\n]*", "", text[:pos])
    return stripped[len(stripped.rstrip()) :]


def _parse_error(exc: UnexpectedInput, text: str, file: str | None) -> DatalogError:
    line = getattr(exc, "line", None)
    col = getattr(exc, "column", None)
    pos = getattr(exc, "pos_in_stream", None)
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        pos = len(text)
        line, col = text.count("\n") + 1, len(text) - text.rfind("\n")
    loc = Loc(
        file, line if isinstance(line, int) and line > 0 else None, col if isinstance(col, int) and col > 0 else None
    )
    hint = _hint(text, pos) if isinstance(pos, int) else None
    word = _aggregate_word_misused(text, pos) if isinstance(pos, int) and not hint else None
    if word is not None:
        at, name = word
        return _reserved_error(name, "variable", Loc(file, text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)))
    if hint:
        return DatalogError(hint, loc)
    if isinstance(exc, UnexpectedCharacters):
        return DatalogError(f"parse error: unexpected character {exc.char!r}", loc)
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        expected = getattr(exc, "expected", ())
        if "DOT" in expected:
            return DatalogError("parse error: unexpected end of file; missing '.' at the end of the last clause?", loc)
        return DatalogError(f"parse error: unexpected end of file{_describe_expected(expected)}", loc)
    if isinstance(exc, UnexpectedToken):
        if "DOT" in exc.expected and isinstance(pos, int) and "\n" in _gap_before(text, pos):
            return DatalogError(
                f"parse error: unexpected {str(exc.token)!r}; missing '.' at the end of the previous clause?", loc
            )
        return DatalogError(f"parse error: unexpected {str(exc.token)!r}{_describe_expected(exc.expected)}", loc)
    return DatalogError(f"parse error: {str(exc).splitlines()[0]}", loc)


#: Deepest parse tree of a file (the bundled library's is 12): a deeper one (``1+1+...+1`` of
#: 900 terms) is an error, before the transformer and the checks recurse into it.
MAX_TREE_DEPTH = 100


def _check_depth(tree: Tree, file: str | None) -> None:
    """Raise a DatalogError at the first subtree nested over :data:`MAX_TREE_DEPTH` levels."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, Tree):
            continue
        if depth > MAX_TREE_DEPTH:
            meta = node.meta
            loc = Loc(file, getattr(meta, "line", 0) or 0, getattr(meta, "column", 0) or 0)
            raise DatalogError(f"expression nested too deeply (over {MAX_TREE_DEPTH} levels of the parse tree)", loc)
        stack.extend((child, depth + 1) for child in node.children)


def _parse_items(text: str, file: str | None) -> list[object]:
    comments: list[Token] = []
    token = _COMMENTS.set(comments)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _parse_error(exc, text, file) from None
    finally:
        _COMMENTS.reset(token)
    _check_depth(tree, file)
    try:
        return _ToSyntax(file, text, comments).transform(tree).items
    except VisitError as exc:
        if isinstance(exc.orig_exc, DatalogError):
            raise exc.orig_exc from None
        raise


# ---------------------------------------------------------------------------------------
# Loading files into a Program.


class _Loader:
    def __init__(self) -> None:
        self.seen: set[Path] = set()
        self.files: list[str] = []
        self.types: dict[str, TypeDecl] = {}
        self.raw_decls: dict[str, _RawDecl] = {}
        self.io: list[_IO] = []
        self.rules: list[Rule] = []
        self.facts: list[Fact] = []

    def load_file(self, path: Path, include_loc: Loc | None = None) -> None:
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): read_text names it
            resolved = path.absolute()
        if resolved in self.seen:
            return
        self.seen.add(resolved)
        try:
            text = read_text(path, "Datalog file", limit="rules")
        except InputError as exc:
            raise DatalogError(str(exc), include_loc) from None
        self.files.append(str(path))
        self.add_text(text, str(path), path.parent)

    def add_text(self, text: str, file: str | None, base_dir: Path) -> None:
        for item in _parse_items(text, file):
            if isinstance(item, _Include):
                target = (base_dir / item.path) if not Path(item.path).is_absolute() else Path(item.path)
                if not target.exists():
                    raise DatalogError(f"#include: no such file {item.path!r} (looked in {base_dir})", item.loc)
                self.load_file(target, item.loc)
            elif isinstance(item, TypeDecl):
                if item.name in self.types or item.name in _BUILTIN_TYPES:
                    where = self.types[item.name].loc if item.name in self.types else "built in"
                    raise DatalogError(f"type {item.name} declared twice (first: {where})", item.loc)
                self.types[item.name] = item
            elif isinstance(item, _RawDecl):
                if item.name in self.raw_decls:
                    first = self.raw_decls[item.name].loc
                    raise DatalogError(f"relation {item.name} declared twice (first at {first})", item.loc)
                self.raw_decls[item.name] = item
            elif isinstance(item, _IO):
                self.io.append(item)
            elif isinstance(item, Fact):
                self.facts.append(item)
            elif isinstance(item, Rule):
                self.rules.append(item)
            else:  # pragma: no cover - the transformer only produces the kinds above
                raise TypeError(f"unexpected item {item!r}")

    def _base_type(self, name: str, loc: Loc) -> BaseType:
        seen: list[str] = []
        current = name
        while current not in _BUILTIN_TYPES:
            if current in ("unsigned", "float"):
                raise DatalogError(f"unsupported construct: type '{current}' (only symbol and number)", loc)
            if current not in self.types:
                raise DatalogError(f"unknown type '{current}'", loc)
            if current in seen:
                raise DatalogError(f"type {name} is defined in terms of itself", loc)
            seen.append(current)
            current = self.types[current].parent
        return _BUILTIN_TYPES[current]

    def build(self) -> Program:
        types = {n: TypeDecl(n, t.parent, self._base_type(t.parent, t.loc), t.loc) for n, t in self.types.items()}
        decls: dict[str, Decl] = {}
        for name, raw in self.raw_decls.items():
            bases = tuple(self._base_type(type_name, loc) for _, type_name, loc in raw.columns)
            decls[name] = Decl(
                name=name,
                columns=tuple((c, t) for c, t, _ in raw.columns),
                base_types=bases,
                doc=raw.doc,
                source=raw.loc.file,
                loc=raw.loc,
            )
        inputs: list[str] = []
        outputs: list[str] = []
        for io in self.io:
            target = inputs if io.kind == "input" else outputs
            for name, loc in io.names:
                if name not in decls:
                    raise DatalogError(f".{io.kind} of undeclared relation {name}", loc)
                if name not in target:
                    target.append(name)
        return Program(
            types=types,
            decls=decls,
            inputs=inputs,
            outputs=outputs,
            rules=list(self.rules),
            facts=list(self.facts),
            files=list(self.files),
        )


def _expand(paths: Sequence[Path | str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        try:
            if path.is_dir():
                out.extend(list_files(path, ".dl", "rules folder"))
            elif path.exists() or path.is_symlink():
                out.append(path)  # checked when read
            else:
                raise DatalogError(f"no such Datalog file or directory: {path}")
        except InputError as exc:
            raise DatalogError(str(exc)) from None
    return out


def load_program(paths: Sequence[Path | str], *, check: bool = True) -> Program:
    """Parse several Datalog files into one program.

    Args:
        paths: Files to read, in order; a directory stands for its ``*.dl`` files (recursively,
            sorted). ``#include`` directives are followed; each file is read at most once.
        check: Run the semantic checks (declarations, arity, types, safety, stratification).

    Returns:
        The program.

    Raises:
        DatalogError: On a missing file, a parse error or a failed check.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    loader = _Loader()
    for path in _expand(paths):
        loader.load_file(path)
    program = loader.build()
    if check:
        check_program(program)
    return program


def parse_string(
    text: str, *, filename: str | None = None, base_dir: Path | str | None = None, check: bool = True
) -> Program:
    """Parse Datalog source text into a program.

    Args:
        text: The source.
        filename: Name used in error locations (default ``<string>``).
        base_dir: Directory ``#include`` paths are resolved against (default: the current one).
        check: Run the semantic checks.

    Returns:
        The program.

    Raises:
        DatalogError: On a parse error or a failed check.
    """
    loader = _Loader()
    loader.add_text(text, filename, Path(base_dir) if base_dir is not None else Path.cwd())
    program = loader.build()
    if check:
        check_program(program)
    return program


def read_decls(paths: Sequence[Path | str]) -> dict[str, Decl]:
    """Read relation declarations (names, column names/types, docs) from schema files.

    This is how the rest of the project learns relation names and column order: the
    ``schemas/*.dl`` files are the only copy of the schema.

    Args:
        paths: Schema files or directories (see :func:`load_program`).

    Returns:
        Declarations by relation name, in declaration order.

    Raises:
        DatalogError: If the files do not parse or do not check.
    """
    return load_program(paths).decls
