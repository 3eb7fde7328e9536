"""The one-rank world (analyzer/speedups/symmetry.py): which rules cannot tell ranks apart, the facts and
rows of the one-rank world, and checks that give exactly what the full world gives."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES, check_text_graphs

from analyzer import check
from analyzer.datalog import parse_string
from analyzer.reports.text import to_json
from analyzer.solve import program as program_cache
from analyzer.solve.rulebook import rule_files, schema_files
from analyzer.speedups.symmetry import (
    expand_rows,
    has_unprobed_rules,
    probe_relations,
    probes_agree,
    representative_facts,
    rule_reason,
    with_rank_probes,
)

DECLS = """
.type Graph <: symbol
.type Rank <: number
.decl RankGraph(g: Graph, r: Rank)
.decl GraphRank(g: Graph, rank: Rank)
.decl NextRank(r: Rank, next: Rank)
.decl LastRank(r: Rank)
.decl WorldSize(n: number)
.decl Piece(s: symbol, r: Rank, d: symbol)
.decl Node(g: Graph, n: symbol, op: symbol)
.decl Chunk(s: symbol, c: number)
.decl Out(s: symbol, r: Rank)
.decl Any(s: symbol)
.decl Count(s: symbol, c: number)
.decl UpTo(s: symbol, r: Rank)
.decl All(s: symbol)
.decl Two(s: symbol, r: Rank, q: Rank)
.decl Held(r: Rank, rank: Rank)
.decl Owner(s: symbol, holder: Rank)
.decl Index(s: symbol, r: number)
"""


def _reason(rule_text: str) -> str | None:
    program = parse_string(DECLS + rule_text)
    from analyzer.speedups.symmetry import _walks

    walks = _walks(program)
    return rule_reason(program.rules[-1], program.decls, walks)


@pytest.mark.parametrize(
    "rule",
    [
        "Out(s, r) :- Piece(s, r, d), RankGraph(g, r), Node(g, d, _).",  # one rank, linked by RankGraph
        "Any(s) :- Piece(s, _, _).",  # some rank
        "Out(s, r) :- Piece(s, r, _), Piece(s, 0, _).",  # rank 0's rows are every rank's, renamed
        "Out(s, r) :- Piece(s, r, _), RankGraph(g, r), r >= 0.",  # true of every rank
        "Count(s, c) :- Piece(s, r, _), c = count : { Piece(s, r, _) }.",  # a count within one rank
        "Out(s, r) :- Piece(s, r, d), RankGraph(g, 0), Node(g, d, _).",  # rank 0's graph: one's own, renamed
        "Owner(s, h) :- Piece(s, h, d), RankGraph(g, h), Node(g, d, _).",  # a rank column named otherwise
    ],
)
def test_rules_that_cannot_tell_ranks_apart(rule):
    assert _reason(rule) is None


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("Out(s, r) :- Piece(s, r, _), WorldSize(n), Chunk(s, c), c = r * n.", "compares rank r"),
        ("Out(s, r) :- Piece(s, r, _), Chunk(s, r).", "rank r used as a value of Chunk"),
        ("Out(s, r) :- Piece(s, r, _), Piece(s, q, _), q != r.", "ranks"),
        ("Out(s, 1) :- Piece(s, 0, _).", "rank constant 1 in the head"),
        ("Out(s, r) :- Piece(s, r, _), Piece(s, 2, _).", "rank constant 2"),
        ("Count(s, c) :- Any(s), c = count : { Piece(s, _, _) }.", "aggregate ranges over the ranks"),
        ("Two(s, r, q) :- Piece(s, r, _), Piece(s, q, _).", "ranks"),
        ("Out(s, r) :- Piece(s, r, _), NextRank(r, _).", "NextRank outside an all-ranks walk"),
        ("Out(s, r) :- Piece(s, r, _), Held(r, 0).", "Held names two ranks"),
        # a rank column is one of type Rank, whatever its name; a number column named r is a value
        ("Owner(s, h) :- Piece(s, h, _), Piece(s, 0, _), Owner(s, 1).", "rank constant 1 in Owner"),
        ("Index(s, r) :- Piece(s, r, _).", "rank r used as a value of Index"),
    ],
)
def test_rules_that_may_tell_ranks_apart(rule, why):
    reason = _reason(rule)
    assert reason is not None and why in reason, reason


def test_an_all_ranks_walk_is_recognised_and_read_at_last_rank():
    walk = """
