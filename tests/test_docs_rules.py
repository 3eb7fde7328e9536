"""docs/rules.md is a walkthrough a new user follows: run every step of it and check that an
unproven graph (no rule; the numbers agree) becomes verified with the rule file it shows."""

from __future__ import annotations

import re
import shlex

from click.testing import CliRunner
from conftest import ROOT

from analyzer.cli import main

DOC = ROOT / "docs" / "rules.md"
FENCE = re.compile(r"^```(\w+)(?: (\S+))?\n(.*?)^```", re.M | re.S)


def _blocks():
    return [(m[1], m[2], m[3]) for m in FENCE.finditer(DOC.read_text(encoding="utf-8"))]


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_walkthrough(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
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
    assert len(consoles) == 2
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
    assert outcomes == [3, 0]  # unproven (no rule, the numbers agree), then verified with the rule
