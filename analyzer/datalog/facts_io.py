"""Read and write relations in Soufflé's default tab-separated formats.

``Name.facts`` (input) and ``Name.csv`` (output) files have one tuple per line, columns
separated by a tab, no header and no quoting. Symbols are written verbatim, so a symbol
may contain spaces but never a tab, a newline or a carriage return: writing one raises
:class:`DatalogError` (there is no escape that Soufflé would read back). Number columns
are decimal integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from analyzer.datalog.errors import DatalogError, Loc
from analyzer.datalog.syntax import Decl

__all__ = [
    "FACTS_SUFFIX",
    "OUTPUT_SUFFIX",
    "format_row",
    "parse_row",
    "read_facts_dir",
    "read_relation_file",
    "write_facts_dir",
    "write_relation_file",
]

FACTS_SUFFIX = ".facts"
OUTPUT_SUFFIX = ".csv"
_FORBIDDEN = ("\t", "\n", "\r")


def format_row(decl: Decl, row: tuple) -> str:
    """Format one tuple as a tab-separated line (without the newline).

    Args:
        decl: The relation's declaration (column types).
        row: The tuple: ``str`` for symbol columns, ``int`` for number columns.

    Returns:
        The line.

    Raises:
        DatalogError: On a wrong arity, a wrong type, or a symbol with a tab or newline.
    """
    if len(row) != decl.arity:
        raise DatalogError(f"{decl.name}: tuple {row!r} has {len(row)} values, the relation has {decl.arity} columns")
    cells = []
    for value, base, (col, _) in zip(row, decl.base_types, decl.columns):
        if base == "number":
            if not isinstance(value, int) or isinstance(value, bool):
                raise DatalogError(f"{decl.name}.{col}: expected an int, got {value!r}")
            cells.append(str(value))
        else:
            if not isinstance(value, str):
                raise DatalogError(f"{decl.name}.{col}: expected a str, got {value!r}")
            if any(ch in value for ch in _FORBIDDEN):
                raise DatalogError(
                    f"{decl.name}.{col}: symbol {value!r} contains a tab or newline, which the tab-separated "
                    "fact format cannot hold"
                )
            cells.append(value)
    return "\t".join(cells)


def parse_row(decl: Decl, line: str, loc: Loc | None = None) -> tuple:
    """Parse one tab-separated line into a typed tuple.

    Args:
        decl: The relation's declaration.
        line: The line, without its newline.
        loc: Where the line is (for errors).

    Returns:
        The tuple (``int`` for number columns, ``str`` for symbol columns).

    Raises:
        DatalogError: On a wrong number of fields or a malformed number.
    """
    if decl.arity == 0:
        if line.strip() not in ("", "()"):
            raise DatalogError(f"{decl.name} has no columns but the line is {line!r}", loc)
        return ()
    fields = line.split("\t")
    if len(fields) != decl.arity:
        raise DatalogError(f"{decl.name}: expected {decl.arity} tab-separated fields, got {len(fields)}", loc)
    out: list[str | int] = []
    for value, base, (col, _) in zip(fields, decl.base_types, decl.columns):
        if base == "number":
            try:
                out.append(int(value))
            except ValueError:
                raise DatalogError(f"{decl.name}.{col}: {value!r} is not a number", loc) from None
        else:
            out.append(value)
    return tuple(out)


def read_relation_file(path: Path | str, decl: Decl) -> list[tuple]:
    """Read a ``.facts`` or ``.csv`` file of one relation.

    Args:
        path: The file.
        decl: The relation's declaration.

    Returns:
        The tuples in file order (duplicates kept).

    Raises:
        DatalogError: On a malformed line, or a file that cannot be read, is not a regular
            file, is over 512 MiB or is not UTF-8 (:func:`analyzer.inputs.files.read_text`).
    """
    from analyzer.errors import InputError
    from analyzer.inputs.files import read_text

    path = Path(path)
    try:
        text = read_text(path, "fact file", limit="facts")
    except InputError as exc:
        raise DatalogError(str(exc)) from None
    rows = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for lineno, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if decl.arity == 0 and line.strip() == "":
            continue
        rows.append(parse_row(decl, line, Loc(str(path), lineno)))
    if decl.arity == 0 and lines:
        return [()]
    return rows


def write_relation_file(path: Path | str, decl: Decl, rows: Iterable[tuple]) -> int:
    """Write tuples of one relation as a tab-separated file (no header).

    Args:
        path: The file to write.
        decl: The relation's declaration.
        rows: The tuples.

    Returns:
        The number of lines written.

    Raises:
        DatalogError: On a tuple that does not fit the declaration.
    """
    lines = ["()" if decl.arity == 0 else format_row(decl, tuple(r)) for r in rows]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def read_facts_dir(
    directory: Path | str, decls: Mapping[str, Decl], *, suffix: str = FACTS_SUFFIX
) -> dict[str, list[tuple]]:
    """Read every ``<Relation><suffix>`` file of a directory.

    Args:
        directory: The directory.
        decls: Declarations by relation name; a file whose stem is not declared is an error.
        suffix: ``.facts`` (default) or ``.csv``.

    Returns:
        Relation name -> tuples, for the files present.

    Raises:
        DatalogError: On an undeclared relation or a malformed file.
    """
    from analyzer.errors import InputError
    from analyzer.inputs.files import check_folder

    directory = Path(directory)
    try:
        check_folder(directory, "facts folder")
        found = sorted(directory.glob(f"*{suffix}"))
    except (InputError, OSError) as exc:
        raise DatalogError(str(exc) if isinstance(exc, InputError) else f"{directory}: {exc.strerror}") from None
    out: dict[str, list[tuple]] = {}
    for path in found:
        name = path.name[: -len(suffix)]
        decl = decls.get(name)
        if decl is None:
            raise DatalogError(f"{path}: no relation {name} is declared")
        out[name] = read_relation_file(path, decl)
    return out


def write_facts_dir(
    directory: Path | str,
    decls: Mapping[str, Decl],
    facts: Mapping[str, Iterable[tuple]],
    *,
    suffix: str = FACTS_SUFFIX,
) -> list[Path]:
    """Write each relation of ``facts`` as ``<Relation><suffix>`` in ``directory``.

    Args:
        directory: The directory (created if missing).
        decls: Declarations by relation name.
        facts: Relation name -> tuples.
        suffix: ``.facts`` (default) or ``.csv``.

    Returns:
        The files written.

    Raises:
        DatalogError: On an undeclared relation or a tuple that does not fit.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in facts.items():
        decl = decls.get(name)
        if decl is None:
            raise DatalogError(f"no relation {name} is declared")
        path = directory / f"{name}{suffix}"
        write_relation_file(path, decl, rows)
        written.append(path)
    return written
