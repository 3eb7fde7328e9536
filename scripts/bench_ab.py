"""Interleaved A/B timing of ``check()`` in two checkouts of shardlog (e.g. before and after a
restructure), case by case.

Each run is a fresh child process with the checkout on ``PYTHONPATH`` and its own program cache
(``$SHARDLOG_CACHE`` under the temp folder); the timed part is the first ``check()`` call after
``from analyzer import check``. The two checkouts alternate run by run (A B, B A, ...), so load
from other jobs falls on both alike; one untimed run per checkout fills its caches first.

Cases: ``examples/<case>`` folders (their ``case.yaml``: ranks, spec, pipeline, SPMD world size),
``examples/entangle/<case>`` (GraphGuard's dumps: bundled, or under ``--entangle DIR``), or a
folder of ``scripts/make_large.py`` (``seq.onnx`` and ``rank*.onnx``, no ``case.yaml``).

Usage::

    python scripts/bench_ab.py --runs 5 ../before . examples/llama_tp2 examples/entangle/gpt_tp2_layer1

Prints one Markdown table row per case: verdicts, median seconds of A and B, B/A.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import _case_args  # noqa: E402

CHILD = r"""
import inspect, json, sys, time
job = json.loads(sys.argv[1])
from analyzer import check
if job["no_triage"] and "triage" in inspect.signature(check).parameters:  # older trees have none
    job["kwargs"]["triage"] = False
t0 = time.perf_counter()
r = check(job["seq"], job["ranks"], **job["kwargs"])
print(json.dumps({"check": time.perf_counter() - t0, "verdict": r.verdict}))
"""


def _job(folder: Path, entangle: Path, triage: bool) -> dict:
    if (folder / "case.yaml").is_file():
        args = _case_args(folder, entangle)
        if args is None:
            raise click.UsageError(f"{folder}: GraphGuard's dumps are not under {entangle}")
        seq, ranks, kwargs = args
    else:  # a make_large.py folder
        seq = folder / "seq.onnx"
        ranks = sorted(folder.glob("rank*.onnx"), key=lambda p: int(p.stem[4:]))
        kwargs = {}
    kwargs = {k: str(v) if isinstance(v, Path) else v for k, v in kwargs.items()}
    return {"seq": str(seq), "ranks": [str(r) for r in ranks], "kwargs": kwargs, "no_triage": not triage}


def _run(tree: Path, job: str) -> dict:
    cache = Path(tempfile.gettempdir()) / f"shardlog-ab-{tree.resolve().name}"
    env = dict(os.environ, PYTHONPATH=str(tree), SHARDLOG_CACHE=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both as installed packages: compiled once
    out = subprocess.run([sys.executable, "-c", CHILD, job], env=env, capture_output=True, text=True, cwd=tree)
    if out.returncode:
        raise click.ClickException(f"{tree}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@click.command()
@click.option("--runs", default=5, show_default=True, help="Timed runs per checkout and case (median reported).")
@click.option("--entangle", type=click.Path(path_type=Path), default=Path("../shared/data/entangle"), show_default=True)
@click.option("--no-triage", is_flag=True, help="check(triage=False) where check() has it: the rules' verdict alone.")
@click.argument("tree_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("tree_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("cases", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
def main(runs: int, entangle: Path, no_triage: bool, tree_a: Path, tree_b: Path, cases: tuple[Path, ...]) -> None:
    """Time check() on CASES in TREE_A and TREE_B, interleaved."""
    print("| case | verdict A / B | A s | B s | B/A |")
    print("|---|---|---|---|---|")
    for case in cases:
        job = json.dumps(_job(case.resolve(), entangle.resolve(), not no_triage))
        times: dict[Path, list[float]] = {tree_a: [], tree_b: []}
        verdict = {}
        for tree in (tree_a, tree_b):  # untimed: fill the bytecode and program caches
            verdict[tree] = _run(tree, job)["verdict"]
        for i in range(runs):
            for tree in (tree_a, tree_b) if i % 2 == 0 else (tree_b, tree_a):
                times[tree].append(_run(tree, job)["check"])
        a, b = statistics.median(times[tree_a]), statistics.median(times[tree_b])
        print(f"| {case.name} | {verdict[tree_a]} / {verdict[tree_b]} | {a:.3f} | {b:.3f} | {b / a:.2f} |", flush=True)


if __name__ == "__main__":
    main()
