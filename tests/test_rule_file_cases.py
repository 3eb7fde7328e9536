"""A golden case per rule file (tests/rules/library/<dir>.<stem>/, built by scripts/rule_cases.py):
small graphs' facts in, every non-empty output relation of the whole rule library out, so a rule
change shows which behaviour moved. Every rule file has a case, each case fires rules of its
file, and the engines agree on every case (pyDatalog is left out: about 7 s a case)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from analyzer.datalog import read_facts_dir
from analyzer.datalog.golden import find_cases, load_case_program, run_golden_case
from analyzer.engines import EngineUnavailable, get_engine
from analyzer.solve.coverage import coverage_of, instrument

LIBRARY = ROOT / "tests" / "rules" / "library"
CASES = find_cases(LIBRARY)
REGEN = os.environ.get("SHARDLOG_REGEN_GOLDEN") == "1"


def _rule_file(case: Path) -> Path:
    return ROOT / yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8"))["rules"]


def _case_name(rule_file: Path) -> str:
    rel = rule_file.relative_to(ROOT / "rules")
    return ".".join([*rel.parent.parts, rel.stem])


def test_every_rule_file_has_a_case():
    rule_files = sorted((ROOT / "rules").rglob("*.dl"))
    assert len(rule_files) > 50
    missing = [str(f.relative_to(ROOT)) for f in rule_files if not (LIBRARY / _case_name(f) / "case.yaml").is_file()]
    assert missing == []
    for case in CASES:  # each case names the file it is named after
        assert _case_name(_rule_file(case)) == case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.slow
def test_the_case_fires_rules_of_its_file(case):
    program = load_case_program(case, ROOT)
    facts = read_facts_dir(case / "facts", program.decls)
    derived = get_engine("seminaive").run(instrument(program), facts)
    target = _rule_file(case).resolve()
    mine = [c for c in coverage_of(program, derived) if Path(c.file).resolve() == target]
    assert mine, f"no rule of {target} in the program"
    assert any(c.fired for c in mine), f"no rule of {target.name} fires on {case.name}'s facts"


# the default engine in the default run; the others (tests/test_engine_conformance.py too) under `slow`
@pytest.mark.parametrize(
    "engine_name", ["seminaive", *(pytest.param(name, marks=pytest.mark.slow) for name in ("clingo", "souffle"))]
)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, engine_name):
    try:
        engine = get_engine(engine_name)
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    mismatches = run_golden_case(case, engine, regen=REGEN and engine_name == "seminaive", root=ROOT)
    assert not mismatches, "\n".join(mismatches)
