"""Command line: ``shardlog check``, ``shardlog facts``, ``shardlog query``, ``shardlog import-fx``.

Exit codes of ``check``: 0 verified, 1 discrepancy, 2 usage or input error (one line on
stderr, never a traceback), 3 unproven (no rule explains some steps; the numbers agree).
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import click
from rich.console import Console

from analyzer.engines import DEFAULT_ENGINE, ENGINES
from analyzer.errors import InputError

__all__ = ["main"]


def _fail(message: str) -> None:
    click.echo(f"shardlog: error: {message}", err=True)
    sys.exit(2)


def _user_errors(fn):
    """Turn user-facing errors into one line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from analyzer.datalog import DatalogError
        from analyzer.engines import EngineError, EngineUnavailable

        try:
            return fn(*args, **kwargs)
        except (InputError, EngineUnavailable, EngineError, DatalogError) as exc:
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except KeyboardInterrupt:
            _fail("interrupted")
        except Exception as exc:  # a bug of ours: still one line unless asked for more
            if os.environ.get("SHARDLOG_DEBUG"):
                raise
            click.echo(
                f"shardlog: internal error: {type(exc).__name__}: {exc} (set SHARDLOG_DEBUG=1 for a traceback)",
                err=True,
            )
            sys.exit(3)

    return wrapper


class _OneLineErrors(click.Group):
    """A click group whose usage errors are one ``shardlog: error:`` line and exit code 2
    (click's own format is a Usage/Try/Error block)."""

    def main(self, *args, **kwargs):  # noqa: D102
        kwargs["standalone_mode"] = False
        try:
            super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            _fail("interrupted")
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
            sys.exit(0)
        except click.UsageError as exc:
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            _fail(where + " ".join(exc.format_message().split()))
        except click.ClickException as exc:
            _fail(" ".join(exc.format_message().split()))
        sys.exit(0)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shardlog")
def main() -> None:
    """shardlog: prove that per-rank ONNX graphs compute what the sequential graph computes."""


