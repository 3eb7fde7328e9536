"""docs/rules.md is a walkthrough a new user follows: run every step of it and check that an
unproven graph (no rule; the numbers agree) becomes verified with the rule file it shows (an
elementwise op, then a linear one), and that a partial sum reaching the elementwise op gets the
missing-all-reduce hint."""

from __future__ import annotations

import re
import shlex

import pytest
from click.testing import CliRunner
from conftest import ROOT

from analyzer import check
from analyzer.cli import main

DOC = ROOT / "docs" / "rules.md"
FENCE = re.compile(r"^```(\w+)(?: (\S+))?\n(.*?)^```", re.M | re.S)


def _blocks():
    return [(m[1], m[2], m[3]) for m in FENCE.finditer(DOC.read_text(encoding="utf-8"))]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _write_files(tmp_path) -> list[str]:
    """Write the page's named files and run its Python blocks in ``tmp_path`` (the cwd);
    returns the console blocks in order."""
    consoles = []
    for lang, name, body in _blocks():
        if name:
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
        elif lang == "python":
            exec(compile(body, str(DOC), "exec"), {})
        elif lang == "console":
            consoles.append(body)
    return consoles


@pytest.mark.slow
def test_walkthrough(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    consoles = _write_files(tmp_path)
    assert len(consoles) == 8
    outcomes = []
    for body in consoles:
        command, *expected = body.splitlines()
        args = shlex.split(command.removeprefix("$ "))
        assert args[0] == "shardlog"
        result = CliRunner().invoke(main, args[1:])
        outcomes.append(result.exit_code)
        out = _norm(result.output)
        for line in expected:
            line = line.strip()
            if line and "..." not in line:
                assert _norm(line) in out, f"{line!r} not in output of {command!r}:\n{result.output}"
    # FastGelu: unproven (no rule; the numbers agree), verified with the rule, the buggy ranks
    # flagged; the golden case: facts written, expected tables written, every engine passes;
    # Scale: unproven, verified with the rule
    assert outcomes == [3, 0, 1, 0, 0, 0, 3, 0]
    # the golden case holds the verified relation: y rebuilt as Replicate on both ranks
    holds = (tmp_path / "golden" / "fastgelu" / "expected" / "OutputRelation.csv").read_text()
    assert holds.splitlines()[0].split("\t")[:2] == ["y", "Replicate"]


def test_a_partial_sum_reaching_the_users_custom_domain_op_gets_the_missing_allreduce_hint(tmp_path, monkeypatch):
    """The op has the user's rule (KnownOp with its domain): not 'no transfer rule', but the
    hint for a partial sum reaching an op that is not linear in it."""
    monkeypatch.chdir(tmp_path)
    _write_files(tmp_path)
    result = check("seq.onnx", ["bug0.onnx", "bug1.onnx"], rules=["my_rules"])
    assert result.verdict == "discrepancy"
    first = result.verdict_.discrepancies[0]
    assert first.op_type == "com.example::FastGelu"
    assert "missing-allreduce" in first.hint_ids and "no-rule" not in first.hint_ids
    assert result.verdict_.no_rule_ops == []
    # without the user's rule the op has none
    bare = check("seq.onnx", ["bug0.onnx", "bug1.onnx"]).verdict_
    assert "no-rule" in bare.discrepancies[0].hint_ids
