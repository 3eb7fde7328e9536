"""SARIF 2.1.0 log (``analyzer.reports.sarif``): valid against the vendored SARIF schema, one result per
discrepancy with rule, location, logical locations and the partial-sum origin, and still valid
when the model's strings are hostile (control characters, surrogates, brackets, long names)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, ROOT

from analyzer import check
from analyzer.reports.sarif import EXTRA_RULES, MAX_TEXT, SARIF_VERSION, to_sarif, write_sarif
from analyzer.solve.rulebook import hints_catalog
from analyzer.verdict.build import Discrepancy

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_PATH = ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json"
SCHEMA_SHA256 = "2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8"
# RFC 3986 URI-reference: only unreserved, reserved and %HH; a scheme only as ALPHA *( ALPHA / DIGIT / + - . ).
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _example(case: str) -> tuple[str, list[str]]:
    folder = EXAMPLES / case
    if not folder.is_dir():
        pytest.skip(f"examples/{case} not present")
    return str(folder / "seq.onnx"), [str(folder / "rank0.onnx"), str(folder / "rank1.onnx")]


@pytest.fixture(scope="module")
def validator():
    """A draft-04 validator of the vendored SARIF 2.1.0 schema (with format checks)."""
    raw = SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "tests/data SARIF schema was modified"
    schema = json.loads(raw)
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


@pytest.fixture(scope="module")
def results():
    """Check results of the examples used here, computed once."""
    cache: dict[str, object] = {}

    def get(case: str):
        if case not in cache:
            seq, ranks = _example(case)
            cache[case] = check(seq, ranks)
        return cache[case]

    return get


def _walk(node, path=""):
    """Yield (json path, key, value) for every string in a JSON tree, keys included."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, "<key>", k
            yield from _walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}/{i}")
    elif isinstance(node, str):
        yield path, "", node


