"""Command line: ``shardlog check``, ``shardlog facts``, ``shardlog query``, ``shardlog import-
fx``, ``shardlog rules test``, ``shardlog import-hlo``.

Exit codes of every command: 0 verified (or done), 1 discrepancy (or a failing golden case), 2
usage or input error (one ``shardlog: error:`` line on stderr, never a traceback), 3 unproven
(``check``: no rule explains some steps, and the numbers agree), 4 internal inconsistency
(``check --numeric``: the numeric witness refutes a relation the rules derived), 70 an internal
error: a bug of shardlog's, not of the input (:data:`analyzer.errors.INTERNAL_ERROR_EXIT`; one
line saying how to report it, and the traceback with ``SHARDLOG_DEBUG=1``).

Errors are turned into that line in one place, :class:`_OneLineErrors` (the command group), for
every command: :func:`_classify` says what is the user's input (an ``InputError``, a rule file
that does not parse, an ``OSError`` on a path, text that is not UTF-8, input nested over
Python's recursion limit, input too large for memory) and what is a bug.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

import click
from rich.console import Console

from analyzer.engines import DEFAULT_ENGINE, ENGINES
from analyzer.errors import INTERNAL_ERROR_EXIT, InputError, escape, shown

__all__ = ["EXIT_CODES", "main"]

#: exit code of ``check`` per verdict (2: usage or input error, 70: internal error)
EXIT_CODES = {"verified": 0, "discrepancy": 1, "unproven": 3, "inconsistent": 4}

#: Longest error line (characters of the message; names in it are cut shorter).
_MAX_MESSAGE = 1000


def _fail(message: str) -> None:
    click.echo(f"shardlog: error: {escape(message, _MAX_MESSAGE)}", err=True)
    sys.exit(2)


def _show_engine_warning(show):
    """A ``warnings.showwarning`` printing an engine's warning (Soufflé's) as one line."""
    from analyzer.engines import EngineWarning

    def one_line(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, EngineWarning):
            click.echo(f"shardlog: warning: {' '.join(str(message).split())}", err=True)
        else:
            show(message, category, filename, lineno, file, line)

    return one_line


def _classify(exc: BaseException) -> str | None:
    """The one-line message of an exception caused by the user's input, None for a bug of ours."""
    from analyzer.datalog import DatalogError
    from analyzer.engines import EngineError, EngineUnavailable
    from analyzer.inputs.files import describe_os_error

    if isinstance(exc, (InputError, DatalogError, EngineError, EngineUnavailable)):
        text = str(exc).strip()
        return text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, OSError):  # a path the user gave: missing, unreadable, a full disk
        if exc.filename is None:
            return f"cannot read or write: {describe_os_error(exc)}"
        return f"{escape(os.fsdecode(exc.filename), 200)}: {describe_os_error(exc)}"
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not UTF-8 text (byte {exc.start})"
    if isinstance(exc, UnicodeError):
        return f"text that cannot be encoded: {escape(str(exc), 200)}"
    if isinstance(exc, RecursionError):
        return "input nested too deeply (over Python's recursion limit)"
    if isinstance(exc, MemoryError):
        return "out of memory: the input is too large"
    return None


