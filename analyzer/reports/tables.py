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

__all__ = ["write_model_facts", "write_tables", "query_table"]


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
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_facts_dir(out, decls, {name: tables.get(name, []) for name in decls})
    return len(decls)


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
