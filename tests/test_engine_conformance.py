"""Golden conformance suite: every case under ``tests/rules/`` on every available engine.

A case is ``program.dl`` and/or ``program.txt``, ``facts/*.facts`` and ``expected/*.csv``
(see :mod:`analyzer.datalog.golden`). Set ``SHARDLOG_REGEN_GOLDEN=1`` to rewrite the expected
files from the default engine (then review the diff) instead of comparing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.datalog.golden import find_cases, run_golden_case
from analyzer.engines import DEFAULT_ENGINE, ENGINES, EngineUnavailable, get_engine

CASES = find_cases(Path(__file__).parent / "rules")
REGEN = os.environ.get("SHARDLOG_REGEN_GOLDEN") == "1"


def test_there_are_cases():
    assert len(CASES) >= 8


@pytest.mark.parametrize("engine_name", list(ENGINES))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case(case, engine_name):
    try:
        engine = get_engine(engine_name)
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    regen = REGEN and engine_name == DEFAULT_ENGINE
    try:
        mismatches = run_golden_case(case, engine, regen=regen)
    except EngineUnavailable as exc:
        pytest.skip(f"{engine_name} cannot run {case.name}: {exc}")
    assert not mismatches, f"{case.name} on {engine_name}:\n" + "\n".join(mismatches)


def test_golden_helper_reports_mismatches_and_regenerates(tmp_path):
    case = tmp_path / "case"
    (case / "facts").mkdir(parents=True)
    (case / "program.dl").write_text(
        ".decl E(a: symbol, n: number)\n.decl Big(a: symbol)\n.decl Small(a: symbol)\n.decl Hidden(a: symbol)\n"
        ".decl Huge(a: symbol)\n.input E\n.output Big, Small, Huge\n"
        "Big(a) :- E(a, n), n > 10.\nSmall(a) :- E(a, n), n <= 10.\nHidden(a) :- E(a, _).\n"
        "Huge(a) :- E(a, n), n > 100.\n"
    )
    (case / "facts" / "E.facts").write_text("x\t1\ny\t20\nz\t30\n")
    (case / "expected").mkdir()
    (case / "expected" / "Big.csv").write_text("y\nw\n")
    (case / "expected" / "Hidden.csv").write_text("")
    mismatches = run_golden_case(case, "clingo")
    assert mismatches == [
        "expected/Hidden.csv: Hidden is not an .output relation of the program",
        "Big (clingo): missing 1 row(s): ('w'); unexpected 1 row(s): ('z')",
        "Small: 1 row(s) derived but there is no expected/Small.csv: ('x')",
    ]
    assert run_golden_case(case, "clingo", regen=True) == []
    # one file per non-empty output relation (Huge has no rows, so no file)
    assert sorted(p.name for p in (case / "expected").iterdir()) == ["Big.csv", "Small.csv"]
    assert (case / "expected" / "Big.csv").read_text() == "y\nz\n"
    assert run_golden_case(case, "pydatalog") == []


def test_program_txt_paths_are_relative_to_the_root(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.dl").write_text(".decl A(x: number)\n.output A\nA(1).\n")
    case = tmp_path / "cases" / "one"
    case.mkdir(parents=True)
    (case / "program.txt").write_text("# the rules\nrules/*.dl\n")
    (case / "expected").mkdir()
    (case / "expected" / "A.csv").write_text("1\n")
    assert find_cases(tmp_path / "cases") == [case]
    assert run_golden_case(case, "clingo", root=tmp_path) == []
