"""String and shape checks of whole files beside the check (analyzer/speedups/proofs.py): the same
one-line errors and the same results as when each file is checked as it loads."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

import analyzer.speedups.proofs as proofs_module
from analyzer import check
from analyzer.cli import main
from analyzer.errors import InputError
from analyzer.inputs.load import load_inputs
from analyzer.speedups.proofs import WireProofs

CASE = EXAMPLES / "llama_tp2"
MARKER = "shardlog-proof-marker"

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the proofs fork only on Linux")


def _with_bad_name(tmp_path: Path) -> tuple[Path, list[Path]]:
    """llama_tp2 with one node name of rank 1 made of bytes that are not UTF-8."""
    model = onnx.load(str(CASE / "rank1.onnx"), load_external_data=False)
    model.graph.node[3].name = MARKER
    (tmp_path / "rank1.onnx").write_bytes(model.SerializeToString().replace(MARKER.encode(), b"\xff" * len(MARKER)))
    return CASE / "seq.onnx", [CASE / "rank0.onnx", tmp_path / "rank1.onnx"]


@pytest.fixture
def always_fork(monkeypatch, fork_possible):
    """Fork for any amount of work (the examples are smaller than the threshold)."""
    monkeypatch.setattr(proofs_module, "FORK_MIN_BYTES", 0)
    forks = []
    real_fork = os.fork

    def counted():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return forks


def _error(seq, ranks, **kwargs) -> str:
    with pytest.raises(InputError) as err:
        check(seq, ranks, **kwargs)
    return str(err.value)


@needs_fork
def test_a_malformed_file_gives_the_same_error_with_the_proofs_in_a_child(tmp_path, always_fork, monkeypatch):
    seq, ranks = _with_bad_name(tmp_path)
    forked = _error(seq, ranks)
    assert always_fork, "the proofs did not run in a child"
    monkeypatch.setattr(proofs_module, "can_fork", lambda: False)
    inline = _error(seq, ranks)
    with pytest.raises(InputError) as err:
        load_inputs(seq, ranks)  # without proofs: each file checked as it loads
    assert forked == inline == str(err.value)
    assert forked == f"{ranks[1]}: malformed ONNX model: model.graph.node[3].name is not UTF-8 text"


@needs_fork
def test_the_cli_reports_it_in_one_line_with_exit_code_2(tmp_path, always_fork):
    seq, ranks = _with_bad_name(tmp_path)
    result = CliRunner().invoke(main, ["check", str(seq), *map(str, ranks)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"shardlog: error: {ranks[1]}: malformed ONNX model: model.graph.node[3].name is not UTF-8 text"]
    assert always_fork


@needs_fork
def test_well_formed_files_give_the_same_result_and_the_child_is_reaped(always_fork, monkeypatch):
    seq, ranks = CASE / "seq.onnx", [CASE / "rank0.onnx", CASE / "rank1.onnx"]
    forked = check(seq, ranks)
    assert always_fork
    for pid in always_fork:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already waited for: no zombie
    monkeypatch.setattr(proofs_module, "can_fork", lambda: False)
    inline = check(seq, ranks)
    assert forked.verdict == inline.verdict == "verified"
    assert forked.derivation.derived == inline.derivation.derived


def test_settle_proves_in_the_caller_when_no_child_ran(tmp_path):
    seq, ranks = _with_bad_name(tmp_path)
    proofs = WireProofs(fork_min_bytes=1 << 60)
    for path in ranks:
        model = onnx.load(str(path), load_external_data=False)
        proofs.add(path, model, path.read_bytes())
    proofs.start()  # too little work to fork
    with pytest.raises(InputError, match=r"rank1\.onnx: malformed ONNX model: .* is not UTF-8"):
        proofs.settle()
    proofs.settle()  # nothing left to prove


@needs_fork
def test_a_child_that_fails_is_replaced_by_proving_in_the_caller(tmp_path, always_fork, monkeypatch):
    seq, ranks = _with_bad_name(tmp_path)

    def broken(items):
        raise RuntimeError("the child fails")

    monkeypatch.setattr(proofs_module, "_answer", broken)
    assert _error(seq, ranks).endswith("model.graph.node[3].name is not UTF-8 text")
    assert always_fork


@needs_fork
def test_a_file_added_after_the_child_started_is_proved_too(tmp_path):
    seq, ranks = _with_bad_name(tmp_path)
    proofs = WireProofs(fork_min_bytes=0)
    good = ranks[0]
    proofs.add(good, onnx.load(str(good), load_external_data=False), good.read_bytes())
    proofs.start()  # the child proves rank 0 only
    bad = ranks[1]
    proofs.add(bad, onnx.load(str(bad), load_external_data=False), bad.read_bytes())
    with pytest.raises(InputError, match=r"rank1\.onnx: malformed ONNX model: .* is not UTF-8"):
        proofs.settle()
