"""Progress per stage (import, facts, solve, witness) on standard error, only on a terminal
(analyzer/progress.py, the CLI's ``_stage_progress``): drawn under a pseudo-terminal for a run
longer than a second, absent when standard error is a pipe, with ``--quiet``, and in CliRunner's
captured output."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from analyzer.cli import main

pty = pytest.importorskip("pty", reason="no pseudo-terminals on this platform")

CASE = EXAMPLES / "llama_tp2_adamw_clip"  # a training step: about 3 s with --numeric
ARGS = ["check", str(CASE / "seq.onnx"), str(CASE / "rank0.onnx"), str(CASE / "rank1.onnx"), "--numeric"]
pytestmark = [
    pytest.mark.slow,  # each runs a training-step check with the witness in a child process
    pytest.mark.skipif(not CASE.is_dir(), reason="examples/llama_tp2_adamw_clip not present"),
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "CI", "GITHUB_ACTIONS")}
    env.update(TERM="xterm", COLUMNS="100")
    return env


def _run_with_stderr_on_a_terminal(*extra: str) -> tuple[int, bytes, bytes]:
    """Run shardlog with standard error on a pseudo-terminal: exit code, stdout, what the terminal got."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer.cli", *ARGS, *extra], stdout=subprocess.PIPE, stderr=slave, env=_env()
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal (EIO on Linux)
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read()
    proc.stdout.close()
    os.close(master)
    return proc.wait(), out, seen


def test_progress_per_stage_under_a_pseudo_terminal():
    code, out, seen = _run_with_stderr_on_a_terminal()
    assert code == 0, (out, seen)
    for name in (b"import", b"facts", b"solve", b"witness"):
        assert name in seen, seen[-2000:]
    assert b" s" in seen and b"done" in seen
    assert b"verified" in out and b"import" not in out and b"\x1b[" not in out  # the report stays clean
    code, out, seen = _run_with_stderr_on_a_terminal("--quiet")
    assert code == 0 and out.strip() == b"verified" and seen == b"", seen


def test_no_progress_when_standard_error_is_not_a_terminal():
    proc = subprocess.run([sys.executable, "-m", "analyzer.cli", *ARGS], capture_output=True, env=_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"", proc.stderr
    assert b"witness" not in proc.stdout.split(b"output", 1)[0]
    result = CliRunner().invoke(main, [*ARGS, "--json", "-"])  # captured: not a terminal
    assert result.exit_code == 0
    assert json.loads(result.stdout)["verdict"] == "verified"  # the JSON report alone on stdout
    assert "\x1b[" not in result.output and "witness " not in result.stderr.split("output", 1)[0]
