"""Fast paths of a check give exactly what the slow paths give.

* the default engine (seminaive) and clingo, each without the rules that cannot change an
  output (:mod:`analyzer.speedups.relevance`), derive the same output relations, verdict and
  report as clingo with the whole library;
* input relations, weight-value checks and the same-model check read each distinct rank
  graph once (``same`` in :func:`analyzer.inputs.infer.infer_input_relations`): the same
  relations as reading every rank;
* the program cache carries the compiled rules.

Cases: bundled examples (verified and bugs, tensor / sequence / vocab / expert / context
parallel, a pipeline) and rule-level programs written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, smoke_or_slow

from analyzer import check
from analyzer.datalog import parse_string
from analyzer.engines import ENGINES, get_engine
from analyzer.engines.clingo_engine import ClingoEngine
from analyzer.reports.text import to_json
from analyzer.speedups.relevance import kept_rules, rule_shapes

CASES = [
    "llama_tp2",
    "llama_tp2_bug_missing_allreduce",
    "llama_tp2_sp_bug_collective_order",
    "llama_tp4_kv2_bug_kv_heads_misassigned",
    "qwen2_tp2_vocab_bug_gather_axis",
    "qwen2_tp2_vocab_bug_extra_allreduce",
    "mixtral_ep2_bug_expert_placement",
    "deepspeed_moe_ep2_bug_missing_combine_alltoall",
    "llama_cp2_bug_rotary_offset",
    "gemma2_tp2_bug_norm_partial",
    "llama_pp2_bug_swapped_rope",
]


def _args(case: Path) -> tuple[Path, list[Path], dict]:
    cfg = yaml.safe_load((case / "case.yaml").read_text())
    files = cfg["files"]
    if "stages" in files:
        return case / files["seq"], [case / f for f in files["stages"]], {"pipeline": len(files["stages"])}
    spec = files.get("spec", cfg.get("spec"))
    return case / files["seq"], [case / f for f in files["ranks"]], ({"relations": case / spec} if spec else {})


def _report(result) -> dict:
    """The JSON report without the time it took."""
    out = to_json(result)
    out.pop("seconds", None)
    out.pop("timings", None)
    out.pop("engine", None)
    return out


@pytest.mark.parametrize("name", smoke_or_slow(CASES))
def test_pruned_rules_give_the_same_outputs_and_report(name, monkeypatch):
    case = EXAMPLES / name
    if not (case / "case.yaml").is_file():
        pytest.skip(f"{case} is not bundled")
    seq, ranks, extra = _args(case)
    fast = check(seq, ranks, **extra)
    assert fast.engine == "seminaive"
    pruned = check(seq, ranks, engine="clingo", **extra)
    monkeypatch.setattr(ClingoEngine, "prune", False)
    slow = check(seq, ranks, engine="clingo", **extra)
    assert fast.derivation.derived == pruned.derivation.derived == slow.derivation.derived
    assert fast.verdict == slow.verdict == yaml.safe_load((case / "case.yaml").read_text())["expected"]
    assert _report(fast) == _report(pruned) == _report(slow)  # outputs, discrepancies, hints, sources


PROGRAM = """
.decl Node(g: symbol, n: symbol, op: symbol)
.input Node
.decl Extra(x: symbol)
.input Extra
.decl Out(n: symbol)
.output Out
.decl Helper(n: symbol)
.decl Unread(n: symbol)
Out(n) :- Node("seq", n, "MatMul").
Out(n) :- Node("seq", n, "Gather"), Extra(n).
Out(n) :- Helper(n).
Helper(n) :- Node(_, n, "Gather").
Unread(n) :- Node(_, n, _).
Out(n) :- Node(_, n, "Add"), !Extra(n).
"""


def _kept(facts: dict) -> list[str]:
    program = parse_string(PROGRAM)
    shapes = rule_shapes(program)
    given = {name for name, rows in facts.items() if rows}

    def values(rel, col):
        return {row[col] for row in facts.get(rel, [])}

    return [f"{program.rules[i].head.relation}#{i}" for i in kept_rules(shapes, program.outputs, given, values)]


def test_kept_rules_drop_dead_and_unread_rules_only():
    # no Gather node: the rules needing one are dead (so is Helper, and the Out rule reading it);
    # Unread is read by nothing and is no output; the negated empty Extra keeps the Add rule
    facts = {"Node": [("seq", "a", "MatMul"), ("r0", "b", "Add")], "Extra": []}
    assert _kept(facts) == ["Out#0", "Out#5"]
    # constants are matched column by column (Out#1 is kept though seq has no Gather: safe side)
    facts = {"Node": [("seq", "a", "MatMul"), ("r0", "g", "Gather")], "Extra": [("g",)]}
    assert _kept(facts) == ["Out#0", "Out#1", "Out#2", "Helper#3"]
    facts["Node"].append(("r0", "b", "Add"))
    assert _kept(facts) == ["Out#0", "Out#1", "Out#2", "Helper#3", "Out#5"]


def test_pruned_program_derives_what_the_whole_program_derives():
    program = parse_string(PROGRAM)
    for facts in (
        {"Node": [("seq", "a", "MatMul"), ("r0", "b", "Add")]},
        {"Node": [("seq", "g", "Gather"), ("r0", "h", "Gather"), ("r0", "b", "Add")], "Extra": [("g",), ("b",)]},
        {"Node": []},
    ):
        fast = ClingoEngine().run(program, facts)
        slow = ClingoEngine()
        slow.prune = False
        assert fast == slow.run(program, facts)
        assert fast == get_engine("pydatalog").run(program, facts)
        assert fast == get_engine("seminaive").run(program, facts)
        whole = get_engine("seminaive")
        whole.prune = False
        assert fast == whole.run(program, facts)


def test_same_graph_relations_equal_reading_every_rank():
    from analyzer.inputs.infer import infer_input_relations
    from analyzer.inputs.load import _rank_twins, load_inputs
    from analyzer.inputs.values import decide_by_values

    for name in ("llama_tp2", "llama_tp4_kv2_bug_kv_heads_misassigned", "qwen2_tp2_vocab"):
        seq, ranks, _ = _args(EXAMPLES / name)
        inp = load_inputs(seq, ranks)
        twins = _rank_twins(inp.same_graph)
        assert infer_input_relations(inp.seq, inp.ranks, twins) == infer_input_relations(inp.seq, inp.ranks)
        rel, _ = infer_input_relations(inp.seq, inp.ranks)
        assert decide_by_values(inp.seq, inp.ranks, rel, twins) == decide_by_values(inp.seq, inp.ranks, rel)
        # every rank graph stored like rank 0's one: as if they were one graph
        same = [0] * len(inp.ranks)
        if all(r.graph == inp.ranks[0].graph for r in inp.ranks):
            assert infer_input_relations(inp.seq, inp.ranks, same) == infer_input_relations(inp.seq, inp.ranks)


def test_rank_twins_map_same_graph_to_rank_indices():
    from analyzer.inputs.load import _rank_twins

    assert _rank_twins([]) is None
    assert _rank_twins([0, 1, 1, 1]) == [0, 0, 0]
    assert _rank_twins([0, 1, 2, 1]) == [0, 1, 0]
    assert _rank_twins([0, 0, 2]) == [0, 1]  # a rank stored like seq reads its own graph


@pytest.mark.slow
def test_program_cache_carries_the_compiled_rules(tmp_path, monkeypatch):
    from analyzer.engines.seminaive_engine import SemiNaiveEngine
    from analyzer.solve import program as program_cache
    from analyzer.solve.rulebook import rule_files, schema_files

    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    paths = [*schema_files(), *rule_files([])]
    first = program_cache.load_program_cached(paths)
    assert "_seminaive_plan" in first.__dict__
    assert list(tmp_path.glob("program-*.pickle"))
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    again = program_cache.load_program_cached(paths)  # from the pickle
    assert again is not first
    assert again.__dict__["_seminaive_plan"][1].code == first.__dict__["_seminaive_plan"][1].code
    # the rules' syntax trees are unpickled only when read: the default engine runs the pickled
    # code and the pruning reads the pickled rule shapes
    facts = {"Node": [("seq", "n0", "Relu", "", "r")], "Node_Input": [("seq", "n0", 0, "x")]}
    assert SemiNaiveEngine().run(again, facts) == SemiNaiveEngine().run(first, facts)
    assert len(again.rules) == len(first.rules) and again.rules._rules is None
    assert again.rules == first.rules and list(again.rules) == list(first.rules)
    assert again == first


@pytest.mark.slow
def test_program_cache_is_keyed_by_the_translator_sources_too(tmp_path, monkeypatch):
    """The pickled program carries the compiled rules and the rule shapes: a changed translator
    must not reuse it."""
    import analyzer.datalog.normalize
    import analyzer.engines.clingo_engine
    import analyzer.engines.seminaive_codegen
    import analyzer.engines.seminaive_engine
    import analyzer.speedups.relevance
    from analyzer.solve import program as program_cache
    from analyzer.solve.rulebook import rule_files, schema_files

    real = {p.resolve() for p in program_cache._TRANSLATOR_SOURCES}
    modules = (
        analyzer.engines.seminaive_engine,
        analyzer.engines.seminaive_codegen,
        analyzer.engines.clingo_engine,
        analyzer.datalog.normalize,
        analyzer.speedups.relevance,
    )
    assert real == {Path(m.__file__).resolve() for m in modules}
    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path / "cache"))
    translator = tmp_path / "translator.py"
    translator.write_text("version 1\n")
    monkeypatch.setattr(program_cache, "_TRANSLATOR_SOURCES", (translator,))
    paths = [*schema_files(), *rule_files([])]
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    program_cache.load_program_cached(paths)
    translator.write_text("version 2\n")
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    program_cache.load_program_cached(paths)
    assert len(list((tmp_path / "cache").glob("program-*.pickle"))) == 2


def test_engine_classes_are_read_lazily_by_name():
    assert list(ENGINES) == ["seminaive", "clingo", "souffle", "pydatalog"]
    assert ENGINES["clingo"] is ClingoEngine
    assert ENGINES.get("nope") is None


def test_libyaml_reads_the_bundled_tables_as_the_python_loader_does():
    from analyzer.importers.fx import to_onnx
    from analyzer.solve.rulebook import hints_catalog

    for path in (Path(to_onnx.__file__).with_name("aten_ops.yaml"), hints_catalog()):
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == yaml.safe_load(text)


def test_hint_catalog_is_read_only_for_a_reported_discrepancy(monkeypatch):
    # deepspeed_moe_ep2 is verified, yet Hint rows exist (frontier nodes upstream of no
    # output): the catalog of hint texts is not needed and not read
    import analyzer.verdict.build

    def unexpected():
        raise AssertionError("hint catalog read for a verified check")

    monkeypatch.setattr(analyzer.verdict.build, "_hint_texts", unexpected)
    folder = EXAMPLES / "deepspeed_moe_ep2"
    result = check(folder / "seq.onnx", [folder / "rank0.onnx", folder / "rank1.onnx"])
    assert result.verdict == "verified"
    assert result.derivation.derived["Hint"] or result.derivation.derived["RankHint"]


# --- rank files that differ only in the fields naming their rank share one parsed model -----

TWIN_CASES = ["llama_dp2_sgd", "llama_dp2_sgd_bug_missing_grad_allreduce"]


def _parse_every_file(monkeypatch):
    """Make :func:`~analyzer.facts.extract.load_model_file` parse every file (the slow path):
    no two files' headers compare equal."""
    from analyzer.facts.extract import GraphKey

    monkeypatch.setattr(GraphKey, "header", lambda self: object())


