"""Conformance of the engines: seminaive (default), clingo and the real Soufflé 2.5.

* Golden cases: every case under ``tests/rules/`` on every available engine. A case is
  ``program.dl`` and/or ``program.txt``, ``facts/*.facts`` and ``expected/*.csv`` (see
  :mod:`analyzer.datalog.golden`). Set ``SHARDLOG_REGEN_GOLDEN=1`` to rewrite the expected files
  from the default engine (then review the diff) instead of comparing. The rule library's
  cases are in tests/test_rule_library_golden.py.
* Bundled examples and GraphGuard's graphs: every derived table of a check, row for row, on
  clingo and Soufflé against the default engine (a difference names the relation and its first
  rows); the whole library is valid Soufflé with no warning.

Soufflé is found as the engine finds it (tests/conftest.py points ``SHARDLOG_SOUFFLE`` at the
shared build); where there is none, its tests skip with the reason.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from pathlib import Path

import pytest
import yaml

from analyzer.datalog.golden import find_cases, run_golden_case
from analyzer.engines import DEFAULT_ENGINE, ENGINES, EngineUnavailable, EngineWarning, get_engine

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


# ---------------------------------------------------------------------------------------
# Bundled examples and GraphGuard's graphs: every derived table on every engine, against the
# default engine. By default a representative set (one case per kind of parallelism and
# check); SHARDLOG_CONFORMANCE=all runs every examples/*/ and examples/entangle/*/ case.

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ALL_CASES = os.environ.get("SHARDLOG_CONFORMANCE") == "all"
REPRESENTATIVE = [
    "llama_tp2",  # column/row-parallel forward, verified
    "llama_tp2_bug_missing_allreduce",
    "llama_tp2_sp_bug_collective_order",  # sequence parallel; collectives paired by issue order
    "qwen2_tp2_vocab_bug_gather_axis",  # vocab-parallel embedding and head
    "llama_tp4_kv2_bug_kv_heads_misassigned",  # kv heads over pairs of ranks; weight values
    "mixtral_ep2_bug_expert_placement",  # expert parallel
    "deepspeed_moe_ep2_bug_missing_combine_alltoall",  # all-to-all dispatch and combine
    "llama_cp2_bug_rotary_offset",  # context parallel
    "llama_pp2_bug_swapped_rope",  # pipeline stages
    "llama_dp2_sgd_bug_missing_grad_allreduce",  # a training step
    "llama_tp2_dp2_bug_wrong_group_allreduce",  # a TP x DP mesh
    "entangle/qwen2_tp4_layer1",  # GraphGuard's torch.fx dumps (bundled)
    "entangle/bug_missing_switchmlp_allreduce",
    "entangle/qwen2_tp2_layer1",  # ../shared/data/entangle (skipped where absent)
    "entangle/gpt_tp2_layer1",
    "entangle/bug7_missing_allreduce",
]
EXAMPLE_CASES = (
    sorted(p.parent.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.glob("**/case.yaml"))
    if ALL_CASES
    else REPRESENTATIVE
)
OTHER_ENGINES = [name for name in ENGINES if name not in (DEFAULT_ENGINE, "pydatalog")]  # pyDatalog: minutes


def table_differences(base: dict, other: dict, base_name: str, other_name: str, shown: int = 3) -> list[str]:
    """One line per relation whose rows differ between two engines' derived tables: the
    relation, how many rows each has alone, and the first (sorted) of them."""
    out = []
    for relation in sorted(set(base) | set(other)):
        a, b = set(base.get(relation, ())), set(other.get(relation, ()))
        if a != b:
            only_a, only_b = sorted(a - b), sorted(b - a)
            out.append(
                f"{relation}: {len(only_a)} row(s) only on {base_name} {only_a[:shown]}, "
                f"{len(only_b)} only on {other_name} {only_b[:shown]}"
            )
    return out


@pytest.fixture(scope="module", autouse=True)
def _forget_checks():
    """Checks are kept for this file's tests only (many kept results slow every later full
    garbage collection of the test process)."""
    yield
    _checked.cache_clear()


@functools.cache
def _checked(case: str, engine_name: str):
    """``check()`` of an example on one engine (once per session), with the engine warnings
    it raised."""
    from conftest import check_args

    from analyzer import check

    args = check_args(EXAMPLES / case)
    if args is None:
        pytest.skip(f"{case}: GraphGuard's dumps are not here (../shared/data/entangle)")
    seq, ranks, kwargs = args
    try:
        get_engine(engine_name)
    except EngineUnavailable as exc:
        pytest.skip(f"{engine_name}: {exc}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EngineWarning)
        result = check(seq, ranks, engine=engine_name, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, EngineWarning)]


@pytest.mark.parametrize("engine_name", OTHER_ENGINES)
@pytest.mark.slow
@pytest.mark.parametrize("case", EXAMPLE_CASES)
def test_example_tables_agree_with_the_default_engine(case, engine_name):
    """Every derived relation row for row, the verdict, the discrepancies (messages, in order)
    and no warning of the engine's (Soufflé's "variable occurs only once" and the like)."""
    expected = yaml.safe_load((EXAMPLES / case / "case.yaml").read_text(encoding="utf-8")).get("expected")
    base, base_warnings = _checked(case, DEFAULT_ENGINE)
    other, other_warnings = _checked(case, engine_name)
    assert base.engine == DEFAULT_ENGINE and other.engine == engine_name
    differences = table_differences(base.derivation.derived, other.derivation.derived, DEFAULT_ENGINE, engine_name)
    assert not differences, f"{case}: {engine_name} derives other tables than {DEFAULT_ENGINE}:\n" + "\n".join(
        differences
    )
    assert base.derivation.derived.get("Piece"), "two empty answers"
    assert base.verdict == other.verdict == expected
    assert [d.message for d in base.verdict_.discrepancies] == [d.message for d in other.verdict_.discrepancies]
    assert base_warnings == other_warnings == []


@pytest.mark.parametrize("engine_name", OTHER_ENGINES)
@pytest.mark.parametrize("case", ["llama_tp2_bug_missing_allreduce", "mixtral_ep2_bug_expert_placement"])
@pytest.mark.slow
def test_every_intermediate_relation_agrees(case, engine_name):
    """Not only the .output relations a check reads: with every relation of the library made an
    output, each engine derives the same rows as the default on a check's facts."""
    import dataclasses

    from analyzer.datalog import load_program

    result, _ = _checked(case, DEFAULT_ENGINE)
    root = EXAMPLES.parent
    program = load_program([root / "schemas", root / "rules"])
    program = dataclasses.replace(program, outputs=list(program.decls))
    facts = {name: rows for name, rows in result.derivation.facts.items() if name in program.decls}
    try:
        other = get_engine(engine_name)
    except EngineUnavailable as exc:
        pytest.skip(f"{engine_name}: {exc}")
    base = get_engine(DEFAULT_ENGINE).run(program, facts)
    assert sum(1 for rows in base.values() if rows) > 100  # most of the library fires
    differences = table_differences(base, other.run(program, facts), DEFAULT_ENGINE, engine_name)
    assert not differences, "\n".join(differences)


