"""Runaway user rules on every engine (analyzer/engines/limits.py): a ``--rules`` file whose
recursion builds new values from derived ones (numbers, or symbols with ``cat``) ends in one
``shardlog: error:`` line, exit code 2, naming its file and line, within bounded time and
memory, on ``--engine seminaive|clingo|souffle|pydatalog``. Each run is a subprocess (a
runaway must not take the test process with it); an engine that is not installed is skipped
with the reason it gives."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from analyzer.engines import get_engine

sys.path.insert(0, str(ROOT / "scripts"))
import fuzz  # noqa: E402  (the seed graphs)

#: rule files, each with the line of its runaway rule; the OutLayout rule keeps them relevant
#: (a rule that cannot change an output is left out before the run)
RUNAWAY = {
    "numbers": (
        '.decl Num(x: number)\nNum(0) :- Node("seq", _, _, _, _).\nNum(x + 1) :- Num(x).\n'
        'OutLayout(n, r, m, 0, "Shard", x, "") :- Num(x), Pair(n, r, m), x < 0.\n',
        3,
    ),
    "symbols": (
        '.decl Name(s: symbol)\nName(n) :- Node("seq", n, _, _, _).\nName(cat(s, "x")) :- Name(s).\n'
        'OutLayout(n, r, m, 0, "Shard", 0, "") :- Name(s), Pair(n, r, m), s = "never".\n',
        3,
    ),
}
#: the time limit the slow engines run with here (Soufflé's memory limit ends the symbol case
#: sooner; the number case and pyDatalog's naive iteration reach this one)
SECONDS = "20"
#: what each engine says it stopped at, by case
LIMITS = {
    ("seminaive", "numbers"): "over 20,000 rounds",
    ("seminaive", "symbols"): "characters of new symbols built by cat",
    ("clingo", "numbers"): "over 500,000 derived rows",
    ("clingo", "symbols"): "characters of new symbols built by cat",
    ("souffle", "numbers"): f"over {SECONDS} s",
    ("souffle", "symbols"): "over 1 GiB of memory",
    ("pydatalog", "numbers"): f"over {SECONDS} s",
    ("pydatalog", "symbols"): "characters of new symbols built by cat",
}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graphs")
    models = fuzz.seed_models()
    for name in ("seq", "rank"):
        (folder / f"{name}.onnx").write_bytes(models[name].SerializeToString())
    return folder


def _run_measured(cmd: list[str], env: dict) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``cmd``; also its peak resident memory (KiB): the high-water mark of its own address
    space (``VmHWM``), read while it runs (``ru_maxrss`` of a child also counts what this test
    process held when it forked, which an earlier test may have grown)."""
    import threading

    peak = [0]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as child:
        def watch() -> None:
            while child.poll() is None:
                try:
                    for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
                except (OSError, ValueError, IndexError):
                    pass
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        out, err = child.communicate(timeout=300)
        watcher.join()
    if not Path("/proc/self/status").exists():  # not Linux: the largest child so far
        peak[0] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return subprocess.CompletedProcess(cmd, child.returncode, out, err), peak[0]


def _available(engine: str) -> None:
    reason = type(get_engine(engine)).unavailable_reason()
    if reason:
        print(f"skipped: engine {engine} is not available here: {reason}")
        pytest.skip(f"engine {engine}: {reason}")


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(RUNAWAY))
@pytest.mark.parametrize("engine", ["seminaive", "clingo", "souffle", "pydatalog"])
def test_runaway_rule_ends_in_one_line_on_every_engine(graphs, tmp_path, engine, case):
    _available(engine)
    text, line = RUNAWAY[case]
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "runaway.dl").write_text(text)
    cmd = [sys.executable, "-m", "analyzer.cli", "check", graphs / "seq.onnx", graphs / "rank.onnx",
           graphs / "rank.onnx", "--engine", engine, "--rules", tmp_path / "rules"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SHARDLOG_ENGINE_SECONDS": SECONDS}
    t0 = time.monotonic()
    proc, peak = _run_measured(list(map(str, cmd)), env)
    seconds = time.monotonic() - t0
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("shardlog: error: "), proc.stderr
    assert "derivation stopped" in lines[0] and LIMITS[engine, case] in lines[0], lines[0]
    # the rule is named: as the error's location where the engine tells (Soufflé does not: the
    # recursive rules that build values are listed, the user's first)
    where = f"{tmp_path / 'rules' / 'runaway.dl'}:{line}:"
    if engine == "souffle":
        assert f"values from derived ones: {where}" in lines[0], lines[0]
    else:
        assert lines[0].startswith(f"shardlog: error: {where}"), lines[0]
    assert seconds < 150, seconds
    assert peak < 2_500_000, peak  # KiB


def test_a_bad_time_limit_is_one_input_error(graphs):
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer.cli", "check", str(graphs / "seq.onnx"), str(graphs / "rank.onnx"),
         str(graphs / "rank.onnx")],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "SHARDLOG_ENGINE_SECONDS": "soon"},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        "shardlog: error: $SHARDLOG_ENGINE_SECONDS=soon: not a positive number of seconds"
    ), proc.stderr


def test_the_library_is_far_below_the_limits():
    """No rule of the library is stopped on a real example: the limits only end runaways (the
    example verified on clingo, whose value-building rules now count what they build)."""
    from analyzer import check

    example = ROOT / "examples" / "llama_tp2"
    result = check(example / "seq.onnx", [example / "rank0.onnx", example / "rank1.onnx"], engine="clingo")
    assert result.verdict == "verified"
