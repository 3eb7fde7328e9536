"""The JSON report (``analyzer.reports.text.to_json``) validates against ``schemas/report.schema.json``;
the schema is closed, so a field added to or dropped from the report fails here until the schema
(and the module docstring of ``analyzer/reports/text.py``) follow."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import EXAMPLES

from analyzer import check
from analyzer.reports.text import SCHEMA_VERSION, to_json
from analyzer.solve.rulebook import schemas_dir

jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def validator():
    """A draft 2020-12 validator of the bundled report schema."""
    schema = json.loads((schemas_dir() / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _report(case: str) -> dict:
    folder = EXAMPLES / case
    if not folder.is_dir():
        pytest.skip(f"examples/{case} not present")
    result = check(str(folder / "seq.onnx"), [str(folder / "rank0.onnx"), str(folder / "rank1.onnx")])
    return json.loads(json.dumps(to_json(result)))  # as written by --json


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    """JSON reports of a verified example and of discrepancy examples (frontier with and
    without a partial-sum origin, rank-side output)."""
    cases = [
        "llama_tp2",
        "llama_tp2_bug_bias_every_rank",
        "llama_tp2_bug_missing_allreduce",
        "llama_tp2_bug_shard_order",
    ]
    return {c: _report(c) for c in cases}


def _errors(validator, instance) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


def test_verified_report_validates(validator, reports):
    rep = reports["llama_tp2"]
    assert rep["verdict"] == "verified"
    assert _errors(validator, rep) == []


@pytest.mark.parametrize(
    "case", ["llama_tp2_bug_bias_every_rank", "llama_tp2_bug_missing_allreduce", "llama_tp2_bug_shard_order"]
)
def test_discrepancy_report_validates(validator, reports, case):
    rep = reports[case]
    assert rep["verdict"] == "discrepancy" and rep["discrepancies"]
    assert _errors(validator, rep) == []


def test_numeric_section_validates(validator, reports):
    rep = copy.deepcopy(reports["llama_tp2"])
    rep["numeric"] = {"logits": 1.5e-7}
    assert _errors(validator, rep) == []


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.__setitem__("surprise", 1),
        lambda r: r.pop("outputs"),
        lambda r: r.__setitem__("schema_version", 2),
        lambda r: r.__setitem__("verdict", "maybe"),
        lambda r: r["discrepancies"][0].__setitem__("surprise", 1),
        lambda r: r["discrepancies"][0].pop("hint_ids"),
        lambda r: r["discrepancies"][0]["inputs"][0].__setitem__("surprise", 1),
        lambda r: r["discrepancies"][0].__setitem__("kind", "other"),
        lambda r: r["discrepancies"][0].__setitem__("source", "no line number"),
        lambda r: r["discrepancies"][0]["rank_nodes"].__setitem__("zero", []),
        lambda r: r["outputs"][0].__setitem__("surprise", 1),
        lambda r: r["input_relations"][0].__setitem__("source", "guessed"),
        lambda r: r["timings"].__setitem__("facts", "fast"),
        lambda r: r.__setitem__("discrepancies", []),
    ],
)
def test_schema_drift_is_caught(validator, reports, mutate):
    rep = copy.deepcopy(reports["llama_tp2_bug_bias_every_rank"])
    mutate(rep)
    assert _errors(validator, rep), "the schema accepted a report that does not follow it"


def test_verified_report_with_discrepancies_is_rejected(validator, reports):
    rep = copy.deepcopy(reports["llama_tp2"])
    rep["discrepancies"] = copy.deepcopy(reports["llama_tp2_bug_bias_every_rank"]["discrepancies"])
    assert _errors(validator, rep)
