"""The node lines of a torch.fx dump, read without building a Python syntax tree.

:func:`analyzer.importers.fx.parse.parse_fx_text` reads a dump with :func:`ast.parse`, whose tree takes
about 8 us a statement (9 ms of the three files of GraphGuard's GPT TP-2 case). Nearly every
line of a dump is one node, in a small subset of Python::

    mm: "f32[8, 1536]" = torch.ops.aten.mm.default(view, t);  view = t = None
    split = torch.ops.aten.split.Tensor(x, 768)
    getitem: "f32[8, 768]" = split[0]
    _tensor_constant0 = self._tensor_constant0

:func:`split_dump` reads such lines into :class:`FastLine` records and blanks them in the text
it hands to :func:`ast.parse` (the *skeleton*: the class, the ``forward`` signature, the
``return``, and every line it does not read). That is the program ``ast`` would read, without
those statements, when

- the text has no triple quote, backslash, tab, carriage return, form feed, NUL or other line
  separator (so every string ends on its line and lines are ``\\n``-separated);
- each line read starts outside any bracket (counted over the other lines, strings and
  comments left out) and matches :data:`_LINE` as a whole: one node statement and
  ``x = None`` statements, arguments that are numbers, plain strings, (dotted) names, flat lists
  of numbers and names, and ``device(type='cuda', index=0)``, each as torch.fx prints them
  (``, `` between arguments, `` = `` in keyword arguments); no name is a keyword and no
  keyword argument is repeated or followed by a positional one;
- :meth:`FastDump.fits` the skeleton's ``forward``: each line read is at its body's
  indentation, after its ``def`` line and before its last statement.

Anything else, and any error while reading, sends the whole text through :mod:`ast` (the
caller's job), so messages and results are those of the ``ast`` reader.
"""

from __future__ import annotations

import ast
import keyword
import re

__all__ = ["FastDump", "FastLine", "NotFast", "split_dump"]

