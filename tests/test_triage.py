"""The third verdict (analyzer/verdict/triage.py): where no rule explains a node, the numeric
witness tells a bug (``discrepancy``, numbers differ) from a missing rule (``unproven``, numbers
agree), in every report and in the exit code; never ``verified`` without a proof."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, check_text_graphs

from analyzer import check
from analyzer.verdict import triage as triage_module

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json"  # vendored by tests/test_sarif.py

SEQ = """
g (float[4, 8] x, float[8, 16] w1, float[16, 8] w2) => (float[4, 8] y) {
  h = MatMul(x, w1)
  two = Constant<value = float {2.0}>()
  g2 = Mul(h, two)
  y = MatMul(g2, w2)
}
"""


def _rank(doubled: str, reduce: bool = True) -> str:
    """The column/row-parallel MLP with ``g2`` (2 h on the seq side) computed as ``doubled``."""
    tail = "z = MatMul(g2, w2)\n  y = com.microsoft.AllReduce(z)" if reduce else "y = MatMul(g2, w2)"
    return f"""
g (float[4, 8] x, float[8, 8] w1, float[8, 8] w2) => (float[4, 8] y) {{
  h = MatMul(x, w1)
  hh = Relu(h)
  g2 = {doubled}
  {tail}
}}
"""


def _run(write_models, rank: str, **kwargs):
    return check_text_graphs(write_models, HEADER + SEQ, [HEADER + rank, HEADER + rank], **kwargs)


def test_same_value_by_another_route_is_unproven_with_its_pattern(write_models):
    # 2 h written h + h: no rule pairs a Mul with an Add, the numbers agree
    result, _, seq, ranks = _run(write_models, _rank("Add(h, h)"))
    v = result.verdict_
    assert result.verdict == "unproven"
    assert v.discrepancies == []
    [step] = v.unproven
    assert (step.op_type, step.outputs, step.relation, step.numbers) == ("Mul", ["g2"], "Shard(1)", "agree")
    assert step.rank_values == ["g2", "g2"] and step.numeric_error == 0.0
    assert step.pattern[0].startswith("seq:    g2 = Mul(h [Shard(1)]")
    assert step.pattern[1] == "rank 0: g2 = Add(h [Shard(1) of h], h [Shard(1) of h])"
    # the assumed step lets the rules go on: the output is rebuilt through it
    assert v.outputs[0].relation == "Replicate"
    assert result.numeric["y"] < 1e-5


def test_one_line_bug_in_that_route_is_a_discrepancy_with_its_error(write_models):
    # h + relu(h) is not 2 h: the numbers differ where the chain breaks
    result, *_ = _run(write_models, _rank("Add(h, hh)"))
    v = result.verdict_
    assert result.verdict == "discrepancy"
    assert v.unproven == []
    first = v.discrepancies[0]
    assert (first.node, first.op_type, first.numbers) == ("#2:Mul", "Mul", "differ")
    assert result.numeric["y"] > 1e-2


def test_a_bug_below_an_unproven_step_is_reported_where_it_is(write_models):
    # the step no rule explains is assumed from the numbers, so the missing all-reduce further
    # down is the discrepancy (not the first rule that is missing)
    seq = SEQ.replace("y = MatMul(g2, w2)", "z = MatMul(g2, w2)\n  y = Relu(z)")
    rank = _rank("Add(h, h)", reduce=False).replace("y = MatMul(g2, w2)", "z = MatMul(g2, w2)\n  y = Relu(z)")
    result, *_ = check_text_graphs(write_models, HEADER + seq, [HEADER + rank, HEADER + rank])
    v = result.verdict_
    assert result.verdict == "discrepancy"
    assert [u.op_type for u in v.unproven] == ["Mul"]
    first = v.discrepancies[0]
    assert (first.op_type, first.numbers) == ("Relu", "differ")
    assert "missing-allreduce" in first.hint_ids
    assert result.numeric["y"] > 1e-2


SEQ_SCALE = """
g (float[4, 8] x, float[8, 16] w1, float[16, 8] w2) => (float[4, 8] y) {
  h = MatMul(x, w1)
  c2 = Constant<value = float {2.0}>()
  c3 = Constant<value = float {3.0}>()
  a = Mul(h, c2)
  b = Mul(a, c3)
  z = MatMul(b, w2)
  y = Relu(z)
}
"""


def _rank_scale(first: float, second: float) -> str:
    return f"""
