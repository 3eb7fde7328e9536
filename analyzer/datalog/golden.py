"""Golden test cases for Datalog rules: run a case on an engine and compare with expectations.

A case is a directory::

    <case>/program.dl        rules (and/or)
    <case>/program.txt       rule files, one per line, relative to the repository root
                             (globs allowed, ``#`` comments); program.dl is loaded after them;
                             a line matching nothing there is looked for in the current
                             folder, and ``schemas/...`` and ``rules/...`` lines in the
                             installed library
    <case>/facts/Name.facts  EDB tuples, tab-separated (Soufflé format)
    <case>/expected/Name.csv expected rows of output relation Name, tab-separated

Every ``.output`` relation is compared after sorting (as sets of rows). A non-empty output
relation without an expected file is a mismatch; an expected file for a relation that is
not an output is a mismatch. ``regen=True`` rewrites ``expected/`` from the engine's result
instead of comparing (the test suite does this when ``SHARDLOG_REGEN_GOLDEN=1``): one sorted
file per non-empty output relation (an empty one needs none).

Cases that list the same rule files share one parsed program within a process.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.datalog.errors import DatalogError
from analyzer.datalog.facts_io import (
    OUTPUT_SUFFIX,
    read_facts_dir,
    read_relation_file,
    write_relation_file,
)
from analyzer.datalog.parser import load_program
from analyzer.datalog.syntax import Program
from analyzer.errors import InputError
from analyzer.inputs.files import read_text

if TYPE_CHECKING:
    from analyzer.engines.base import Engine

__all__ = ["find_cases", "is_case", "load_case_program", "repo_root", "run_golden_case"]

_SHOWN = 5


def repo_root(start: Path | str) -> Path:
    """The nearest ancestor of ``start`` holding ``setup.cfg`` or ``pyproject.toml``.

    Args:
        start: A path inside the repository.

    Returns:
        The repository root, or ``start`` itself if none is found.
    """
    start = Path(start).resolve()
    for candidate in (start, *start.parents):
        if (candidate / "setup.cfg").is_file() or (candidate / "pyproject.toml").is_file():
            return candidate
    return start


def is_case(path: Path | str) -> bool:
    """Whether ``path`` is a golden case directory.

    Args:
        path: A directory.

    Returns:
        ``True`` if it holds ``program.dl`` or ``program.txt`` (of any kind: one that is not a
        regular file is refused when read).
    """
    path = Path(path)
    return any((path / name).exists() or (path / name).is_symlink() for name in ("program.dl", "program.txt"))


def find_cases(path: Path | str) -> list[Path]:
    """The case directories at or directly under ``path``.

    Args:
        path: A case directory or a directory of cases.

    Returns:
        Case directories, sorted by name.
    """
    path = Path(path)
    if is_case(path):
        return [path]
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.is_dir() and is_case(p))


_BUNDLED = ("schemas", "rules")  # folders of the library that program.txt lines may name


def _library_root() -> Path:
    """The folder holding the library's ``schemas/`` and ``rules/``: the installed package
    (setup.cfg maps them into it) or the source checkout (:mod:`analyzer.solve.rulebook`)."""
    from analyzer.solve.rulebook import schemas_dir

    return schemas_dir().parent


def _matches(base: Path, line: str) -> list[Path]:
    matches = sorted(base.glob(line)) if any(ch in line for ch in "*?[") else [base / line]
    return matches if matches and all(m.exists() for m in matches) else []


def load_case_program(case_dir: Path | str, root: Path | str | None = None) -> Program:
    """Load a case's program from ``program.txt`` and/or ``program.dl`` (the same files, with the
    same contents, give the same program object within a process).

    Args:
        case_dir: The case directory.
        root: What ``program.txt`` paths are relative to (default: :func:`repo_root`).

    Returns:
        The checked program.

    Raises:
        DatalogError: On a missing file, a parse error or a failed check.
    """
    case = Path(case_dir)
    base = Path(root) if root is not None else repo_root(case)
    files: list[Path] = []
    listing = case / "program.txt"
    if listing.exists() or listing.is_symlink():
        try:
            text = read_text(listing, "program listing", limit="listing")
        except InputError as exc:
            raise DatalogError(str(exc)) from None
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if Path(line).is_absolute():
                raise DatalogError(f"{listing}:{lineno}: {line!r} is an absolute path (list files relative to {base})")
            matches = _matches(base, line)
            if not matches and root is None:
                matches = _matches(Path.cwd(), line)  # outside a repository: the folder the user works in
            if not matches and line.split("/", 1)[0] in _BUNDLED:
                matches = _matches(_library_root(), line)  # a pip install: the packaged library
            if not matches:
                raise DatalogError(f"{listing}:{lineno}: no file matches {line!r} under {base} nor in the rule library")
            files.extend(matches)
    if (case / "program.dl").exists() or (case / "program.dl").is_symlink():
        files.append(case / "program.dl")
    if not files:
        raise DatalogError(f"{case}: no program.dl or program.txt")
    from analyzer.inputs.files import read_bytes  # regular files only, size-bounded (a FIFO, /dev/zero)

    key = tuple((read_bytes(f, "rule file", limit="rules"), os.path.abspath(f)) for f in files)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = load_program(files)
    return _PROGRAMS[key]


_PROGRAMS: dict[tuple, Program] = {}  # programs loaded in this process, by their files and contents


def _show(rows: Iterable[tuple]) -> str:
    rows = list(rows)
    text = ", ".join("(" + ", ".join(repr(v) for v in row) + ")" for row in rows[:_SHOWN])
    return text + (f", ... ({len(rows)} in all)" if len(rows) > _SHOWN else "")


def run_golden_case(
    case_dir: Path | str,
    engine: Engine | str,
    *,
    regen: bool = False,
    root: Path | str | None = None,
) -> list[str]:
    """Run one golden case on an engine and compare every output relation.

    Args:
        case_dir: The case directory.
        engine: An engine, or its name for :func:`analyzer.engines.get_engine`.
        regen: Rewrite ``expected/`` from this run instead of comparing.
        root: What ``program.txt`` paths are relative to (default: the repository root).

    Returns:
        One message per mismatch (empty when the case passes or was regenerated).

    Raises:
        DatalogError: If the program or the fact files are malformed.
        EngineUnavailable: If the engine cannot run here or cannot evaluate the program.
    """
    if isinstance(engine, str):
        from analyzer.engines import get_engine

        engine = get_engine(engine)
    case = Path(case_dir)
    program = load_case_program(case, root)
    facts_dir = case / "facts"
    facts = read_facts_dir(facts_dir, program.decls) if facts_dir.is_dir() else {}
    result = engine.run(program, facts)
    expected_dir = case / "expected"
    if regen:
        expected_dir.mkdir(exist_ok=True)
        for stale in expected_dir.glob(f"*{OUTPUT_SUFFIX}"):
            if not result.get(stale.stem):
                stale.unlink()
        for name, rows in result.items():
            if rows:
                write_relation_file(expected_dir / f"{name}{OUTPUT_SUFFIX}", program.decls[name], sorted(set(rows)))
        return []
    mismatches: list[str] = []
    expected_files = (
        {p.stem: p for p in sorted(expected_dir.glob(f"*{OUTPUT_SUFFIX}"))} if expected_dir.is_dir() else {}
    )
    for name in expected_files:
        if name not in result:
            mismatches.append(f"expected/{name}{OUTPUT_SUFFIX}: {name} is not an .output relation of the program")
    for name, rows in result.items():
        path = expected_files.get(name)
        if path is None:
            if rows:
                mismatches.append(
                    f"{name}: {len(rows)} row(s) derived but there is no expected/{name}{OUTPUT_SUFFIX}: {_show(rows)}"
                )
            continue
        want = set(read_relation_file(path, program.decls[name]))
        got = set(rows)
        missing, extra = sorted(want - got), sorted(got - want)
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing {len(missing)} row(s): {_show(missing)}")
            if extra:
                parts.append(f"unexpected {len(extra)} row(s): {_show(extra)}")
            mismatches.append(f"{name} ({engine.name}): " + "; ".join(parts))
    return mismatches
