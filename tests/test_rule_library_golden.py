"""Golden cases of the whole rule library (facts in, expected relations out) on every engine
(Soufflé when present). Kept out of tests/rules/ so the engine-level conformance suite stays
small; pyDatalog runs these in about 1 s but takes minutes on a real export."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.datalog.golden import find_cases, run_golden_case
from analyzer.engines import EngineUnavailable, get_engine

CASES = find_cases(Path(__file__).parent / "library_cases")
REGEN = os.environ.get("SHARDLOG_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize(
    "engine_name", ["seminaive", "clingo", pytest.param("pydatalog", marks=pytest.mark.slow), "souffle"]
)
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