@pytest.mark.parametrize("name", TWIN_CASES)
@pytest.mark.slow
def test_rank_files_sharing_one_model_give_the_report_of_parsing_each(name, monkeypatch):
    from analyzer.inputs.load import load_inputs

    case = EXAMPLES / name
    seq, ranks, extra = _args(case)
    inp = load_inputs(seq, ranks)
    assert inp.ranks[1] is inp.ranks[0]  # rank 1's graph was not parsed again
    assert [m["shardlog.rank"] for m in inp.rank_metadata] == ["0", "1"]  # each file's own
    fast = check(seq, ranks, **extra, numeric=True)
    _parse_every_file(monkeypatch)
    slow_inp = load_inputs(seq, ranks)
    assert slow_inp.ranks[1] is not slow_inp.ranks[0] and slow_inp.rank_metadata == inp.rank_metadata
    slow = check(seq, ranks, **extra, numeric=True)
    assert fast.derivation.derived == slow.derivation.derived
    assert fast.verdict == slow.verdict == yaml.safe_load((case / "case.yaml").read_text())["expected"]
    assert _report(fast) == _report(slow)


def _twin_files(tmp_path, change_rank1) -> tuple[Path, list[Path]]:
    """seq and two rank files of llama_dp2_sgd: rank 0's file as is, rank 1's written from rank
    0's model after ``change_rank1(model)`` (serialized bytes may be edited by it: it returns
    them, or None to serialize the model)."""
    import onnx

    case = EXAMPLES / "llama_dp2_sgd"
    model = onnx.load(str(case / "rank0.onnx"), load_external_data=False)
    data = change_rank1(model)
    (tmp_path / "rank1.onnx").write_bytes(data if data is not None else model.SerializeToString())
    return case / "seq.onnx", [case / "rank0.onnx", tmp_path / "rank1.onnx"]


