"""Relation tables on disk: fact files for one model, CSV dumps of a check, queries.

Formats follow Soufflé's defaults: ``Name.facts`` is tab-separated without a header (the
column order is the ``.decl``); ``Name.csv`` written by ``check --out`` is tab-separated
*with* a header row of the schema's column names, for ``pandas.read_csv(path, sep="\\t")``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.datalog import read_decls, write_facts_dir
from analyzer.errors import InputError, escape, shown
from analyzer.facts import extract_graph_facts, load_model
from analyzer.inputs.files import check_folder, describe_os_error, read_text
from analyzer.model import Derivation
from analyzer.reports.write import refuse_overwriting, write_atomic
from analyzer.solve.rulebook import schema_files

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_check_facts", "write_model_facts", "write_tables", "query_table"]


def _out_folder(out_dir: str | Path) -> Path:
    """``out_dir``, created when missing.

    Raises:
        InputError: it is a file (or another non-folder), or cannot be created.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{escape(os.fsdecode(out), 200)}: is a file, not a folder to write tables into")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = describe_os_error(exc, "folder")
        raise InputError(f"{escape(os.fsdecode(out), 200)}: cannot create the folder ({why})") from None
    return out


def write_model_facts(model_path: str | Path, out_dir: str | Path, graph: str = "seq") -> int:
    """Write every fact relation of ``schemas/facts.dl`` for one model.

    Returns:
        The number of files written (empty relations get empty files).

    Raises:
        InputError: the model is missing or not ONNX; ``out_dir`` is a file or cannot be
            created; a file to write is the model itself.
    """
    model = load_model(model_path)
    decls = {name: d for name, d in read_decls(schema_files()).items() if Path(d.source or "").name == "facts.dl"}
    tables = extract_graph_facts(model, graph).tuples(decls)
    out = _fresh_folder(out_dir)
    refuse_overwriting([model_path], [out / f"{name}.facts" for name in decls])
    write_facts_dir(out, decls, {name: tables.get(name, []) for name in decls})
    return len(decls)


def write_check_facts(
    seq_path: str | Path,
    rank_paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    relations: str | Path | None = None,
    pipeline: int | None = None,
) -> int:
    """Write the facts a check of ``seq_path`` against ``rank_paths`` starts from, as
    ``Name.facts`` files: every graph's tables (graph column ``seq``, ``r0``, ...), the world,
    the input relations and the oracles' facts (:func:`analyzer.solve.derive.check_facts`) —
    the ``facts/`` folder of a golden case (``shardlog rules test``, docs/rules.md).

    Returns:
        The number of files written (one per relation with rows).

    Raises:
        InputError: as :func:`analyzer.inputs.load.load_inputs`, or ``out_dir`` already holds
            ``.facts`` files.
    """
    from analyzer.inputs.load import load_inputs
    from analyzer.solve.derive import check_facts

    out = _fresh_folder(out_dir)
    inp = load_inputs(seq_path, rank_paths, relations, pipeline=pipeline)
    facts, _ = check_facts(inp)
    decls = read_decls(schema_files())
    tables = {name: rows for name, rows in facts.tuples(decls).items() if rows}
    write_facts_dir(out, decls, tables)
    return len(tables)


def _fresh_folder(out_dir: str | Path) -> Path:
    """``out_dir``, created, unless it holds fact tables already (they are not overwritten).

    Raises:
        InputError: it holds ``.facts`` files, is a file, or cannot be created.
    """
    out = Path(out_dir)
    old = sorted(out.glob("*.facts")) if out.is_dir() else []
    if old:
        shown_out = escape(os.fsdecode(out), 200)
        raise InputError(f"{shown_out}: already holds fact tables ({old[0].name}, ...); write to a new folder")
    return _out_folder(out)


def write_tables(deriv: Derivation, out_dir: str | Path, inputs: Sequence[str | Path] = ()) -> None:
    """Write every fact and derived relation as ``Name.csv`` with a header row, each file
    atomically (:func:`analyzer.reports.write.write_atomic`).

    Args:
        deriv: the derivation of a check.
        out_dir: the folder (created when missing).
        inputs: the check's input files, which are never overwritten.

    Raises:
        InputError: ``out_dir`` is a file or cannot be created, a table would overwrite an
            input, or a write fails.
    """
    from analyzer.model import tables_of

    out = _out_folder(out_dir)
    frames = tables_of(deriv)
    refuse_overwriting(inputs, [out / f"{name}.csv" for name in frames])
    for name, frame in frames.items():
        write_atomic(out / f"{name}.csv", frame.to_csv(sep="\t", index=False))


_RELATION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def query_table(out_dir: str | Path, relation: str, conditions: Sequence[str] = ()) -> pd.DataFrame:
    """Rows of one table written by ``check --out``, filtered by ``col=value`` conditions.

    Only ``OUT_DIR/<relation>.csv`` is read: ``relation`` is a relation name (letters, digits,
    ``_``), never a path.

    Raises:
        InputError: no such folder or relation, a relation that is not a name, a table that is
            not a regular file or not a tab-separated table, a malformed condition or unknown
            column.
    """
    shown_dir = escape(os.fsdecode(out_dir), 200)
    if not _RELATION_NAME.fullmatch(relation):
        raise InputError(f"{shown(relation)}: not a relation name (letters, digits and _, such as Holds)")
    try:
        check_folder(out_dir, "folder")
    except InputError as exc:
        raise InputError(f"{exc} (write one with 'shardlog check ... --out DIR')") from None
    path = Path(out_dir) / f"{relation}.csv"
    if not (path.exists() or path.is_symlink()):
        known = sorted(p.stem for p in Path(out_dir).glob("*.csv"))
        raise InputError(f"no relation {relation!r} in {shown_dir} (known: {escape(', '.join(known[:12]))}, ...)")
    text = read_text(path, "table", limit="table")
    import io

    import pandas as pd  # here: ``shardlog check`` imports this module without querying (pandas ~0.15 s)

    try:
        frame = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        why = escape(" ".join(str(exc).split()), 120)
        where = escape(os.fsdecode(path), 200)
        raise InputError(f"{where}: not a tab-separated table written by --out ({why})") from None
    for cond in conditions:
        col, sep, value = cond.partition("=")
        if not sep:
            raise InputError(f"--where {shown(cond)}: expected col=value")
        if col not in frame.columns:
            raise InputError(
                f"--where {shown(cond)}: {relation} has no column {shown(col)} (columns: {', '.join(frame.columns)})"
            )
        frame = frame[frame[col] == value]
    return frame