UpTo(s, 0) :- Piece(s, 0, _).
UpTo(s, r1) :- UpTo(s, r), NextRank(r, r1), Piece(s, r1, _).
All(s) :- UpTo(s, r), LastRank(r).
"""
    program = parse_string(DECLS + walk)
    from analyzer.speedups.symmetry import _walks

    assert _walks(program) == {"UpTo"}
    assert [rule_reason(r, program.decls, {"UpTo"}) for r in program.rules] == [None, None, None]
    # the same end written with arithmetic on the world size tells ranks apart
    program = parse_string(DECLS + walk.replace("LastRank(r).", "WorldSize(n), r = n - 1."))
    assert "compares rank r" in (rule_reason(program.rules[-1], program.decls, {"UpTo"}) or "")


def _library():
    return program_cache.load_program_cached([*schema_files(), *rule_files([])])


def test_every_library_rule_that_may_tell_ranks_apart_has_a_probe():
    program = _library()
    assert not has_unprobed_rules(program)
    probes = probe_relations(program)
    assert probes and all(name in program.outputs for name in probes)
    # the chunk-r rule of Megatron's scatter to the sequence-parallel region is one of them
    watched = {program.rules[int(name.rsplit("_", 1)[1])].loc.file for name in probes}
    assert any(str(f).endswith("parallel/sequence.dl") for f in watched)
    assert with_rank_probes(program) is program  # once per program


def test_one_rank_facts_keep_rank_zero_and_refuse_facts_that_differ():
    program = _library()
    decls = program.decls
    pieces = [("w", r, "w", "Shard", 1, "") for r in range(4)] + [("x", r, "x", "Replicate", -1, "") for r in range(4)]
    facts = {
        "InputPiece": pieces,
        "GraphRank": [("seq", -1), *((f"r{r}", r) for r in range(4))],
        "NextRank": [(r, r + 1) for r in range(3)],
        "LastRank": [(3,)],
        "WorldSize": [(4,)],
        "Node": [("seq", "n0", "MatMul", "", "mm")],
    }
    copied = {"r0": ["r1", "r2", "r3"]}
    world = representative_facts(facts, decls, 4, copied)
    assert world is not None
    assert world["InputPiece"] == [p for p in pieces if p[1] == 0]
    assert world["GraphRank"] == [("seq", -1), ("r0", 0)]
    assert world["NextRank"] == [] and world["LastRank"] == [(0,)] and world["WorldSize"] == [(4,)]
    assert world["Node"] == facts["Node"]
    # rank 2 holds another layout of w: the ranks differ
    odd = [p if p[:2] != ("w", 2) else ("w", 2, "w", "Shard", 0, "") for p in pieces]
    assert representative_facts({**facts, "InputPiece": odd}, decls, 4, copied) is None
    # rank graphs that are not all copies of rank 0's
    assert representative_facts(facts, decls, 4, {"r0": ["r1", "r2"]}) is None


def test_rows_of_rank_zero_are_copied_to_every_rank():
    program = _library()
    rows = {
        "Piece": [("a", 0, "a0", "Shard", 1, ""), ("b", -1, "b", "Replicate", -1, "")],
        "RankHint": [("r0", "m", "extra-allreduce")],
        "Holds": [("a", "Shard", 1, "")],
    }
    out = expand_rows(rows, program.decls, 3)
    assert out["Piece"] == sorted(
        [("a", r, "a0", "Shard", 1, "") for r in range(3)] + [("b", -1, "b", "Replicate", -1, "")]
    )
    assert out["RankHint"] == [(f"r{r}", "m", "extra-allreduce") for r in range(3)]
    assert out["Holds"] == rows["Holds"]


def test_probe_rows_must_be_the_same_at_every_rank():
    program = _library()
    name = probe_relations(program)[0]
    assert probes_agree({}, program, 2)
    assert probes_agree({name: [(0, "x"), (1, "x")]}, program, 2)
    assert not probes_agree({name: [(0, "x")]}, program, 2)  # rank 1 derives nothing
    assert not probes_agree({name: [(0, "x"), (1, "y")]}, program, 2)
    assert not probes_agree({name: [(-1,)]}, program, 2)  # some instance of a rule with a loose probe


def _both(seq, ranks, **kwargs):
    """The check with the one-rank world allowed, and without it."""
    return check(seq, ranks, **kwargs), check(seq, ranks, one_rank=False, **kwargs)


def _report(result) -> dict:
    out = to_json(result)
    out.pop("seconds", None)
    out.pop("timings", None)
    return out


HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
SEQ_MLP = """
mlp (float[2, 4] x, float[4, 8] w1, float[8, 4] w2) => (float[2, 4] y) {
  h = MatMul(x, w1)
  a = Relu(h)
  y = MatMul(a, w2)
}
"""
RANK_MLP = """
mlp (float[2, 4] x, float[4, 4] w1, float[4, 4] w2) => (float[2, 4] y) {
  h = MatMul(x, w1)
  a = Relu(h)
  p = MatMul(a, w2)
  y = com.microsoft.AllReduce<reduction = "sum">(p)
}
"""


def test_identical_rank_graphs_are_solved_as_one_rank(write_models):
    result, checked, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_MLP, [HEADER + RANK_MLP] * 2)
    assert result.verdict == "verified" and checked >= 4
    fast, full = _both(seq, ranks)
    assert fast.derivation.one_rank and not full.derivation.one_rank
    assert fast.derivation.derived == full.derivation.derived
    assert _report(fast) == _report(full)


def test_an_engine_without_graph_copies_gets_rank_zero_s_graph_facts_merged(write_models, monkeypatch):
    from analyzer.engines.clingo_engine import ClingoEngine

    _, _, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_MLP, [HEADER + RANK_MLP] * 2)
    full = check(seq, ranks, one_rank=False)
    monkeypatch.setattr(ClingoEngine, "graph_copies", False)  # as souffle and pydatalog
    merged = check(seq, ranks)
    assert merged.derivation.one_rank
    assert merged.derivation.derived == full.derivation.derived
    assert _report(merged) == _report(full)


SEQ_RELU = """
f (float[4, 2] x) => (float[4, 2] y) {
  y = Relu(x)
}
"""
# Every rank keeps output 0 of an equal split of the replicated x: chunk 0, right on rank 0 only
# (parallel/sequence.dl gives rank r's output r). The rule's probe sees other rows on rank 1.
RANK_FIRST_CHUNK = """
f (float[4, 2] x) => (float[2, 2] y) {
  s0, s1 = Split<axis = 0, num_outputs = 2>(x)
  y = Relu(s0)
}
"""


def test_a_rule_that_tells_ranks_apart_sends_the_check_to_the_full_world(write_models):
    result, _, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_RELU, [HEADER + RANK_FIRST_CHUNK] * 2)
    assert result.verdict == "discrepancy"
    assert not result.derivation.one_rank
    pieces = {(row[0], row[1], row[2]) for row in result.derivation.derived["Piece"]}
    assert ("x", 0, "s0") in pieces and ("x", 1, "s0") not in pieces  # what the full world derives
    fast, full = _both(seq, ranks)
    assert fast.derivation.derived == full.derivation.derived
    assert _report(fast) == _report(full)


# A user's rule file: the rank that holds each piece of a sharded value, in a Rank column that
# is not called r. Rank 1's rows are rank 0's renamed, so the one-rank world stands in for all
# ranks, and its rows are copied to rank 1 because the column's type says it names a rank.
USER_RANK_RULE = """
.decl HeldBy(s: ValueId, holder: Rank, d: ValueId)
.output HeldBy
HeldBy(s, holder, d) :- Piece(s, holder, d, "Shard", _, _), Holds(s, "Shard", _, _).
"""


@pytest.mark.slow
def test_a_user_rule_with_a_rank_column_of_any_name_keeps_the_one_rank_result_exact(write_models, tmp_path):
    _, _, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_MLP, [HEADER + RANK_MLP] * 2)
    rules = tmp_path / "user_rules"
    rules.mkdir()
    (rules / "held_by.dl").write_text(USER_RANK_RULE)
    fast, full = _both(seq, ranks, rules=[rules])
    assert fast.derivation.one_rank and not full.derivation.one_rank
    assert {row[1] for row in fast.derivation.derived["HeldBy"]} == {0, 1}
    assert fast.derivation.derived == full.derivation.derived
    assert _report(fast) == _report(full)


# A rule whose head names rank 0 (parallel/one_rank_term.dl's rank-0 piece): its row is rank
# 0's alone, so the one-rank world must not copy it to rank 1 (the probe derives it at rank 0 only).
USER_RANK_ZERO_RULE = """
.decl OnRankZero(s: ValueId, r: Rank, d: ValueId)
.output OnRankZero
OnRankZero(s, 0, d) :- Piece(s, 0, d, "Partial", _, _), Holds(s, "Partial", _, _).
"""


def test_a_rule_whose_head_names_rank_zero_is_not_copied_to_the_other_ranks(write_models, tmp_path):
    _, _, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_MLP, [HEADER + RANK_MLP] * 2)
    rules = tmp_path / "user_rules"
    rules.mkdir()
    (rules / "rank_zero.dl").write_text(USER_RANK_ZERO_RULE)
    fast, full = _both(seq, ranks, rules=[rules])
    assert {row[1] for row in full.derivation.derived["OnRankZero"]} == {0}
    assert fast.derivation.derived == full.derivation.derived
    assert _report(fast) == _report(full)


def _example(name: str) -> tuple[Path, list[Path], dict]:
    case = EXAMPLES / name
    cfg = yaml.safe_load((case / "case.yaml").read_text())
    files = cfg["files"]
    spec = files.get("spec", cfg.get("spec"))
    return case / files["seq"], [case / f for f in files["ranks"]], ({"relations": case / spec} if spec else {})


@pytest.mark.parametrize("name", ["llama_dp2_sgd", "llama_dp2_sgd_accum2_bug_mean_of_means"])
@pytest.mark.slow
def test_data_parallel_training_steps_give_the_same_relations_and_report(name):
    seq, ranks, extra = _example(name)
    fast, full = _both(seq, ranks, **extra)
    assert fast.derivation.one_rank
    assert fast.derivation.derived == full.derivation.derived
    assert fast.verdict == full.verdict == yaml.safe_load((EXAMPLES / name / "case.yaml").read_text())["expected"]
    assert _report(fast) == _report(full)


def test_coverage_lists_the_library_rules_not_the_probes(write_models):
    _, _, seq, ranks = check_text_graphs(write_models, HEADER + SEQ_MLP, [HEADER + RANK_MLP] * 2)
    result = check(seq, ranks, coverage=True)
    assert result.derivation.coverage
    assert not [c for c in result.derivation.coverage if c.head.startswith("RankProbe_") or c.file == "<string>"]


def test_cli_says_when_rank_zero_was_solved_and_all_ranks_solves_every_rank():
    from click.testing import CliRunner

    from analyzer.cli import main

    seq, ranks, _ = _example("llama_dp2_sgd")
    args = ["check", str(seq), *map(str, ranks), "-v"]
    fast = CliRunner().invoke(main, args)
    full = CliRunner().invoke(main, [*args, "--all-ranks"])
    assert fast.exit_code == full.exit_code == 0, (fast.output, full.output)
    assert "rank 0 solved, its rows copied to ranks 1..1" in fast.output
    assert "rank 0 solved" not in full.output
    assert "verified" in fast.output and "verified" in full.output