def _assert_valid(validator, log: dict) -> dict:
    """Validate the log as a consumer reads it (after a JSON round trip) and return that copy."""
    text = json.dumps(log, ensure_ascii=False)
    text.encode("utf-8")  # no unpaired surrogates
    parsed = json.loads(text)
    errors = sorted(validator.iter_errors(parsed), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])
    assert parsed["version"] == SARIF_VERSION and len(parsed["runs"]) == 1
    run = parsed["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule ids"
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == "error" and res["message"]["text"]
        assert len(res["locations"]) == 1
        for loc in [*res["locations"], *res.get("relatedLocations", [])]:
            art = loc.get("physicalLocation", {}).get("artifactLocation")
            if art is None:
                continue
            uri = art["uri"]
            assert uri and _URI_CHARS.match(uri), uri
            if "uriBaseId" in art:
                assert not _SCHEME.match(uri) and not uri.startswith("/"), uri
                assert art["uriBaseId"] in run["originalUriBaseIds"]
    for path, _, s in _walk(parsed):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", s), f"control character at {path}: {s!r}"
    return parsed


def test_verified_log_is_valid_with_no_results(validator, results):
    log = _assert_valid(validator, to_sarif(results("llama_tp2")))
    run = log["runs"][0]
    assert run["results"] == []
    assert run["properties"]["verdict"] == "verified"
    assert run["invocations"][0]["executionSuccessful"] is True
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    catalog = {str(k): str(v) for k, v in yaml.safe_load(hints_catalog().read_text(encoding="utf-8")).items()}
    assert ids == [*catalog, *EXTRA_RULES]
    by_id = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for hint_id, text in catalog.items():
        assert by_id[hint_id]["fullDescription"]["text"] == text
        assert by_id[hint_id]["help"]["text"] == text
        assert by_id[hint_id]["shortDescription"]["text"]


def test_bias_bug_gives_one_result_at_the_source_line(validator, results):
    res = results("llama_tp2_bug_bias_every_rank")
    log = _assert_valid(validator, to_sarif(res))
    found = log["runs"][0]["results"]
    assert len(found) == len(res.verdict_.discrepancies) >= 1
    first, d = found[0], res.verdict_.discrepancies[0]
    assert first["ruleId"] == "bias-before-reduce"
    loc = first["locations"][0]
    art = loc["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "transformers/models/llama/modeling_llama.py", "uriBaseId": "PYTHONPATH"}
    assert loc["physicalLocation"]["region"]["startLine"] == int(d.source.rsplit(":", 1)[1])
    assert loc["physicalLocation"]["region"]["snippet"]["text"] == d.code
    logical = loc["logicalLocations"]
    assert {"fullyQualifiedName": "model.layers.0.mlp.down_proj", "kind": "module"} in logical
    assert any(lg.get("name") == d.node and lg["properties"]["opType"] == d.op_type for lg in logical)
    assert "down_proj" in first["message"]["text"] and d.hints[0] in first["message"]["text"]
    assert first["partialFingerprints"]


def test_missing_allreduce_points_at_the_partial_sum_origin(validator, results):
    res = results("llama_tp2_bug_missing_allreduce")
    log = _assert_valid(validator, to_sarif(res))
    with_origin = [(r, d) for r, d in zip(log["runs"][0]["results"], res.verdict_.discrepancies) if d.origin_node]
    assert with_origin, "expected a discrepancy with a partial-sum origin"
    result, d = with_origin[0]
    related = result["relatedLocations"]
    assert len(related) == 1 and related[0]["id"] == 1
    assert "](1)" in result["message"]["text"]  # embedded link to the related location
    file, line = d.origin_source.rsplit(":", 1)
    assert related[0]["physicalLocation"]["region"]["startLine"] == int(line)
    assert related[0]["physicalLocation"]["artifactLocation"]["uri"] == file
    assert any(lg.get("name") == d.origin_node for lg in related[0]["logicalLocations"])


def test_rank_side_discrepancy_is_located(validator, results):
    res = results("llama_tp2_bug_shard_order")
    log = _assert_valid(validator, to_sarif(res))
    assert log["runs"][0]["results"]
    for result, d in zip(log["runs"][0]["results"], res.verdict_.discrepancies):
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert result["properties"]["graph"] == d.graph


def _hostile(res) -> object:
    """A copy of a discrepancy result whose discrepancies carry hostile strings."""
    bad = copy.deepcopy(res)
    long = "layer." * 20000
    nasty = 'a\x00b\x07c\x1b[31md\x7fe\u0085f\ud800g\n\t[x](1) ]](2)\\ "quote" <tag> &amp; \u202eevil'
    base = bad.verdict_.discrepancies[0]

    def disc(kind="frontier", node="n", op_type="Add", **kw) -> Discrepancy:
        fields = dict(
            scope="", source="", code="", outputs=[], inputs=[], rank_nodes={}, hints=[], hint_ids=[], index=-1
        )
        fields.update(kw)
        return Discrepancy(kind=kind, node=node, op_type=op_type, **fields)

    bad.verdict_.discrepancies = [
        disc(
            node=nasty + long,
            op_type="Custom\x00Op",
            scope=nasty,
            source=f"C:\\Users\\x y\\{nasty}.py:12",
            code=nasty,
            outputs=[nasty],
            inputs=base.inputs,
            rank_nodes={0: [nasty], 1: [long]},
            hints=[nasty],
            hint_ids=["my-rule\x01" + long],
            graph="seq",
            message=nasty,
            origin_node=nasty,
            origin_scope=nasty,
            origin_source=f"//server/share/{nasty}.py:7",
        ),
        disc(source=f"rel/with space/{nasty}:nope"),
        disc(source=f"scheme:like/{nasty}.py:3"),
        disc(source=f"/abs/{nasty}/x.py:0", hint_ids=["no-rule"]),
        disc(kind="output", node="logits", op_type="", outputs=["logits"], graph="r1", message=nasty),
        disc(kind="collective", node="Check_X", op_type="", graph="", message=nasty + long),
        disc(node="", op_type="", source=":5"),
    ]
    return bad


def test_hostile_strings_keep_the_log_valid(validator, results, tmp_path: Path):
    bad = _hostile(results("llama_tp2_bug_bias_every_rank"))
    path = tmp_path / "out.sarif"
    write_sarif(bad, path)
    log = _assert_valid(validator, json.loads(path.read_text(encoding="utf-8")))
    found = log["runs"][0]["results"]
    assert len(found) == len(bad.verdict_.discrepancies)
    ids = {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert found[0]["ruleId"] in ids and found[0]["ruleId"].startswith("my-rule")
    assert [r["ruleId"] for r in found[4:6]] == ["output-not-rebuilt", "collective-mismatch"]
    assert found[3]["ruleId"] == "no-rule"
    for path_, _, s in _walk(log):
        assert len(s) <= MAX_TEXT or path_.endswith("/partialFingerprints"), path_
    # brackets from the model are escaped: the only embedded link is the origin's "(1)"
    text = found[0]["message"]["text"]
    assert len(re.findall(r"(?<!\\)\]\(", text)) == 1
    # the Windows and relative paths with odd characters became URI references
    assert found[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///C:/Users/x%20y/")
    assert found[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    assert "region" not in found[1]["locations"][0]["physicalLocation"]  # ":nope" is no line
    assert found[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("scheme%3Alike/")
    abs_loc = found[3]["locations"][0]["physicalLocation"]
    assert abs_loc["artifactLocation"]["uri"].startswith("file:///abs/")
    assert abs_loc["artifactLocation"]["uri"].endswith("/x.py") and "region" not in abs_loc  # line 0: no line
    # no source: located at the ONNX file of the graph, relative to the working directory
    for i, name in [(4, "rank1.onnx"), (5, "seq.onnx"), (6, "seq.onnx")]:
        art = found[i]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert art["uri"].endswith(name) and "uriBaseId" not in art


def test_cli_writes_sarif(tmp_path: Path, validator):
    from click.testing import CliRunner

    from analyzer.cli import main

    seq, ranks = _example("llama_tp2_bug_bias_every_rank")
    out = tmp_path / "r.sarif"
    run = CliRunner().invoke(main, ["check", seq, *ranks, "--sarif", str(out), "-q"])
    assert run.exit_code == 1, run.output
    log = _assert_valid(validator, json.loads(out.read_text(encoding="utf-8")))
    assert log["runs"][0]["results"][0]["ruleId"] == "bias-before-reduce"