#: what makes blanking lines unsafe (module docstring); found by ``in``, 8x faster than one regex
_UNSAFE = ('"""', "'''", "\\", "\t", "\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# the patterns are kept small (each process compiles them: 3 ms for one validating every
# argument); what they let through loosely (_ATOM, _DEVICE) is checked by _simple and _device
_ATOM = r"[-+.0-9A-Za-z_]+"  # a number or a dotted name, maybe negated
_LIST = rf"\[(?:{_ATOM}(?:, {_ATOM})*)?\]"
_DEVICE = r"(?:torch\.)?device\([^()'\"]*(?:'[A-Za-z0-9_:]*'[^()'\"]*)*\)"
_ITEM = re.compile(
    rf"(?:(?P<kw>{_NAME}) = )?(?:(?P<list>{_LIST})|(?P<dev>{_DEVICE})|'(?P<sq>[^'\"\n]*)'|\"(?P<dq>[^'\"\n]*)\""
    rf"|(?P<atom>{_ATOM}))",
    re.ASCII,
)
_NUMBER = re.compile(r"[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|0|[1-9][0-9]*", re.ASCII)
#: a node line as torch.fx prints it (module docstring); the arguments are read by _arguments
_LINE = re.compile(
    rf'( +)({_NAME})(?:: "([^"\n]*)")? = '
    rf"(?:(torch\.ops\.{_NAME}(?:\.{_NAME})*)\((.*)\)|({_NAME})\[(-?(?:0|[1-9][0-9]*))\]|self\.({_NAME}))"
    rf"((?:; +{_NAME}(?: = {_NAME})* = None)*) *",
    re.ASCII,
)
_NOT_CODE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|#[^\n]*")
_NO_OPENERS = str.maketrans("", "", "([{")
_NO_CLOSERS = str.maketrans("", "", ")]}")
_CONSTANTS = {"None": None, "True": True, "False": False}
_KEYWORDS = frozenset(keyword.kwlist)


class NotFast(Exception):
    """A line outside the grammar this module reads."""


class FastLine:
    """One node line.

    Attributes:
        line: 1-based line number.
        indent: its indentation (spaces).
        name: the assigned name.
        annotation: the annotation's text, None without one.
        form: ``"call"`` (``target``: the dotted callee, ``args`` and ``kwargs``: parsed
            values), ``"getitem"`` (``target``: the base name, ``args``: ``[index]``) or
            ``"get_attr"`` (``target``: the attribute of ``self``).

    Parsed values are ``("const", v)``, ``("name", id)``, ``("attr", dotted)``, ``("neg", value)``,
    ``("list", [values])`` and ``("device", text)`` (``ast.unparse`` of a ``device(...)`` call).
    """

    __slots__ = ("line", "indent", "name", "annotation", "form", "target", "args", "kwargs")

    def __init__(self, line, indent, name, annotation, form, target, args, kwargs) -> None:
        self.line = line
        self.indent = indent
        self.name = name
        self.annotation = annotation
        self.form = form
        self.target = target
        self.args = args
        self.kwargs = kwargs


class FastDump:
    """The skeleton text (the lines read blanked) and the lines read, in order."""

    __slots__ = ("skeleton", "lines")

    def __init__(self, skeleton: str, lines: list[FastLine]) -> None:
        self.skeleton = skeleton
        self.lines = lines

    def fits(self, fn: ast.FunctionDef) -> bool:
        """Whether every line read is a statement of ``fn``'s body (``fn``: the skeleton's
        ``forward``): at its indentation, after its ``def`` line, before its last statement."""
        body = fn.body
        indent, first, last = body[0].col_offset, fn.lineno, body[-1].lineno
        return all(x.indent == indent and first < x.line < last for x in self.lines)


def split_dump(text: str) -> FastDump | None:
    """The node lines of ``text`` and the rest of it (module docstring); None when the text
    holds something that makes blanking lines unsafe."""
    if any(unsafe in text for unsafe in _UNSAFE):
        return None
    lines = text.split("\n")
    read: list[FastLine] = []
    depth = 0
    for i, line in enumerate(lines):
        if depth == 0:
            m = _LINE.fullmatch(line)
            if m is not None:
                try:
                    read.append(_read_line(m, i + 1))
                    lines[i] = ""
                    continue
                except (NotFast, ValueError):  # ValueError: an int too long to convert
                    pass
        if line.lstrip(" ").startswith("#"):
            continue  # a comment line: no brackets
        code = _NOT_CODE.sub("", line)
        depth += len(code.translate(_NO_CLOSERS)) - len(code.translate(_NO_OPENERS))
        if depth < 0:
            return None  # more closing than opening brackets: let ast say where
    return FastDump("\n".join(lines), read)


def _read_line(m: re.Match, number: int) -> FastLine:
    indent, name, annotation, callee, args_text, base, index, attr, tail = m.groups()
    if name in _KEYWORDS or (annotation is not None and annotation.startswith("Sym(")):
        raise NotFast
    for stmt in tail.split(";")[1:]:  # x = None, x = y = None
        if any(t.strip() in _KEYWORDS for t in stmt.split(" = ")[:-1]):
            raise NotFast
    if callee is not None:
        _check_dotted(callee)
        if annotation is None and callee.startswith("torch.ops.aten._assert_scalar"):
            raise NotFast
        args, kwargs = _arguments(args_text)
        return FastLine(number, len(indent), name, annotation, "call", callee, args, kwargs)
    if base is not None:
        if base in _KEYWORDS:
            raise NotFast
        return FastLine(number, len(indent), name, annotation, "getitem", base, [_number(index)], [])
    if attr in _KEYWORDS:
        raise NotFast
    return FastLine(number, len(indent), name, annotation, "get_attr", attr, [], [])


def _check_dotted(text: str) -> None:
    if not _KEYWORDS.isdisjoint(text.split(".")):
        raise NotFast


def _arguments(text: str) -> tuple[list, list]:
    """The arguments of a call: items separated by ``, `` up to the end of ``text``."""
    args: list = []
    kwargs: list = []
    at, end = 0, len(text)
    while at < end:
        m = _ITEM.match(text, at)
        if m is None:
            raise NotFast
        kw = m["kw"]
        if kw is not None:
            if kw in _KEYWORDS or any(k == kw for k, _ in kwargs):
                raise NotFast
            kwargs.append((kw, _item(m)))
        elif kwargs:
            raise NotFast  # a positional argument after a keyword one: a syntax error
        else:
            args.append(_item(m))
        at = m.end()
        if at < end:
            if not text.startswith(", ", at) or at + 2 == end:
                raise NotFast
            at += 2
    return args, kwargs


def _item(m: re.Match) -> tuple:
    kind = m.lastgroup
    text = m[kind]
    if kind == "list":
        inner = text[1:-1]
        return "list", [_simple(t) for t in inner.split(", ")] if inner else []
    if kind == "dev":
        return "device", _device(text)
    if kind in ("sq", "dq"):
        return "const", text
    return _simple(text)


def _simple(text: str) -> tuple:
    """A number or a (dotted) name, maybe negated."""
    if not text:
        raise NotFast  # "-" alone
    if text[0] == "-":
        if text[1:2] == "-":
            raise NotFast  # fx prints one sign; "----1" is left to ast (and its depth limit)
        return "neg", _simple(text[1:])
    if text[0] in "0123456789":
        if not _NUMBER.fullmatch(text):
            raise NotFast
        return "const", (int(text) if text.isdigit() else float(text))
    if text in _CONSTANTS:
        return "const", _CONSTANTS[text]
    parts = text.split(".")
    if not all(p.isidentifier() for p in parts) or not _KEYWORDS.isdisjoint(parts):
        raise NotFast  # not a name (e.g. "+1", "a..b"), or a keyword
    return ("attr" if len(parts) > 1 else "name"), text


def _device(text: str) -> str:
    """``ast.unparse`` of a ``device(type='cuda', index=0)`` call: its text, when every
    argument is ``name=`` a plain string or an integer (else NotFast)."""
    if not text.isascii():
        raise NotFast  # Python reads non-ASCII names and digits otherwise (NFKC)
    inner = text[text.index("(") + 1 : -1]
    names = []
    for arg in inner.split(", "):
        name, eq, value = arg.partition("=")
        plain = value[:1] == "'" and value[-1:] == "'" and len(value) >= 2
        number = value.isdigit() and (value == "0" or value[0] != "0")
        if not eq or not name.isidentifier() or name in _KEYWORDS or name in names or not (plain or number):
            raise NotFast  # a keyword, a repeated or positional argument, or another value
        names.append(name)
    return text


def _number(text: str) -> tuple:
    """An integer index, maybe negated (as _LINE matched it)."""
    if text[0] == "-":
        return "neg", ("const", int(text[1:]))
    return "const", int(text)
