"""Golden cases of the whole rule library (facts in, expected relations out), clingo and
Soufflé when present. pyDatalog is not run on them: the library uses an aggregate with an
outer-bound variable (collectives/order.dl) that it cannot evaluate, and it is far too slow
for a program of this size (measured: no answer after 10 minutes on the 3-graph case)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.dl.golden import find_cases, run_golden_case
from analyzer.engines import EngineUnavailable, get_engine

CASES = find_cases(Path(__file__).parent / "library_cases")
REGEN = os.environ.get("SHARDLOG_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize("engine_name", ["clingo", "souffle"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_library_case(case, engine_name):
    try:
        engine = get_engine(engine_name)
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    mismatches = run_golden_case(case, engine, regen=REGEN and engine_name == "clingo")
    assert not mismatches, "\n".join(mismatches)


def test_there_is_a_library_case():
    assert CASES
