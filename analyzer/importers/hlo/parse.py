"""XLA HLO text -> :class:`HloModule` (computations of instructions), by the Lark grammar
``hlo.lark`` beside this module.

The text is what ``HloModule::ToString`` prints (xla/hlo/ir/hlo_instruction.cc): one
``HloModule`` header, computations ``[ENTRY] %name (params) -> shape { ... }``, one
instruction per line ``[ROOT] %name = shape opcode(operands), attr=value, ...``. Attribute
values stay as nested :class:`Group` s of tokens; :mod:`analyzer.importers.hlo.attrs` decodes
the ones the importer reads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput

from analyzer.errors import InputError

__all__ = ["Computation", "Group", "HloModule", "Instruction", "Shape", "parse_hlo", "parse_hlo_text"]

_GRAMMAR = Path(__file__).with_name("hlo.lark")

#: HLO element types -> the dtype codes of the importers' TensorType (analyzer.importers.fx.emit.ONNX_DTYPES)
DTYPES = {
    "pred": "b8",
    "s8": "i8",
    "s16": "i16",
    "s32": "i32",
    "s64": "i64",
    "u8": "u8",
    "u16": "u16",
    "u32": "u32",
    "u64": "u64",
    "f16": "f16",
    "bf16": "bf16",
    "f32": "f32",
    "f64": "f64",
}


@dataclass(frozen=True)
class Shape:
    """An array shape (``dtype`` is the HLO element type, e.g. ``f16``; ``dims`` static sizes)
    or, with ``elements`` set, a tuple shape."""

    dtype: str
    dims: tuple[int, ...] = ()
    elements: tuple[Shape, ...] | None = None

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    def __str__(self) -> str:
        if self.elements is not None:
            return "(" + ", ".join(map(str, self.elements)) + ")"
        return f"{self.dtype}[{','.join(map(str, self.dims))}]"


@dataclass(frozen=True)
class Group:
    """A bracketed attribute value: ``open`` is ``{``, ``[`` or ``(``; ``items`` its tokens and
    nested groups in order (commas included, as ``Token('COMMA', ',')``)."""

    open: str
    items: tuple


@dataclass
class Instruction:
    """One HLO instruction.

    Attributes:
        name: its name without ``%`` (``dot.52``).
        shape: the result shape.
        opcode: ``dot``, ``custom-call``, ...
        operands: names of the operand instructions (``constant``/``parameter`` have none).
        literal: the parenthesized literal of ``constant`` / number of ``parameter`` (raw parse).
        attrs: attribute name -> value (a tuple of tokens and :class:`Group` s).
        line: 1-based line in the file.
        root: it is the computation's ROOT.
    """

    name: str
    shape: Shape
    opcode: str
    operands: list[str]
    literal: object
    attrs: dict[str, tuple]
    line: int
    root: bool = False


@dataclass
class Computation:
    """A computation: its parameters (name, shape) by parameter number, instructions in text
    order, the ROOT instruction."""

    name: str
    entry: bool
    instructions: list[Instruction]
    root: Instruction
    line: int

    @functools.cached_property
    def by_name(self) -> dict[str, Instruction]:
        return {i.name: i for i in self.instructions}


@dataclass
class HloModule:
    """A parsed HLO module: computations by name, the ENTRY one, the header attributes and the
    source-location tables newer XLA prints after the module (``StackFrames`` ...; row id ->
    value)."""

    name: str
    path: str
    computations: dict[str, Computation]
    entry: Computation
    attrs: dict[str, tuple] = field(default_factory=dict)
    tables: dict[str, dict[int, tuple]] = field(default_factory=dict)

    def where(self, line: int) -> str:
        """``path:line`` for messages."""
        return f"{self.path}:{line}"


def _name(token: Token) -> str:
    return str(token).lstrip("%")


def _shape_token(text: str) -> Shape:
    dtype, _, rest = text.partition("[")
    dims_text = rest[: rest.index("]")]
    dims = []
    for d in (x.strip() for x in dims_text.split(",") if x.strip()):
        d = d.lstrip("<=")  # a bounded dynamic size: the bound is the static size
        if not d.isdigit():
            raise ValueError(f"dynamic dimension {d!r} in {text}")
        dims.append(int(d))
    return Shape(dtype, tuple(dims))


class _ToModule(Transformer):
    """Parse tree -> plain Python values (the grammar's rules, bottom up)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def SHAPE(self, token):  # noqa: N802 (Lark terminal callbacks are named after the terminal)
        try:
            return _shape_token(str(token))
        except ValueError as exc:
            raise InputError(f"{self.path}:{token.line}: unsupported shape: {exc}") from None

    def tuple_shape(self, items):
        return Shape("tuple", (), tuple(i for i in items if isinstance(i, Shape)))

    def brace(self, items):
        return Group("{", tuple(items))

    def bracket(self, items):
        return Group("[", tuple(items))

    def paren(self, items):
        return Group("(", tuple(items))

    def number(self, items):
        return items[0]

    def ref(self, items):
        return ("ref", _name(items[0]))

    def typed_ref(self, items):
        return ("ref", _name(items[1]))

    def attr(self, items):
        return ("attr", str(items[0]), tuple(items[1:]))

    def param(self, items):
        return None  # parameters are instructions too: their shapes are read there

    def signature(self, items):
        return None

    def instruction(self, items):
        items = [i for i in items if not (isinstance(i, Token) and i.type in ("EQUALS", "COMMA"))]
        root = isinstance(items[0], Token) and items[0].type == "ROOT"
        if root:
            items = items[1:]
        name_tok, shape, opcode = items[0], items[1], items[2]
        operands, literal, attrs = [], None, {}
        for item in items[3:]:
            if isinstance(item, tuple) and item[0] == "attr":
                attrs[item[1]] = item[2]
            elif isinstance(item, tuple) and item[0] == "ref":
                operands.append(item[1])
            elif item is not None:
                literal = item
        return Instruction(_name(name_tok), shape, str(opcode), operands, literal, attrs, name_tok.line, root)

    def computation(self, items):
        entry = isinstance(items[0], Token) and items[0].type == "ENTRY"
        if entry:
            items = items[1:]
        name_tok = items[0]
        instrs = [i for i in items if isinstance(i, Instruction)]
        roots = [i for i in instrs if i.root]
        if not instrs:
            raise InputError(f"{self.path}:{name_tok.line}: computation {_name(name_tok)} has no instructions")
        root = roots[-1] if roots else instrs[-1]  # HLO's default root is the last instruction
        return Computation(_name(name_tok), entry, instrs, root, name_tok.line)

    def header(self, items):
        attrs = {i[1]: i[2] for i in items if isinstance(i, tuple) and i[0] == "attr"}
        return ("header", _name(items[0]), attrs)

    def table_row(self, items):
        return (int(str(items[0])), tuple(items[1:]))

    def table(self, items):
        return ("table", str(items[0]), {row[0]: row[1] for row in items[1:]})


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="contextual")


def parse_hlo_text(text: str, path: str = "<hlo>") -> HloModule:
    """Parse HLO text.

    Args:
        text: the module as ``HloModule::ToString`` prints it.
        path: the file name used in messages.

    Returns:
        The module; computations keep their text order.

    Raises:
        InputError: ``path:line:col: not HLO text (...)`` for text the grammar does not read,
            no ENTRY computation, two computations of one name, a dynamic dimension.
    """
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        what = f"unexpected {exc.char!r}" if isinstance(exc, UnexpectedCharacters) else _unexpected(exc)
        raise InputError(f"{path}:{exc.line}:{exc.column}: not HLO text ({what})") from None
    except LarkError as exc:  # pragma: no cover - the grammar's own errors
        raise InputError(f"{path}: not HLO text ({str(exc).splitlines()[0]})") from None
    parts = _ToModule(path).transform(tree).children
    _, name, attrs = parts[0]
    comps: dict[str, Computation] = {}
    tables: dict[str, dict[int, tuple]] = {}
    for part in parts[1:]:
        if isinstance(part, Computation):
            if part.name in comps:
                raise InputError(f"{path}:{part.line}: a second computation named {part.name}")
            comps[part.name] = part
        elif isinstance(part, tuple) and part[0] == "table":
            tables.setdefault(part[1], {}).update(part[2])
    entries = [c for c in comps.values() if c.entry]
    if not entries:
        if not comps:
            raise InputError(f"{path}: HLO module {name} has no computation")
        entries = [list(comps.values())[-1]]  # the printer puts ENTRY last when it is not marked
    return HloModule(name, path, comps, entries[0], attrs, tables)


def _unexpected(exc: UnexpectedInput) -> str:
    token = getattr(exc, "token", None)
    if token is None or token.type == "$END":
        return "unexpected end of file"
    return f"unexpected {str(token)[:40]!r}"


def parse_hlo(path: str | Path) -> HloModule:
    """Read and parse an HLO text file (:func:`parse_hlo_text`).

    Raises:
        InputError: the file is missing or not UTF-8 text, or as :func:`parse_hlo_text`.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read HLO text ({type(exc).__name__})") from None
    return parse_hlo_text(text, str(p))