def test_a_twin_file_whose_metadata_is_not_utf8_is_an_input_error(tmp_path):
    from analyzer.errors import InputError
    from analyzer.inputs.load import load_inputs

    marker = "shardlog-test-marker"

    def bad_metadata(model):
        model.metadata_props[0].value = marker
        return model.SerializeToString().replace(marker.encode(), b"\xff" * len(marker))

    seq, ranks = _twin_files(tmp_path, bad_metadata)
    with pytest.raises(InputError) as err:
        load_inputs(seq, ranks)
    assert str(err.value) == f"{ranks[1]}: malformed ONNX model: model.metadata_props[0].value is not UTF-8 text"
    from click.testing import CliRunner

    from analyzer.cli import main

    result = CliRunner().invoke(main, ["check", str(seq), *map(str, ranks)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().splitlines() == [f"shardlog: error: {err.value}"]


def test_a_twin_file_whose_metadata_differs_shares_the_model_and_keeps_its_own_metadata(tmp_path):
    from analyzer.inputs.load import load_inputs

    def other_rank(model):
        for prop in model.metadata_props:
            if prop.key == "shardlog.rank":
                prop.value = "1"
        model.doc_string = "rank 1 of 2"

    seq, ranks = _twin_files(tmp_path, other_rank)
    inp = load_inputs(seq, ranks)
    assert inp.same_graph == [0, 1, 1] and inp.ranks[1] is inp.ranks[0]
    assert inp.rank_metadata[0]["shardlog.rank"] == "0" and inp.rank_metadata[1]["shardlog.rank"] == "1"


@pytest.mark.parametrize("field, value", [("producer_name", "another exporter"), ("ir_version", 7)])
def test_a_file_differing_in_another_model_field_is_parsed(tmp_path, field, value):
    """Only doc_string and metadata_props may differ for a shared model; otherwise the file is
    parsed (its graph is still not checked again) and keeps its own fields."""
    from analyzer.inputs.load import load_inputs

    def changed(model):
        setattr(model, field, value)
        for prop in model.metadata_props:
            if prop.key == "shardlog.rank":
                prop.value = "1"  # the file of rank 1 (a copy of rank 0's file is refused as given twice)

    seq, ranks = _twin_files(tmp_path, changed)
    inp = load_inputs(seq, ranks)
    assert inp.same_graph == [0, 1, 1] and inp.ranks[1] is not inp.ranks[0]
    assert getattr(inp.ranks[1], field) == value


def test_rank_files_whose_graphs_differ_are_each_parsed():
    from analyzer.inputs.load import load_inputs

    seq, ranks, _ = _args(EXAMPLES / "llama_tp2")
    inp = load_inputs(seq, ranks)
    assert inp.same_graph == [0, 1, 2] and inp.ranks[1] is not inp.ranks[0]


def test_package_cache_rebuilds_on_a_changed_source_or_a_bad_entry(tmp_path, monkeypatch):
    """analyzer.cache: a value is built once per content of its sources; an unreadable entry is
    built again and replaced; a cache directory that cannot be written still gives the value."""
    from analyzer.cache import cached, digest

    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "table.yaml"
    source.write_text("a: 1\n")
    builds = []

    def build():
        builds.append(source.read_text())
        return {"text": source.read_text()}

    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 1\n"}
    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 1\n"}
    assert builds == ["a: 1\n"]
    source.write_text("a: 2\n")
    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 2\n"}
    assert len(builds) == 2
    (entry,) = [p for p in (tmp_path / "cache").glob("t-*.pickle") if p.read_bytes().find(b"a: 2") >= 0]
    entry.write_bytes(b"not a pickle")
    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 2\n"} and len(builds) == 3
    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 2\n"} and len(builds) == 3  # replaced
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("SHARDLOG_CACHE", str(blocked / "cache"))  # under a file: cannot be made
    assert cached("t", digest([source.read_bytes()]), build) == {"text": "a: 2\n"} and len(builds) == 4


def test_fx_op_table_comes_from_the_cache_built_from_aten_ops_yaml(tmp_path, monkeypatch):
    from analyzer.importers.fx import to_onnx

    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    to_onnx.op_table.cache_clear()
    try:
        table = to_onnx.op_table()
        assert len(list(tmp_path.glob("fx-ops-*.pickle"))) == 1
        to_onnx.op_table.cache_clear()
        assert to_onnx.op_table() == table == to_onnx._read_op_table()
    finally:
        to_onnx.op_table.cache_clear()


@pytest.mark.slow
def test_coverage_runs_the_cached_instrumented_program_and_agrees_with_clingo(tmp_path, monkeypatch):
    from analyzer.solve import program as program_cache

    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    seq, ranks, extra = _args(EXAMPLES / "llama_tp2")
    first = check(seq, ranks, coverage=True, **extra)
    assert list(tmp_path.glob("program-coverage-*.pickle"))
    monkeypatch.setattr(program_cache, "_PROGRAMS", {})
    again = check(seq, ranks, coverage=True, **extra)  # the instrumented program from the cache
    other = check(seq, ranks, coverage=True, engine="clingo", **extra)
    fired = [c for c in first.derivation.coverage if c.fired]
    assert fired and len(fired) < len(first.derivation.coverage)
    assert first.derivation.coverage == again.derivation.coverage == other.derivation.coverage
    assert first.derivation.derived == other.derivation.derived