def _internal_error(exc: BaseException) -> None:
    if os.environ.get("SHARDLOG_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
    click.echo(
        f"shardlog: internal error: {type(exc).__name__}: {escape(str(exc), 300)} (a bug in shardlog, not in your "
        "input: please report it with the command line and input files; SHARDLOG_DEBUG=1 shows the traceback)",
        err=True,
    )
    sys.exit(INTERNAL_ERROR_EXIT)


def _user_errors(fn):
    """Print an engine's warnings (Soufflé's) as one line each; errors are turned into one line
    by the group (:class:`_OneLineErrors`) for every command."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.showwarning = _show_engine_warning(warnings.showwarning)
            return fn(*args, **kwargs)

    return wrapper


class _OneLineErrors(click.Group):
    """A click group whose errors are one ``shardlog: error:`` line and exit code 2 (click's own
    usage format is a Usage/Try/Error block), and whose internal errors are one line and exit
    code 70 (module docstring)."""

    def main(self, *args, **kwargs):  # noqa: D102
        kwargs["standalone_mode"] = False
        try:
            super().main(*args, **kwargs)
        except SystemExit:
            raise
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except (click.exceptions.Abort, KeyboardInterrupt):
            _fail("interrupted")
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
            sys.exit(0)
        except click.UsageError as exc:
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            _fail(where + " ".join(exc.format_message().split()))
        except click.ClickException as exc:
            _fail(" ".join(exc.format_message().split()))
        except Exception as exc:
            message = _classify(exc)
            if message is None:
                _internal_error(exc)
            _fail(message)
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
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the JSON report here (-: standard output; the text report then goes to stderr).",
)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Write every relation table as CSV here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write a self-contained HTML report here.")
@click.option(
    "--extract",
    "extract_dir",
    type=click.Path(file_okay=False),
    help="Write the graph around each reported discrepancy (seq and each rank) as ONNX files here, for Netron.",
)
@click.option(
    "--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Write a SARIF 2.1.0 log here (CI code scanning)."
)
@click.option(
    "--numeric",
    is_flag=True,
    help="Run the numeric witness and report the error of each output; a derived relation it refutes "
    "is an internal inconsistency (exit 4).",
)
@click.option("--seed", default=0, show_default=True, help="First random seed of the numeric witness.")
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
    "--world-size",
    "world_size",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="N ranks; one rank file then serves every rank (an SPMD program such as an XLA HLO file).",
)
@click.option(
    "--source-root",
    type=click.Path(file_okay=False),
    help="Your repository: frames in it are where reports point, SARIF locations are relative to it.",
)
@click.option(
    "--path-map",
    "path_maps",
    multiple=True,
    metavar="OLD=NEW",
    help="Rewrite recorded source paths starting with OLD (the exporting machine's) to NEW (repeatable).",
)
@click.option(
    "--source-include", "includes", multiple=True, metavar="GLOB", help="Your files among the frames (repeatable)."
)
@click.option(
    "--source-exclude",
    "excludes",
    multiple=True,
    metavar="GLOB",
    help="More framework files, never the reported site (repeatable; torch/, onnxscript/ always are).",
)
@click.option(
    "--no-triage",
    "no_triage",
    is_flag=True,
    help="Keep the rules' verdict: do not run the numeric witness on the frontier of a check that is not verified.",
)
@click.option("--explain", is_flag=True, help="Print the input relations that were inferred.")
@click.option("-v", "--verbose", is_flag=True, help="Show every discrepancy.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the verdict (no progress display).")
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
    extract_dir,
    sarif_path,
    numeric,
    seed,
    no_memo,
    all_ranks,
    coverage,
    pipeline,
    world_size,
    source_root,
    path_maps,
    includes,
    excludes,
    no_triage,
    explain,
    verbose,
    quiet,
) -> None:
    """Check SEQ (sequential ONNX) against RANKS (one ONNX file per rank, rank 0 first).

    With --pp P the files are P pipeline stages: shardlog check seq.onnx stage0.onnx stage1.onnx --pp 2.
    With --world-size N one rank file serves every rank: shardlog check tp1.hlo tp8.hlo --world-size 8.
    """
    from analyzer.api import check as run_check
    from analyzer.reports.tables import write_tables
    from analyzer.reports.text import json_text, print_coverage, print_text
    from analyzer.reports.write import STDOUT, refuse_overwriting, write_atomic

    reports = {"--json": json_path, "--html": html_path, "--sarif": sarif_path}
    _refuse_same_outputs(reports)
    inputs = [seq, *ranks, *_spec_files(spec), *_rule_files(rule_dirs)]
    refuse_overwriting(inputs, reports.values())
    sources = _frame_choice(source_root, path_maps, includes, excludes)

    # soft_wrap: report lines carry paths and source locations that must stay greppable;
    # with --json -, standard output is the JSON report and the text report goes to stderr
    console = Console(highlight=False, soft_wrap=True, stderr=json_path == STDOUT)
    err_console = Console(stderr=True, highlight=False, soft_wrap=True)
    with _stage_progress(err_console, quiet or STDOUT in reports.values()):
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
            world_size=world_size,
            sources=sources,
            triage=not no_triage,
        )
    # every report is made before any is written: a report that cannot be made leaves no file
    texts = []
    if json_path:
        texts.append((json_path, json_text(result)))
    if html_path:
        from analyzer.reports.html import render_html

        texts.append((html_path, render_html(result)))
    if sarif_path:
        from analyzer.reports.sarif import sarif_text

        texts.append((sarif_path, sarif_text(result)))
    for path, text in texts:
        write_atomic(path, text)
    if out_dir:
        write_tables(result.derivation, out_dir, inputs)
    if extract_dir:
        from analyzer.reports.extract import write_extracts

        chosen = result.verdict_.discrepancies if verbose else result.verdict_.discrepancies[:5]
        written = write_extracts(result, extract_dir, chosen)
        if not quiet:
            click.echo(f"wrote {len(written)} extracted graphs to {escape(extract_dir)}", err=True)
    if quiet:
        click.echo(result.verdict, err=json_path == STDOUT)
    else:
        print_text(result, console, verbose=verbose, explain=explain)
    if coverage:
        print_coverage(result, console, verbose=verbose)
    sys.exit(EXIT_CODES.get(result.verdict, 1))


def _refuse_same_outputs(reports: dict[str, str | None]) -> None:
    """Two report options naming one file (one would overwrite the other) are refused."""
    seen: dict[str, str] = {}
    for option, path in reports.items():
        if not path:
            continue
        key = os.path.realpath(path) if path != "-" else "-"
        if key in seen:
            raise InputError(f"{seen[key]} and {option} name the same file {escape(os.fsdecode(path), 200)}")
        seen[key] = option


def _spec_files(spec: str | None) -> list[str]:
    """The spec file and the files it names (a mesh spec's ``replica_seq``)."""
    if not spec:
        return []
    from analyzer.inputs.infer import load_spec

    loaded = load_spec(spec)
    return [spec] + ([loaded.replica_seq] if loaded.replica_seq else [])


def _rule_files(rule_dirs) -> list[Path]:
    """The rule files of the ``--rules`` folders (checked as the check reads them)."""
    from analyzer.inputs.files import list_files

    return [f for folder in rule_dirs for f in list_files(folder, ".dl", "rules folder")]


def _frame_choice(root, path_maps, includes, excludes):
    """The --source-* and --path-map options as a FrameChoice (None when none is given)."""
    from analyzer.facts.source import FrameChoice

    if root is not None and not Path(root).is_dir():
        raise InputError(f"--source-root {root}: no such folder")
    pairs = []
    for item in path_maps:
        old, sep, new = item.partition("=")
        if not sep or not old:
            raise InputError(f"--path-map {item!r}: expected OLD=NEW (NEW may be empty or '.')")
        pairs.append((old, new))
    if root is None and not (pairs or includes or excludes):
        return None
    return FrameChoice(tuple(includes), tuple(excludes), str(root) if root else None, tuple(pairs))


@contextlib.contextmanager
def _stage_progress(err_console: Console, off: bool) -> Iterator[None]:
    """Progress per stage (import, facts, solve, witness) on standard error for a run longer
    than a second (:class:`analyzer.progress.StageProgress`): only when standard error is a
    terminal, not with ``--quiet``, not when a report goes to standard output (the text
    report then goes to standard error)."""
    if off or not err_console.is_terminal:
        yield
        return
    from analyzer.progress import StageProgress, listening

    with StageProgress(err_console) as shown, listening(shown):
        yield


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("ranks", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="New folder for the .facts files."
)
@click.option("--graph", default="seq", show_default=True, help="Graph name in the facts of one model (seq, r0, ...).")
@click.option("--relations", "spec", type=click.Path(dir_okay=False), help="YAML spec of input relations (as check).")
@click.option("--pp", "pipeline", type=int, default=None, metavar="P", help="The rank files are P pipeline stages.")
@_user_errors
def facts(model, ranks, out_dir, graph, spec, pipeline) -> None:
    """Write fact tables as tab-separated Name.facts files into a new folder.

    With MODEL alone: that graph's tables (schemas/facts.dl). With MODEL (sequential) and
    RANKS: every fact a check of them starts from (all graphs, the world, the input
    relations), the facts/ folder of a golden case for 'shardlog rules test'.
    """
    from analyzer.reports.tables import write_check_facts, write_model_facts

    if ranks:
        if graph != "seq":
            raise InputError("--graph names the graph of one model; with rank files the graphs are seq, r0, r1, ...")
        count = write_check_facts(model, list(ranks), out_dir, relations=spec, pipeline=pipeline)
    else:
        if spec or pipeline:
            raise InputError("--relations and --pp need the rank files too")
        count = write_model_facts(model, out_dir, graph)
    click.echo(f"wrote {count} fact files to {escape(out_dir)}")


@main.command("import-fx")
@click.argument("dump", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The ONNX file to write (-: standard output).",
)
@click.option("--output", "out_old", hidden=True, type=click.Path(dir_okay=False, allow_dash=True))  # the old spelling
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
def import_fx_command(dump, out, out_old, world_size, constants, positions) -> None:
    """Import DUMP, the text torch.fx prints for an ATen graph (one rank), as an ONNX model."""
    import onnx

    from analyzer.importers.fx import import_fx
    from analyzer.reports.write import refuse_overwriting, write_atomic

    if out and out_old and out != out_old:
        raise InputError("give the output file once (--out)")
    out = out or out_old
    if not out:
        raise InputError("shardlog import-fx: missing option '-o' / '--out'")

    refuse_overwriting([dump], [out])
    values = _parse_constants(constants)
    model = import_fx(dump, world_size=world_size, constants=values, outputs=_parse_positions(positions))
    unknown = sorted(set(values) - {i.name for i in model.graph.initializer})
    if unknown:
        raise InputError(f"{dump}: --constant {shown(unknown[0])}: the graph has no constant of that name")
    onnx.checker.check_model(model)  # what is written passes the checker (a failure is a bug of ours)
    write_atomic(out, model.SerializeToString())
    g = model.graph
    # with -o -, standard output is the model: the summary goes to stderr
    summary = f"wrote {escape(out)}: {len(g.node)} nodes, {len(g.input)} inputs, {len(g.output)} outputs"
    click.echo(summary, err=out == "-")


@main.command("import-hlo")
@click.argument("hlo", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="The ONNX file to write.")
@click.option("--rank", type=click.IntRange(min=0), default=None, help="The rank this graph is for (partition-id).")
@click.option(
    "--world-size",
    type=click.IntRange(min=1),
    help="1 for a sequential program: collectives become identities. N: the number of ranks.",
)
@_user_errors
def import_hlo_command(hlo, out, rank, world_size) -> None:
    """Import HLO, an XLA HLO module (text, or an HloModuleProto .pb with jaxlib), as one rank's ONNX graph."""
    import onnx

    from analyzer.importers.hlo import import_hlo
    from analyzer.reports.write import refuse_overwriting, write_atomic

    refuse_overwriting([hlo], [out])
    if rank is not None and world_size is not None and rank >= world_size:
        raise InputError(f"--rank {rank} is not a rank of --world-size {world_size}")
    model = import_hlo(hlo, rank=rank, world_size=world_size)
    onnx.checker.check_model(model)  # what is written passes the checker (a failure is a bug of ours)
    write_atomic(out, model.SerializeToString())
    g = model.graph
    # with -o -, standard output is the model: the summary goes to stderr
    summary = f"wrote {escape(out)}: {len(g.node)} nodes, {len(g.input)} inputs, {len(g.output)} outputs"
    click.echo(summary, err=out == "-")


def _parse_constants(items) -> dict[str, float]:
    values = {}
    for item in items:
        name, _, text = item.partition("=")
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not name.strip():
            raise InputError(f"--constant {shown(item)}: expected NAME=NUMBER")
        values[name.strip()] = value
    return values


def _parse_positions(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        positions = [int(p) for p in text.split(",")]
    except ValueError:
        raise InputError(f"--outputs {shown(text)}: expected comma-separated positions such as 0,1") from None
    return list(dict.fromkeys(positions))  # a position given twice is kept once


@main.command("export")
@click.option(
    "--hf",
    "config",
    required=True,
    help="The model to build: a Hugging Face config.json (or YAML with model_type and its fields), a model "
    "folder holding config.json, or a Hub model name whose config is in the local Hugging Face cache.",
)
@click.option("--world-size", type=click.IntRange(min=2), help="Number of tensor-parallel ranks (or give --mesh).")
@click.option(
    "--mesh",
    "mesh_text",
    metavar="tp=T,dp=D",
    help="A data-parallel x tensor-parallel mesh (rank r = dp index * T + tp index): writes seq_replica.onnx and "
    "the spec mesh.yaml too; dp=N alone is data parallelism.",
)
@click.option(
    "--train",
    type=click.Choice(["sgd", "adamw"]),
    help="Export one training step (loss, backward, gradient all-reduce, update) with this optimizer.",
)
@click.option("--clip", type=float, help="With --train: clip the gradients to this total norm.")
@click.option(
    "--pp",
    type=click.IntRange(min=2, max=2),
    help="Pipeline stages (2): OUT/stage0.onnx, OUT/stage1.onnx split by torch.distributed.pipelining.",
)
@click.option("--split-layer", type=click.IntRange(min=1), help="With --pp: the first decoder layer of stage 1.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="New folder for the files.")
@click.option(
    "--plan",
    "plan_path",
    type=click.Path(dir_okay=False),
    help="YAML: module pattern -> style (ColwiseParallel(), rowwise, ...), ahead of the model's own tp_plan.",
)
@click.option("--seq-len", default=8, show_default=True, type=click.IntRange(min=1), help="Traced sequence length.")
@click.option(
    "--batch", type=click.IntRange(min=1), help="Traced batch size (default: the data-parallel size, else 1)."
)
@click.option("--seed", default=0, show_default=True, help="Seed of the random weights and tokens.")
@_user_errors
def export_command(
    config, world_size, mesh_text, train, clip, pp, split_layer, out_dir, plan_path, seq_len, batch, seed
) -> None:
    """Export a Hugging Face model sequentially and in parallel: OUT/seq.onnx, OUT/rank<r>.onnx.

    Needs the export extra (pip install 'shardlog[export]'). Then: shardlog check OUT/seq.onnx OUT/rank*.onnx
    (with --mesh: --relations OUT/mesh.yaml; with --pp 2: OUT/stage0.onnx OUT/stage1.onnx --pp 2).
    """
    from analyzer.export import export_hf
    from analyzer.export.plan import load_plan

    if pp is not None:
        if world_size is not None or mesh_text is not None or train or plan_path:
            raise InputError("--pp exports the stages of the sequential forward: not with --world-size, --mesh, "
                             "--train or --plan")  # fmt: skip
        from analyzer.export.stages import export_hf_stages

        files = export_hf_stages(config, out_dir, split_layer=split_layer, seq_len=seq_len, batch=batch or 1, seed=seed)
        click.echo(f"wrote {' '.join(str(f) for f in files)}")
        return
    if split_layer is not None:
        raise InputError("--split-layer needs --pp 2")
    if (world_size is None) == (mesh_text is None):
        raise InputError("give --world-size N (tensor parallel), --mesh tp=T,dp=D or --pp 2, one of them")
    plan = load_plan(plan_path) if plan_path else None
    files = export_hf(config, world_size, out_dir, plan=plan, seq_len=seq_len, batch=batch, seed=seed,
                      mesh=mesh_text, train=train, clip=clip)  # fmt: skip
    click.echo(f"wrote {' '.join(str(f) for f in files)}")


@main.command()
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.argument("relation")
@click.option("--where", "conditions", multiple=True, help="col=value filter (repeatable).")
@_user_errors
def query(out_dir, relation, conditions) -> None:
    """Print RELATION from the CSV tables a check wrote with --out OUT_DIR."""
    from analyzer.reports.tables import query_table

    frame = query_table(out_dir, relation, conditions)
    if not len(frame):
        click.echo(f"(no rows in {relation})")
        return
    frame = frame.map(escape)  # the cells are names from a model: shown with control characters escaped
    frame.columns = [escape(c) for c in frame.columns]
    click.echo(frame.to_string(index=False))


@main.group()
def cache() -> None:
    """The cache of parsed rule programs (platform cache folder, or $SHARDLOG_CACHE)."""


@cache.command("info")
@_user_errors
def cache_info() -> None:
    """Print where the cache is, its entries and their size."""
    from analyzer.cache import _max_bytes, cache_dir, entries

    found = entries()
    size = sum(p.stat().st_size for p in found if p.exists())
    click.echo(f"{cache_dir()}: {len(found)} entries, {size / 2**20:.1f} MB (bound {_max_bytes() / 2**20:.0f} MB)")


@cache.command("clear")
@_user_errors
def cache_clear() -> None:
    """Remove every cache entry (they are rebuilt when needed)."""
    from analyzer.cache import cache_dir, clear

    count, freed = clear()
    click.echo(f"removed {count} entries ({freed / 2**20:.1f} MB) from {cache_dir()}")


@main.group()
def rules() -> None:
    """Work on rule files."""


@rules.command("test")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option(
    "--engine",
    "engines",
    multiple=True,
    type=click.Choice(list(ENGINES), case_sensitive=False),
    help="Engine to run (repeatable; default: every available one).",
)
@click.option(
    "--update-expected",
    is_flag=True,
    help="Write each case's expected/*.csv from the first engine's result (review the diff), "
    "then compare the other engines with it.",
)
@_user_errors
def rules_test(folder, engines, update_expected) -> None:
    """Run the golden cases under FOLDER (case/facts/*.facts in, case/expected/*.csv out) on every engine.

    A case's program.txt lists rule files relative to its repository; schemas/ and rules/
    lines that match nothing there are read from the installed library.
    Exit 0 when every case matches on every engine, 1 when one does not, 2 when an engine
    asked for with --engine cannot run here or ran no case.
    """
    from analyzer.datalog.golden import find_cases, run_golden_case
    from analyzer.engines import EngineUnavailable, available_engines, get_engine
    from analyzer.inputs.files import check_folder

    check_folder(folder, "folder")
    cases = find_cases(folder)
    if not cases:
        raise InputError(f"{folder}: no golden case (a folder with facts/, expected/ and program.dl or program.txt)")
    failed = ran = compared = 0
    writer = None  # with --update-expected: the first engine that runs writes, the others compare
    for name in [e.lower() for e in engines] or available_engines():
        try:
            engine = get_engine(name)
        except EngineUnavailable as exc:
            if engines:
                raise InputError(f"engine {name} cannot run here: {exc}") from None
            click.echo(f"skip {escape(name)}: {escape(exc)}")
            continue
        skipped: list[str] = []
        writer = name if update_expected and writer is None else writer
        writes = writer == name
        for case in cases:
            try:
                mismatches = run_golden_case(case, engine, regen=writes)
            except EngineUnavailable as exc:
                skipped.append(f"{case.name}: {exc}")
                click.echo(f"skip {escape(case.name)} on {escape(name)}: {escape(exc)}")
                continue
            ran += 1
            if writes:
                click.echo(f"wrote {case.name}/expected ({name})")
                continue
            status = "ok" if not mismatches else "FAIL"
            compared += 1
            failed += bool(mismatches)
            click.echo(f"{status:4} {escape(case.name)} ({escape(name)})")
            for m in mismatches:
                click.echo(f"     {escape(m, 2000)}")
        if engines and len(skipped) == len(cases):
            raise InputError(f"no case ran on engine {name} (skipped {skipped[0]})")
    if ran == 0:
        raise InputError(f"{folder}: no case ran on any engine")
    if compared == 0:
        click.echo(f"wrote the expected tables of {ran} case(s): review the diff")
    else:
        click.echo(f"{failed} failed" if failed else "all cases pass")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