def test_table_differences_name_the_relation_and_the_first_rows():
    base = {"Holds": [("x", "Replicate"), ("y", "Shard")], "Piece": [("a",)], "Same": [(1,)]}
    other = {"Holds": [("x", "Replicate"), ("z", "Shard"), ("w", "Shard")], "Same": [(1,)], "Extra": [(2,)]}
    assert table_differences(base, other, "seminaive", "souffle") == [
        "Extra: 0 row(s) only on seminaive [], 1 only on souffle [(2,)]",
        "Holds: 1 row(s) only on seminaive [('y', 'Shard')], 2 only on souffle [('w', 'Shard'), ('z', 'Shard')]",
        "Piece: 1 row(s) only on seminaive [('a',)], 0 only on souffle []",
    ]
    assert table_differences(base, base, "a", "b") == []


@pytest.mark.slow
def test_whole_library_is_valid_souffle_without_warnings():
    """Every rule of the library (not only those a check keeps) through Soufflé's front end
    and evaluation on no facts: no error, no warning."""
    try:
        engine = get_engine("souffle")
    except EngineUnavailable as exc:
        pytest.skip(f"souffle: {exc}")
    from analyzer.datalog import load_program

    root = EXAMPLES.parent
    program = load_program([root / "schemas", root / "rules"])
    engine.prune = False
    with warnings.catch_warnings():
        warnings.simplefilter("error", EngineWarning)
        derived = engine.run(program, {})
    assert set(derived) == set(program.outputs)


@pytest.mark.slow
def test_souffle_with_and_without_pruning_agree():
    """Soufflé on every rule against the pruned run the engine makes by default
    (analyzer/speedups/relevance.py), on the facts of an example's check."""
    result, _ = _checked("llama_tp2_bug_missing_allreduce", "souffle")
    from analyzer.datalog import load_program

    root = EXAMPLES.parent
    program = load_program([root / "schemas", root / "rules"])
    facts = {name: rows for name, rows in result.derivation.facts.items() if name in program.decls}
    pruned, whole = get_engine("souffle"), get_engine("souffle")
    whole.prune = False
    derived = pruned.run(program, facts)
    assert derived["Piece"]
    assert not table_differences(derived, whole.run(program, facts), "pruned", "whole")


@pytest.mark.parametrize("case", ["entangle/qwen2_tp4_layer1", "entangle/bug_missing_layernorm_allreduce"])
@pytest.mark.slow
def test_cli_check_on_souffle_prints_what_the_default_prints(case):
    """``shardlog check --engine souffle`` on GraphGuard's graphs: the same report (verdict,
    outputs, discrepancies) and exit code as the default engine, nothing on stderr."""
    from click.testing import CliRunner
    from conftest import check_args

    from analyzer.cli import main

    try:
        get_engine("souffle")
    except EngineUnavailable as exc:
        pytest.skip(f"souffle: {exc}")
    seq, ranks, kwargs = check_args(EXAMPLES / case)
    args = ["check", str(seq), *map(str, ranks), "--relations", str(kwargs["relations"])]
    runs = {}
    for engine in (DEFAULT_ENGINE, "souffle"):
        result = CliRunner().invoke(main, [*args, "--engine", engine])
        # the summary line names the engine and the seconds: "verified (world size 4, engine x, 0.12 s)"
        text = re.sub(rf"engine {engine}, [0-9.]+ s", "engine, s", result.stdout)
        runs[engine] = (result.exit_code, text, result.stderr)
    assert runs["souffle"] == runs[DEFAULT_ENGINE]
    assert runs["souffle"][0] in (0, 1) and runs["souffle"][2] == ""