g (float[4, 8] x, float[8, 8] w1, float[8, 8] w2) => (float[4, 8] y) {{
  h = MatMul(x, w1)
  c2 = Constant<value = float {{{first}}}>()
  c3 = Constant<value = float {{{second}}}>()
  a = Mul(h, c3)
  b = Mul(a, c2)
  z = MatMul(b, w2)
  s = com.microsoft.AllReduce(z)
  y = Relu(s)
}}
"""


@pytest.mark.parametrize(("first", "expected"), [(2.0, "unproven"), (3.0, "discrepancy")])
def test_no_rank_value_equals_the_frontier_but_outputs_decide(write_models, first, expected):
    # seq 3 (2 h), ranks 2 (3 h): no rank value is 2 h; the outputs agree (unproven) or, with
    # 3 (3 h), differ (discrepancy)
    rank = HEADER + _rank_scale(first, 3.0)
    result, *_ = check_text_graphs(write_models, HEADER + SEQ_SCALE, [rank, rank])
    assert result.verdict == expected
    v = result.verdict_
    if expected == "unproven":
        assert v.discrepancies == [] and [u.numbers for u in v.unproven] == ["outputs agree"]
        out = result.witness.outputs["y"]
        assert out.error <= out.tolerance  # float rounding at the output's scale (the witness's tolerance)
    else:
        assert v.unproven == [] and v.discrepancies[0].numbers == "differ"
        assert result.numeric["y"] > 1e-2


def test_without_triage_or_too_large_the_rules_verdict_stands(write_models, monkeypatch):
    paths = write_models({"seq": _parse(SEQ), "rank0": _parse(_rank("Add(h, h)")), "rank1": _parse(_rank("Add(h, h)"))})
    ranks = [paths["rank0"], paths["rank1"]]
    off = check(paths["seq"], ranks, triage=False)
    assert off.verdict == "discrepancy" and off.verdict_.triage == ""
    monkeypatch.setattr(triage_module, "MAX_ELEMENTS", 10)
    big = check(paths["seq"], ranks)
    assert big.verdict == "discrepancy"
    assert big.verdict_.triage.startswith("numbers not checked: the graphs are too large")
    assert big.verdict_.discrepancies[0].numbers == ""


def _parse(text: str):
    import onnx.parser

    return onnx.parser.parse_model(HEADER + text)


def test_cli_exit_code_and_reports(write_models, tmp_path):
    paths = write_models({"seq": _parse(SEQ), "rank0": _parse(_rank("Add(h, h)")), "rank1": _parse(_rank("Add(h, h)"))})
    out = {k: tmp_path / f"r.{k}" for k in ("json", "html", "sarif")}
    cmd = [sys.executable, "-m", "analyzer.cli", "check", str(paths["seq"]), str(paths["rank0"]), str(paths["rank1"])]
    cmd += [f"--{k}={p}" for k, p in out.items()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "unproven 1: #2:Mul (Mul)" in proc.stdout
    assert "rank 0: g2 = Add(h [Shard(1) of h], h [Shard(1) of h])" in proc.stdout
    report = json.loads(out["json"].read_text())
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    pytest.importorskip("jsonschema").Draft202012Validator(schema).validate(report)
    assert report["verdict"] == "unproven" and report["discrepancies"] == []
    assert report["unproven"][0]["relation"] == "Shard(1)" and report["unproven"][0]["kind"] == "unproven"
    page = out["html"].read_text()
    assert 'class="banner warn"' in page and "Unproven 1:" in page
    sarif = json.loads(out["sarif"].read_text())
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(sarif)
    [res] = sarif["runs"][0]["results"]
    assert (res["ruleId"], res["level"], res["kind"]) == ("unproven-step", "warning", "review")
    assert sarif["runs"][0]["properties"]["verdict"] == "unproven"
    # --no-triage: the rules' verdict, exit code 1
    proc = subprocess.run([*cmd[:7], "--no-triage", "-q"], capture_output=True, text=True, timeout=300, check=False)
    assert (proc.returncode, proc.stdout.strip()) == (1, "discrepancy")