@main.command()
@click.argument("seq", type=click.Path(dir_okay=False))
@click.argument("ranks", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--relations", "spec", type=click.Path(dir_okay=False), help="YAML spec of input relations.")
@click.option("--engine", default=DEFAULT_ENGINE, show_default=True, type=click.Choice(list(ENGINES)))
@click.option(
    "--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="Extra rule folder (repeatable)."
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the JSON report here.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Write every relation table as CSV here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write a self-contained HTML report here.")
@click.option(
    "--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Write a SARIF 2.1.0 log here (CI code scanning)."
)
@click.option("--numeric", is_flag=True, help="Run the numeric witness and report the error of each output.")
@click.option("--seed", default=0, show_default=True, help="Random seed of the numeric witness.")
@click.option(
    "--no-memo", "no_memo", is_flag=True, help="Do not solve identical decoder layers once (check every layer)."
)
@click.option(
    "--all-ranks",
    "all_ranks",
    is_flag=True,
    help="Solve every rank even when all rank files hold the same graph (by default rank 0 is solved and copied).",
)
@click.option("--coverage", is_flag=True, help="Report which rules fired, per rule file.")
@click.option(
    "--pp",
    "pipeline",
    type=int,
    default=None,
    metavar="P",
    help="The rank files are P pipeline stages (global-rank order, tensor-parallel rank fastest); "
    "each rank's stages are chained by boundary tensor names.",
)
@click.option(
    "--no-triage",
    "no_triage",
    is_flag=True,
    help="Keep the rules' verdict: do not run the numeric witness on the frontier of a check that is not verified.",
)
@click.option("--explain", is_flag=True, help="Print the input relations that were inferred.")
@click.option("-v", "--verbose", is_flag=True, help="Show every discrepancy.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the verdict.")
@_user_errors
def check(
    seq,
    ranks,
    spec,
    engine,
    rule_dirs,
    json_path,
    out_dir,
    html_path,
    sarif_path,
    numeric,
    seed,
    no_memo,
    all_ranks,
    coverage,
    pipeline,
    no_triage,
    explain,
    verbose,
    quiet,
) -> None:
    """Check SEQ (sequential ONNX) against RANKS (one ONNX file per rank, rank 0 first).

    With --pp P the files are P pipeline stages: shardlog check seq.onnx stage0.onnx stage1.onnx --pp 2.
    """
    from analyzer.api import check as run_check
    from analyzer.reports.tables import write_tables
    from analyzer.reports.text import print_coverage, print_text, write_json

    _refuse_overwriting_inputs([seq, *ranks, spec], [json_path, html_path, sarif_path])

    # soft_wrap: report lines carry paths and source locations that must stay greppable
    console = Console(highlight=False, soft_wrap=True)
    err_console = Console(stderr=True, highlight=False, soft_wrap=True)
    status = err_console.status("checking ...") if not quiet and err_console.is_terminal else _null()
    with status:
        result = run_check(
            seq,
            list(ranks),
            relations=spec,
            engine=engine,
            rules=list(rule_dirs),
            numeric=numeric,
            seed=seed,
            coverage=coverage,
            memoize=not no_memo,
            one_rank=not all_ranks,
            pipeline=pipeline,
            triage=not no_triage,
        )
    try:
        if json_path:
            write_json(result, json_path)
        if out_dir:
            write_tables(result.derivation, out_dir)
        if html_path:
            from analyzer.reports.html import write_html

            write_html(result, html_path)
        if sarif_path:
            from analyzer.reports.sarif import write_sarif

            write_sarif(result, sarif_path)
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename or 'a report'}: {exc.strerror or exc}") from None
    if quiet:
        click.echo(result.verdict)
    else:
        print_text(result, console, verbose=verbose, explain=explain)
    if coverage:
        print_coverage(result, console, verbose=verbose)
    sys.exit({"verified": 0, "unproven": 3}.get(result.verdict, 1))


def _refuse_overwriting_inputs(inputs, outputs) -> None:
    given = {Path(p).resolve() for p in inputs if p}
    for out in outputs:
        if out and Path(out).resolve() in given:
            raise InputError(f"{out}: is one of the input files; refusing to overwrite it")


def _null():
    import contextlib

    return contextlib.nullcontext()


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder for the .facts files.")
@click.option("--graph", default="seq", show_default=True, help="Graph name in the facts (seq, r0, r1, ...).")
@_user_errors
def facts(model, out_dir, graph) -> None:
    """Write the fact tables of MODEL as tab-separated Name.facts files (schemas/facts.dl)."""
    from analyzer.reports.tables import write_model_facts

    count = write_model_facts(model, out_dir, graph)
    click.echo(f"wrote {count} fact files to {out_dir}")


@main.command("import-fx")
@click.argument("dump", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="The ONNX file to write.")
@click.option(
    "--world-size",
    type=click.IntRange(min=1),
    help="1 for a sequential graph: collectives become identities. Default: keep collectives.",
)
@click.option(
    "--constant",
    "constants",
    multiple=True,
    metavar="NAME=VALUE",
    help="Value of a _tensor_constantN the dump does not hold (repeatable; default: a graph input).",
)
@click.option("--outputs", "positions", metavar="0,1,...", help="Positions of the returned values to keep as outputs.")
@_user_errors
def import_fx_command(dump, out, world_size, constants, positions) -> None:
    """Import DUMP, the text torch.fx prints for an ATen graph (one rank), as an ONNX model."""
    import onnx

    from analyzer.importers.fx import import_fx

    _refuse_overwriting_inputs([dump], [out])
    values = _parse_constants(constants)
    model = import_fx(dump, world_size=world_size, constants=values, outputs=_parse_positions(positions))
    unknown = sorted(set(values) - {i.name for i in model.graph.initializer})
    if unknown:
        raise InputError(f"{dump}: --constant {unknown[0]}: the graph has no constant of that name")
    onnx.checker.check_model(model)  # what is written passes the checker (a failure is a bug of ours)
    try:
        onnx.save(model, out)
    except OSError as exc:
        raise InputError(f"cannot write {exc.filename or out}: {exc.strerror or exc}") from None
    g = model.graph
    click.echo(f"wrote {out}: {len(g.node)} nodes, {len(g.input)} inputs, {len(g.output)} outputs")


def _parse_constants(items) -> dict[str, float]:
    values = {}
    for item in items:
        name, _, text = item.partition("=")
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not name.strip():
            raise InputError(f"--constant {item!r}: expected NAME=NUMBER")
        values[name.strip()] = value
    return values


def _parse_positions(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(p) for p in text.split(",")]
    except ValueError:
        raise InputError(f"--outputs {text!r}: expected comma-separated positions such as 0,1") from None


@main.command()
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.argument("relation")
@click.option("--where", "conditions", multiple=True, help="col=value filter (repeatable).")
@_user_errors
def query(out_dir, relation, conditions) -> None:
    """Print RELATION from the CSV tables a check wrote with --out OUT_DIR."""
    from analyzer.reports.tables import query_table

    frame = query_table(out_dir, relation, conditions)
    click.echo(frame.to_string(index=False) if len(frame) else f"(no rows in {relation})")


@main.group()
def rules() -> None:
    """Work on rule files."""


@rules.command("test")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--engine", "engines", multiple=True, help="Engine to run (repeatable; default: every available one).")
@_user_errors
def rules_test(folder, engines) -> None:
    """Run the golden cases under FOLDER (case/facts/*.facts in, case/expected/*.csv out) on every engine.

    Exit 0 when every case matches on every engine, 1 otherwise.
    """
    from analyzer.datalog.golden import find_cases, run_golden_case
    from analyzer.engines import EngineUnavailable, available_engines, get_engine

    if not Path(folder).is_dir():
        raise InputError(f"{folder}: no such folder")
    cases = find_cases(folder)
    if not cases:
        raise InputError(f"{folder}: no golden case (a folder with facts/, expected/ and program.dl or program.txt)")
    failed = 0
    for name in engines or available_engines():
        try:
            engine = get_engine(name)
        except EngineUnavailable as exc:
            click.echo(f"skip {name}: {exc}")
            continue
        for case in cases:
            try:
                mismatches = run_golden_case(case, engine)
            except EngineUnavailable as exc:
                click.echo(f"skip {case.name} on {name}: {exc}")
                continue
            status = "ok" if not mismatches else "FAIL"
            failed += bool(mismatches)
            click.echo(f"{status:4} {case.name} ({name})")
            for m in mismatches:
                click.echo(f"     {m}")
    click.echo(f"{failed} failed" if failed else "all cases pass")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
