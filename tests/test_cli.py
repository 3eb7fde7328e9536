"""The command line: exit codes, one-line errors for bad input, reports and tables."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, model_from_text

from analyzer.cli import main

LLAMA = EXAMPLES / "llama_tp2"
pytestmark = pytest.mark.skipif(not LLAMA.is_dir(), reason="examples/llama_tp2 not present")


def _files(folder=LLAMA, n=2):
    return [str(folder / "seq.onnx")] + [str(folder / f"rank{r}.onnx") for r in range(n)]


def _run(args):
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output, result.stderr if hasattr(result, "stderr") else ""


def _one_line_error(code, out, err):
    text = (err or out).strip()
    assert code == 2, out
    assert len(text.splitlines()) == 1, text
    assert "Traceback" not in out + err
    return text


def test_verified_example_exits_0():
    code, out, _ = _run(["check", *_files()])
    assert code == 0, out
    assert "logits = Replicate on ranks 0..1" in out
    assert "verified" in out


def test_missing_file(tmp_path):
    text = _one_line_error(*_run(["check", str(tmp_path / "nope.onnx"), *_files()[1:]]))
    assert "no such file" in text


def test_not_an_onnx_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_text("hello, I am not a model\n")
    text = _one_line_error(*_run(["check", str(bad), *_files()[1:]]))
    assert "not an ONNX model" in text


def test_rank_file_from_another_model(tmp_path):
    other = tmp_path / "other.onnx"
    import onnx

    onnx.save(
        model_from_text("""
        <ir_version: 8, opset_import: ["" : 18]>
        g (float[2] a, float[2] b) => (float[2] c, float[2] d) { c = Add(a, b) d = Mul(a, b) }
    """),
        str(other),
    )
    text = _one_line_error(*_run(["check", _files()[0], str(other), _files()[2]]))
    assert "another model" in text


def test_wrong_rank_count_for_spec(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("world_size: 4\nrelations:\n  input_ids: replicate\n")
    text = _one_line_error(*_run(["check", *_files(), "--relations", str(spec)]))
    assert "world size 4" in text


@pytest.mark.parametrize(
    "body, message",
    [
        ("relations: [1, 2\n", "not a valid YAML"),
        ("relations:\n  input_ids: shrad\n", "unknown layout"),
        ("relations:\n  no_such_value: replicate\n", "not a value of the sequential graph"),
        ("relations:\n  input_ids: {shard: -1}\n", "non-negative axis"),
        ("colour: blue\n", "unknown key"),
    ],
)
def test_malformed_spec(tmp_path, body, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(body)
    text = _one_line_error(*_run(["check", *_files(), "--relations", str(spec)]))
    assert message in text


def test_unknown_engine_is_a_usage_error():
    code, out, _ = _run(["check", *_files(), "--engine", "nosuch"])
    assert code == 2


def test_user_files_are_not_modified(tmp_path):
    copies = []
    for f in _files():
        dst = tmp_path / (f.split("/")[-1])
        shutil.copy(f, dst)
        copies.append(dst)
    before = [p.read_bytes() for p in copies]
    _run(["check", *map(str, copies), "--json", str(tmp_path / "r.json"), "--out", str(tmp_path / "t")])
    assert [p.read_bytes() for p in copies] == before


def test_json_report_and_tables(tmp_path):
    report = tmp_path / "report.json"
    code, out, _ = _run(["check", *_files(), "--json", str(report), "--out", str(tmp_path / "tables")])
    assert code == 0, out
    data = json.loads(report.read_text())
    assert data["verdict"] == "verified" and data["world_size"] == 2 and data["engine"] == "seminaive"
    assert data["outputs"] == [
        {"name": "logits", "relation": "Replicate", "rank_values": data["outputs"][0]["rank_values"]}
    ]
    assert data["discrepancies"] == []
    code, out, _ = _run(["query", str(tmp_path / "tables"), "OutputRelation", "--where", "s=logits"])
    assert code == 0 and "Replicate" in out
    text = _one_line_error(*_run(["query", str(tmp_path / "tables"), "NoSuchRelation"]))
    assert "no relation" in text


def test_facts_command_writes_every_fact_table(tmp_path):
    code, out, _ = _run(["facts", _files()[0], "--out", str(tmp_path / "f")])
    assert code == 0, out
    node = (tmp_path / "f" / "Node.facts").read_text().splitlines()
    assert any("\tMatMul\t" in line for line in node)


def test_rules_test_runs_golden_cases():
    from conftest import ROOT

    code, out, _ = _run(["rules", "test", str(ROOT / "tests" / "rules"), "--engine", "clingo"])
    assert code == 0, out
    assert "ok   transitive_closure (clingo)" in out


def test_rules_test_reports_a_failing_case(tmp_path):
    case = tmp_path / "cases" / "bad"
    (case / "facts").mkdir(parents=True)
    (case / "expected").mkdir()
    (case / "program.dl").write_text(".decl E(x: number)\n.input E\n.decl F(x: number)\n.output F\nF(x) :- E(x).\n")
    (case / "facts" / "E.facts").write_text("1\n2\n")
    (case / "expected" / "F.csv").write_text("1\n")
    code, out, _ = _run(["rules", "test", str(tmp_path / "cases"), "--engine", "clingo"])
    assert code == 1
    assert "FAIL bad (clingo)" in out


def test_coverage_lists_rule_files():
    code, out, _ = _run(["check", *_files(), "--coverage"])
    assert code == 0
    assert "ops/MatMul.dl:" in out and "core/holds.dl: 4/4" in out


def test_missing_rules_folder(tmp_path):
    text = _one_line_error(*_run(["check", *_files(), "--rules", str(tmp_path / "nope")]))
    assert "no such rules folder" in text


def test_bad_user_rule_file(tmp_path):
    (tmp_path / "bad.dl").write_text("OutLayout(n) :- Nope(n).\n")
    text = _one_line_error(*_run(["check", *_files(), "--rules", str(tmp_path)]))
    assert "bad.dl" in text


@pytest.mark.parametrize("word", ["count", "ord", "as"])
def test_user_rule_file_with_a_souffle_keyword_as_variable(tmp_path, word):
    """Soufflé reserves these words (its scanner returns them as keywords); the library is
    Soufflé text, so they are refused here too, at the file and line, with a rename."""
    (tmp_path / "mine.dl").write_text(f'// my rule\nRelated({word}) :- Holds({word}, "Replicate", -1, "").\n')
    text = _one_line_error(*_run(["check", *_files(), "--rules", str(tmp_path)]))
    assert "mine.dl:2:" in text
    assert f"'{word}' is a reserved word in Soufflé" in text and "rename it" in text


@pytest.mark.parametrize(
    "body, expected",
    [
        ("outputs: [5]\n", "selects output 5 but the graph has 1 outputs"),
        ("outputs: first\n", "outputs must be a non-empty list of output positions"),
        ("constants: {_tensor_constant0: zero}\n", "constants must map constant names to numbers"),
        ("groups: {'1': 0}\n", "groups must map process-group names to rank counts"),
        ("mesh: {tp: 2}\n", "mesh must map two or more axis names to sizes"),  # docs/mesh.md
        ("meshes: {tp: 2}\n", "unknown key 'meshes'"),
    ],
)
def test_bad_spec_keys_are_one_line_errors(tmp_path, body, expected):
    spec = tmp_path / "spec.yaml"
    spec.write_text(body)
    text = _one_line_error(*_run(["check", *_files(), "--relations", str(spec)]))
    assert expected in text


def test_spec_outputs_selects_the_outputs_to_check(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("outputs: [0]\n")
    code, out, _ = _run(["check", *_files(), "--relations", str(spec)])
    assert code == 0 and "logits = Replicate" in out
