"""Rank dumps imported by a forked child (analyzer/fx/beside.py): the same models, the same
one-line errors and the same results as when the caller imports every dump itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import EXAMPLES, entangle_dumps_root

import analyzer.fx.beside as beside_module
from analyzer import check
from analyzer.cli import main
from analyzer.driver import load_inputs
from analyzer.errors import InputError
from analyzer.fx import import_fx

CASE = EXAMPLES / "entangle" / "qwen2_tp4_layer1"  # bundled dumps: four ranks, two go to the child

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the dumps are imported beside only on Linux"
)


def _case() -> tuple[Path, list[Path], Path]:
    cfg = yaml.safe_load((CASE / "case.yaml").read_text(encoding="utf-8"))
    root = entangle_dumps_root(cfg)
    return root / cfg["seq"], [root / r for r in cfg["ranks"]], CASE / cfg.get("spec", "spec.yaml")


@pytest.fixture
def forks(monkeypatch):
    """The pids of the children forked for the dumps."""
    pids = []
    real_fork = os.fork

    def counted():
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return pids


def test_the_child_s_models_are_the_caller_s_and_it_is_reaped(forks, monkeypatch):
    seq, ranks, spec = _case()
    beside = load_inputs(seq, ranks, spec)
    assert len(forks) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)  # already waited for: no zombie
    monkeypatch.setattr(beside_module, "can_fork", lambda: False)
    inline = load_inputs(seq, ranks, spec)
    assert len(forks) == 1
    for a, b in zip(beside.ranks, inline.ranks, strict=True):
        assert a.SerializeToString() == b.SerializeToString()
    # and they are what import_fx gives for a rank dump
    spec_text = yaml.safe_load(spec.read_text(encoding="utf-8")) or {}
    direct = import_fx(ranks[-1], constants=spec_text.get("constants"), outputs=spec_text.get("outputs"))
    assert beside.ranks[-1].SerializeToString() == direct.SerializeToString()


def test_the_check_is_the_same_with_and_without_the_child(forks, monkeypatch):
    seq, ranks, spec = _case()
    forked = check(seq, ranks, relations=spec)
    assert forks
    monkeypatch.setattr(beside_module, "can_fork", lambda: False)
    inline = check(seq, ranks, relations=spec)
    assert forked.verdict == inline.verdict == "verified"
    assert forked.derivation.derived == inline.derivation.derived


def _with_bad_rank(tmp_path: Path, index: int) -> tuple[Path, list[Path], Path]:
    seq, ranks, spec = _case()
    bad = tmp_path / f"rank{index}.py"
    bad.write_text(ranks[index].read_text(encoding="utf-8").replace("torch.ops.aten.", "torch.ops.nosuch.", 1))
    ranks = list(ranks)
    ranks[index] = bad
    return seq, ranks, spec


@pytest.mark.parametrize("index", [1, 2, 3])  # the caller's rank, the child's first, the child's last
def test_a_bad_dump_gives_the_same_error_with_the_child(tmp_path, forks, monkeypatch, index):
    seq, ranks, spec = _with_bad_rank(tmp_path, index)
    with pytest.raises(InputError) as forked:
        check(seq, ranks, relations=spec)
    assert forks
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    monkeypatch.setattr(beside_module, "can_fork", lambda: False)
    with pytest.raises(InputError) as inline:
        check(seq, ranks, relations=spec)
    assert str(forked.value) == str(inline.value)
    assert str(ranks[index]) in str(forked.value)


def test_a_missing_rank_dump_and_a_bad_sequential_dump_are_one_line_errors(tmp_path, forks):
    seq, ranks, spec = _case()
    missing = [*ranks[:-1], tmp_path / "gone.py"]
    bad_seq = tmp_path / "seq.py"
    bad_seq.write_text("this is not a torch.fx dump\n")
    runner = CliRunner()
    for args in ([str(seq), *map(str, missing)], [str(bad_seq), *map(str, ranks)]):
        result = runner.invoke(main, ["check", *args, "--relations", str(spec)])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1
        assert "Traceback" not in result.output
    assert len(forks) == 2
    for pid in forks:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_child_that_dies_is_replaced_by_importing_in_the_caller(forks, monkeypatch):
    seq, ranks, spec = _case()

    def dies(*_args, **_kwargs):
        os._exit(3)

    monkeypatch.setattr(beside_module, "write_all", dies)  # only the child writes: it dies unsent
    died = load_inputs(seq, ranks, spec)
    assert forks
    monkeypatch.setattr(beside_module, "can_fork", lambda: False)
    inline = load_inputs(seq, ranks, spec)
    for a, b in zip(died.ranks, inline.ranks, strict=True):
        assert a.SerializeToString() == b.SerializeToString()
