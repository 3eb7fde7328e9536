"""``--numeric`` names the user rule behind a refuted relation (analyzer/solve/blame.py): a wrong
user transfer rule on a real example is refuted (exit 4) with its file:line in every report; a
correct one (docs/rules.md's FastGelu) is not refuted; a correct user rule beside the wrong one
is not named."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from test_docs_rules import _write_files

from analyzer import check

EXAMPLE = ROOT / "examples" / "llama_tp2_bug_missing_allreduce"
GRAPHS = [str(EXAMPLE / f) for f in ("seq.onnx", "rank0.onnx", "rank1.onnx")]
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json"

#: wrong: each rank adds the replicated term to its partial sum, so the sum over ranks counts it
#: twice (the example's residual Add after the row-parallel down_proj whose all-reduce is missing)
WRONG_ADD = """// Add(Replicate, Partial(sum)) -> Partial(sum): wrong, the replicated term is added N times.
OutLayout(n, r, m, 0, "Partial", a, p) :-
    Node("seq", n, "Add", "", _),
    InPiece(n, r, m, 0, "Replicate", _, _), InPiece(n, r, m, 1, "Partial", a, p).
"""
#: correct, and fires on the example too (Neg of a sharded value is sharded alike)
RIGHT_NEG = """// Neg(Shard(a)) -> Shard(a).
OutLayout(n, r, m, 0, "Shard", a, p) :-
    Node("seq", n, "Neg", "", _), InPiece(n, r, m, 0, "Shard", a, p).
"""
#: wrong: GELU is not linear, a partial sum does not stay one through it
WRONG_GELU = """// FastGelu(Partial(sum)) -> Partial(sum): wrong, GELU is not linear.
OutLayout(n, r, m, 0, "Partial", a, p) :-
    Node("seq", n, "FastGelu", "com.example", _), InPiece(n, r, m, 0, "Partial", a, p).
"""


@pytest.mark.slow
def test_a_wrong_user_rule_on_a_real_example_is_named_in_every_report(tmp_path):
    rules = tmp_path / "my_rules"
    rules.mkdir()
    (rules / "a_neg.dl").write_text(RIGHT_NEG)
    (rules / "add.dl").write_text(WRONG_ADD)
    out = {k: tmp_path / f"r.{k}" for k in ("json", "html", "sarif")}
    cmd = [sys.executable, "-m", "analyzer.cli", "check", *GRAPHS, "--rules", str(rules), "--numeric"]
    cmd += [f"--{k}={p}" for k, p in out.items()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    where = f"{rules / 'add.dl'}:2"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("internal inconsistency")]
    assert len(lines) == 1 and "add_16 = Partial(sum)" in lines[0]
    assert lines[0].endswith(f"derived by the user rule {where}"), lines[0]
    assert "a_neg.dl" not in proc.stdout
    assert "this user rule derives a relation the numbers refute" in proc.stdout

    report = json.loads(out["json"].read_text())
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(schema).validate(report)
    assert report["verdict"] == "inconsistent"
    [c] = report["witness"]["contradictions"]
    assert (c["value"], c["relation"], c["rules"]) == ("add_16", "Partial(sum)", [where])

    page = out["html"].read_text()
    assert f'<dd class="user-rule"><code>{where}</code></dd>' in page

    sarif = json.loads(out["sarif"].read_text())
    jsonschema.Draft4Validator(
        json.loads(SARIF_SCHEMA.read_text()), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    ).validate(sarif)
    [res] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "internal-inconsistency"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == (rules / "add.dl").as_uri()
    assert loc["region"]["startLine"] == 2
    assert res["properties"]["userRules"] == [where]


def test_the_rules_fastgelu_walkthrough_rule_is_not_refuted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write_files(tmp_path)
    result = check("seq.onnx", ["rank0.onnx", "rank1.onnx"], rules=["my_rules"], numeric=True)
    assert result.verdict == "verified"
    assert result.witness.contradictions == [] and result.witness.intermediates > 0


@pytest.mark.parametrize(
    "engine", ["seminaive", *(pytest.param(name, marks=pytest.mark.slow) for name in ("clingo", "souffle"))]
)
def test_a_user_rule_keeping_a_partial_sum_through_gelu_is_named(tmp_path, monkeypatch, engine):
    """The walkthrough's buggy ranks (GELU of each rank's partial sum) with a rule that says a
    partial sum stays one through FastGelu: refuted, the rule named (the trace reruns the rules
    on the check's engine); the walkthrough's correct rule beside it is not named."""
    from analyzer.engines import get_engine

    reason = type(get_engine(engine)).unavailable_reason()
    if reason:
        print(f"skipped: engine {engine} is not available here: {reason}")
        pytest.skip(f"engine {engine}: {reason}")
    monkeypatch.chdir(tmp_path)
    _write_files(tmp_path)
    (tmp_path / "my_rules" / "gelu_partial.dl").write_text(WRONG_GELU)
    result = check("seq.onnx", ["bug0.onnx", "bug1.onnx"], rules=["my_rules"], numeric=True, engine=engine)
    assert result.verdict == "inconsistent"
    # the rule's relation, the all-reduced one after it and the output rebuilt from it: all refuted,
    # all traced to the one wrong rule (the walkthrough's FastGelu.dl is not named)
    found = {(c.kind, c.value, c.relation): c.rules for c in result.witness.contradictions}
    assert found == {
        ("output", "y", "Replicate"): ["my_rules/gelu_partial.dl:2"],
        ("intermediate", "g", "Partial(sum)"): ["my_rules/gelu_partial.dl:2"],
        ("intermediate", "g", "Replicate"): ["my_rules/gelu_partial.dl:2"],
    }


def test_no_user_rules_no_names():
    """Without --rules nothing is traced (the library's own contradictions keep the old hint)."""
    from analyzer.model import Contradiction
    from analyzer.reports.text import INCONSISTENCY_HINT, inconsistency_hint

    c = Contradiction("intermediate", "v", "Shard(0)", ["v", "v"], 1.0, 1e-5, 0)
    assert c.rules == [] and inconsistency_hint(c) == INCONSISTENCY_HINT
