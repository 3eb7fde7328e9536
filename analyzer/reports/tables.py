"""Relation tables on disk: fact files for one model, CSV dumps of a check, queries.

Formats follow Soufflé's defaults: ``Name.facts`` is tab-separated without a header (the
column order is the ``.decl``); ``Name.csv`` written by ``check --out`` is tab-separated
*with* a header row of the schema's column names, for ``pandas.read_csv(path, sep="\\t")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.datalog import read_decls, write_facts_dir
from analyzer.errors import InputError
from analyzer.facts import extract_graph_facts, load_model
from analyzer.model import Derivation
from analyzer.solve.rulebook import schema_files

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_check_facts", "write_model_facts", "write_tables", "query_table"]


def write_model_facts(model_path: str | Path, out_dir: str | Path, graph: str = "seq") -> int:
    """Write every fact relation of ``schemas/facts.dl`` for one model.

    Returns:
        The number of files written (empty relations get empty files).

    Raises:
        InputError: the model is missing or not ONNX.
    """
    model = load_model(model_path)
    decls = {name: d for name, d in read_decls(schema_files()).items() if Path(d.source or "").name == "facts.dl"}
    tables = extract_graph_facts(model, graph).tuples(decls)
    out = _fresh_folder(out_dir)
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
    """``out_dir``, created, unless it holds fact tables already (they are not overwritten)."""
    out = Path(out_dir)
    old = sorted(out.glob("*.facts")) if out.is_dir() else []
    if old:
        raise InputError(f"{out}: already holds fact tables ({old[0].name}, ...); write to a new folder")
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from None
    return out


def write_tables(deriv: Derivation, out_dir: str | Path) -> None:
    """Write every fact and derived relation as ``Name.csv`` with a header row."""
    from analyzer.model import tables_of

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in tables_of(deriv).items():
        frame.to_csv(out / f"{name}.csv", sep="\t", index=False)


def query_table(out_dir: str | Path, relation: str, conditions: Sequence[str] = ()) -> pd.DataFrame:
    """Rows of one table written by ``check --out``, filtered by ``col=value`` conditions.

    Raises:
        InputError: no such folder or relation, a malformed condition or unknown column.
    """
    path = Path(out_dir) / f"{relation}.csv"
    if not Path(out_dir).is_dir():
        raise InputError(f"{out_dir}: no such folder (write one with 'shardlog check ... --out DIR')")
    if not path.is_file():
        known = sorted(p.stem for p in Path(out_dir).glob("*.csv"))
        raise InputError(f"no relation {relation!r} in {out_dir} (known: {', '.join(known[:12])}, ...)")
    import pandas as pd  # here: ``shardlog check`` imports this module without querying (pandas ~0.15 s)

    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for cond in conditions:
        col, sep, value = cond.partition("=")
        if not sep:
            raise InputError(f"--where {cond!r}: expected col=value")
        if col not in frame.columns:
            raise InputError(
                f"--where {cond!r}: {relation} has no column {col!r} (columns: {', '.join(frame.columns)})"
            )
        frame = frame[frame[col] == value]
    return frame
