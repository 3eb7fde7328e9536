"""Tests of the engines: interface, agreement, large EDB, errors and the Soufflé plumbing."""

from __future__ import annotations

import stat
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from analyzer.datalog import DatalogError, load_program, parse_string
from analyzer.datalog.functors import FunctorError
from analyzer.engines import (
    DEFAULT_ENGINE,
    EngineError,
    EngineUnavailable,
    EngineWarning,
    UnknownEngine,
    available_engines,
    get_engine,
)
from analyzer.engines.clingo_engine import to_clingo

ENGINES = available_engines()

PROGRAM = """
.decl E(a: symbol, b: symbol)
.decl W(a: symbol, w: number)
.decl T(a: symbol, b: symbol)
.decl Out(a: symbol, n: number, total: number)
.decl Iso(a: symbol)
.decl Both(a: symbol, b: symbol)
.input E, W
.output T, Out, Iso, Both
T(a, b) :- E(a, b).
T(a, c) :- T(a, b), E(b, c).
Out(a, n, s) :- W(a, _), n = count : { T(a, _) }, s = sum w : { T(a, b), W(b, w) }.
Iso(a) :- W(a, _), !E(a, _), !E(_, a).
Both(a, b) :- T(a, b), T(b, a), a != b.
T("given", "fact").
"""
FACTS = {
    "E": [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")],
    "W": [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("z", 5), ("True", 6), ("", 7)],
}


def test_engines_registry():
    assert DEFAULT_ENGINE == "seminaive"
    assert "seminaive" in ENGINES and "clingo" in ENGINES and "pydatalog" in ENGINES
    assert get_engine().name == "seminaive"
    assert get_engine("CLINGO").name == "clingo"
    assert get_engine("PyDatalog").name == "pydatalog"
    with pytest.raises(UnknownEngine, match="unknown engine 'nope'"):
        get_engine("nope")
    assert issubclass(UnknownEngine, ValueError) and issubclass(UnknownEngine, EngineUnavailable)


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_result_shape(engine):
    program = parse_string(PROGRAM)
    result = get_engine(engine).run(program, FACTS)
    assert list(result) == ["T", "Out", "Iso", "Both"]
    assert result["Out"] == [
        ("", 0, 0),
        ("True", 0, 0),
        ("a", 4, 10),
        ("b", 4, 10),
        ("c", 4, 10),
        ("d", 0, 0),
        ("z", 0, 0),
    ]
    assert result["Iso"] == [("",), ("True",), ("z",)]
    assert ("given", "fact") in result["T"]
    assert result["Both"][:2] == [("a", "b"), ("a", "c")]
    for rows in result.values():
        assert rows == sorted(rows)
        for row in rows:
            assert all(type(v) in (str, int) for v in row)


def test_engines_agree():
    program = parse_string(PROGRAM)
    results = {name: get_engine(name).run(program, FACTS) for name in ENGINES}
    first = results[ENGINES[0]]
    for name, result in results.items():
        assert result == first, name


@pytest.mark.parametrize("engine", ENGINES)
def test_facts_and_rules_for_the_same_relation(engine):
    program = parse_string(
        """
        .decl R(x: number)
        .decl S(x: number)
        .output R
        R(x) :- S(x).
        R(100).
        """
    )
    assert get_engine(engine).run(program, {"R": [(1,)], "S": [(2,)]}) == {"R": [(1,), (2,), (100,)]}
    assert get_engine(engine).run(program, {}) == {"R": [(100,)]}


@pytest.mark.parametrize("engine", ENGINES)
def test_nullary_relations(engine):
    program = parse_string(
        """
        .decl A(x: number)
        .decl Any()
        .decl None_()
        .output Any, None_
        Any() :- A(_).
        None_() :- A(x), x > 10.
        """
    )
    assert get_engine(engine).run(program, {"A": [(1,)]}) == {"Any": [()], "None_": []}


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_facts_are_rejected(engine):
    program = parse_string(".decl A(s: symbol, n: number)\n.output A\n")
    run = get_engine(engine).run
    with pytest.raises(DatalogError, match="undeclared relation B"):
        run(program, {"B": [(1,)]})
    with pytest.raises(DatalogError, match="A"):
        run(program, {"A": [("x",)]})
    with pytest.raises(DatalogError, match="number"):
        run(program, {"A": [("x", "1")]})
    with pytest.raises(DatalogError, match="number"):
        run(program, {"A": [("x", True)]})
    with pytest.raises(DatalogError, match="symbol"):
        run(program, {"A": [(1, 1)]})
    with pytest.raises(DatalogError, match="32 bits"):
        run(program, {"A": [("x", 2**31)]})
    assert run(program, {"A": [["x", -(2**31)]]}) == {"A": [("x", -(2**31))]}


@pytest.mark.parametrize("engine", ENGINES)
def test_functor_errors_and_division_by_zero(engine):
    program = parse_string(
        """
        .decl S(s: symbol)
        .decl N(a: number, b: number)
        .decl P(n: number)
        .decl Q(a: number, q: number)
        .output P, Q
        P(to_number(s)) :- S(s).
        Q(a, a / b) :- N(a, b).
        """
    )
    run = get_engine(engine).run
    assert run(program, {"S": [("12",), (" -3",)], "N": [(7, 0), (7, 2)]}) == {"P": [(-3,), (12,)], "Q": [(7, 3)]}
    with pytest.raises(DatalogError, match="to_number"):
        run(program, {"S": [("x1",)]})


@pytest.mark.parametrize("engine", ENGINES)
def test_arithmetic_wraps_at_32_bits(engine):
    program = parse_string(".decl A(x: number)\n.decl B(x: number)\n.output B\nB(x + 1) :- A(x).\n")
    assert get_engine(engine).run(program, {"A": [(2**31 - 1,)]}) == {"B": [(-(2**31),)]}


def test_mutual_recursion_with_given_facts_terminates_everywhere():
    # pyDatalog's own top-down resolution loops forever on this program.
    program = parse_string(
        """
        .decl I(n: symbol, i: number)
        .decl Next(i: number, j: number)
        .decl Last(n: symbol, i: number)
        .decl UpTo(n: symbol, i: number)
        .decl All(n: symbol)
        .output UpTo, I, All
        UpTo(n, i) :- I(n, i), i = 0.
        UpTo(n, j) :- UpTo(n, i), I(n, j), Next(i, j).
        All(n) :- UpTo(n, i), Last(n, i).
        I(n, i + 1) :- All(n), Last(n, i).
        """
    )
    facts = {
        "I": [("a", 0), ("a", 1), ("b", 0), ("b", 2)],
        "Next": [(i, i + 1) for i in range(4)],
        "Last": [("a", 1), ("b", 2), ("a", 2)],
    }
    results = [get_engine(name).run(program, facts) for name in ENGINES]
    assert results[0]["All"] == [("a",)]
    assert results[0]["UpTo"] == [("a", 0), ("a", 1), ("a", 2), ("a", 3), ("b", 0)]
    assert all(r == results[0] for r in results)


@pytest.mark.slow
def test_clingo_loads_200k_facts_and_joins():
    n = 200_000
    program = parse_string(
        """
        .decl Next(a: symbol, b: symbol)
        .decl Two(a: symbol, c: symbol)
        .decl Deg(a: symbol, n: number)
        .input Next
        .output Two, Deg
        Two(a, c) :- Next(a, b), Next(b, c).
        Deg(a, n) :- Next(a, _), a = "n7", n = count : { Next(a, _) }.
        """
    )
    facts = {"Next": [(f"n{i}", f"n{i + 1}") for i in range(n)]}
    result = get_engine("clingo").run(program, facts)
    assert len(result["Two"]) == n - 1
    assert ("n0", "n2") in result["Two"] and ("n199998", "n200000") in result["Two"]
    assert result["Deg"] == [("n7", 1)]


def test_clingo_translation_traps():
    program = parse_string(
        """
        .decl B(x: number, y: number)
        .decl H(x: number, n: number)
        H(x, n) :- B(x, _), n = count : { B(x, _) }.
        H(x, m) :- B(x, _), m = min y : { B(x, y) }.
        H(x, y % 3) :- B(x, y), !B(y, _).
        """
    )
    text = to_clingo(program, outputs=["H"])
    # every _ of a positive atom is a fresh variable (no projection); a negated one stays _
    assert "r_H(V_x,V_n):-r_B(V_x,V__w1),V_n=#count{V__w2:r_B(V_x,V__w2)}." in text
    assert "not r_B(V_y,_)" in text
    assert "V_m=#min{V_y,V_y:r_B(V_x,V_y)},V_m!=#sup" in text
    assert "(V_y\\3)" in text
    assert "#show r_H/2." in text


def test_clingo_copied_graph_facts_derive_what_every_copy_given_does():
    # the rank graphs of an SPMD export: one graph's facts, given once for several graphs
    from analyzer.engines.clingo_engine import GraphCopies

    program = parse_string(
        """
        .decl Node(g: symbol, n: symbol, op: symbol)
        .decl Label(n: symbol, g: symbol, v: number)
        .decl Unused(g: symbol, x: symbol)
        .decl Rank(g: symbol, r: number)
        .decl Ops(g: symbol, c: number)
        .decl Pair(g: symbol, n: symbol, op: symbol, v: number)
        .decl Lonely(g: symbol, n: symbol)
        .output Ops, Pair, Lonely
        Ops(g, c) :- Rank(g, _), c = count : { Node(g, _, _) }.
        Pair(g, n, op, v) :- Node(g, n, op), Label(n, g, v), Rank(g, r), r >= 0.
        Lonely(g, n) :- Node(g, n, _), !Label(n, g, _).
        """
    )
    source = {
        "Node": [("r0", 'mat"mul\\1', "MatMul"), ("r0", "add\n2", "Add"), ("r0", "x", "Relu")],
        "Label": [('mat"mul\\1', "r0", 7), ("add\n2", "r0", -3)],
        "Unused": [("r0", "u")],
    }
    ranks = {"Rank": [("seq", -1), ("r0", 0), ("r1", 1), ("r2", 2)], "Node": [("seq", "s", "MatMul")]}
    every = {rel: [*ranks.get(rel, [])] for rel in {*source, *ranks}}
    for g in ("r0", "r1", "r2"):
        for rel, rows in source.items():
            col = 0 if rel != "Label" else 1
            every[rel] += [(*row[:col], g, *row[col + 1 :]) for row in rows]
    engine = get_engine("clingo")
    expected = engine.run(program, every)
    assert ("r2", "add\n2", "Add", -3) in expected["Pair"] and ("r1", "x") in expected["Lonely"]
    assert engine.run(program, ranks, copies=[GraphCopies(("r0", "r1", "r2"), source)]) == expected
    with pytest.raises(DatalogError, match="name another graph"):
        engine.run(program, ranks, copies=[GraphCopies(("r1", "r2"), source)])
    with pytest.raises(DatalogError, match="Unused.*expected a symbol"):  # checked, though no rule reads it
        engine.run(program, ranks, copies=[GraphCopies(("r0",), {**source, "Unused": [("r0", 1)]})])


def test_aggregate_using_an_outer_variable_only_in_a_comparison():
    program = parse_string(
        """
        .decl A(x: number)
        .decl B(x: number)
        .decl H(x: number, n: number)
        .output H
        H(x, n) :- A(x), n = count : { B(y), y < x }.
        """
    )
    facts = {"A": [(2,), (0,)], "B": [(0,), (1,), (5,)]}
    for engine in ENGINES:
        assert get_engine(engine).run(program, facts) == {"H": [(0, 0), (2, 2)]}, engine


def test_pydatalog_rejects_what_it_cannot_express():
    program = parse_string(
        """
        .decl E(a: number, b: number)
        .decl R(x: number, n: number)
        .output R
        R(x, 0) :- E(x, _), x = 0.
        R(y, n) :- R(x, _), E(x, y), n = count : { E(z, _), z < y }.
        """
    )
    facts = {"E": [(0, 1), (1, 2), (5, 6)]}
    with pytest.raises(EngineUnavailable, match="cannot evaluate the count aggregate .* recursive relation R"):
        get_engine("pydatalog").run(program, facts)
    assert get_engine("clingo").run(program, facts) == {"R": [(0, 0), (1, 1), (2, 2)]}


def test_pydatalog_runs_are_isolated_across_threads():
    program = parse_string(PROGRAM)
    expected = get_engine("clingo").run(program, FACTS)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(get_engine("pydatalog").run, program, FACTS) for _ in range(3)]
        results = [f.result() for f in futures]
    assert results == [expected] * 3


# ---------------------------------------------------------------------------------------
# Soufflé


@pytest.fixture
def no_souffle(monkeypatch, tmp_path):
    """Nothing to find: no SHARDLOG_SOUFFLE, no build beside the checkout, an empty PATH."""
    from analyzer.engines import souffle_engine

    monkeypatch.delenv("SHARDLOG_SOUFFLE", raising=False)
    monkeypatch.setattr(souffle_engine, "CHECKOUT_BINARY", Path("no") / "such" / "souffle")
    monkeypatch.setenv("PATH", str(tmp_path))


def test_souffle_unavailable_without_binary(no_souffle):
    assert "souffle" not in available_engines()
    with pytest.raises(EngineUnavailable) as info:
        get_engine("souffle")
    assert str(info.value).startswith("Soufflé not found: no ")
    assert "set SHARDLOG_SOUFFLE=/path/to/souffle" in str(info.value)


def test_souffle_explicit_path_that_is_not_a_binary(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDLOG_SOUFFLE", str(tmp_path / "nope"))
    with pytest.raises(EngineUnavailable, match=r"SHARDLOG_SOUFFLE=.*nope is not an executable file"):
        get_engine("souffle")


def test_cli_without_souffle_is_one_line_exit_2(no_souffle):
    from click.testing import CliRunner
    from conftest import EXAMPLES

    from analyzer.cli import main

    folder = EXAMPLES / "llama_tp2"
    files = [str(folder / n) for n in ("seq.onnx", "rank0.onnx", "rank1.onnx")]
    result = CliRunner().invoke(main, ["check", *files, "--engine", "souffle"])
    assert result.exit_code == 2, result.output
    text = (result.stderr or result.output).strip()
    assert len(text.splitlines()) == 1 and text.startswith("shardlog: error: Soufflé not found"), text


FAKE_SOUFFLE = """\
#!{python}
# A stand-in for souffle: checks the command line and the files written for it, then
# "evaluates" Out(a, n + 1) :- In(a, n) by hand; prints a warning about the rule's line.
import os, sys
args = sys.argv[1:]
assert args[:2] == ["--no-preprocessor", "-F"] and args[3] == "-D" and args[5].endswith("program.dl"), args
facts_dir, out_dir, program = args[2], args[4], args[5]
text = open(program).read()
lines = text.splitlines()
rule = next(i for i, line in enumerate(lines, 1) if line.startswith("Out("))
if os.environ.get("FAKE_SOUFFLE_FAIL"):
    sys.stderr.write(f"Error: something broke in file {{program}} at line {{rule}}\\n{{lines[rule - 1]}}\\n---^---\\n")
    sys.stderr.write("Error: and more\\n2 errors generated, evaluation aborted\\n")
    sys.exit(3)
assert ".input In" in text and ".input Extra" in text and ".output Out" in text, text
where = f"in file {{program}} at line {{rule}}"
sys.stderr.write(f"Warning: Variable q only occurs once {{where}}\\n{{lines[rule - 1]}}\\n--^--\\n")
rows = [line.rstrip("\\n").split("\\t") for line in open(os.path.join(facts_dir, "In.facts"))]
extra = open(os.path.join(facts_dir, "Extra.facts")).read()
assert extra == "", extra
with open(os.path.join(out_dir, "Out.csv"), "w") as out:
    for a, n in rows:
        out.write(f"{{a}}\\t{{int(n) + 1}}\\n")
"""


@pytest.fixture
def fake_souffle(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "souffle"
    script.write_text(FAKE_SOUFFLE.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("SHARDLOG_SOUFFLE", str(script))
    return script


def test_souffle_plumbing_with_a_fake_binary(fake_souffle, monkeypatch):
    program = parse_string(
        textwrap.dedent(
            """
            .decl In(a: symbol, n: number)
            .decl Extra(a: symbol)
            .decl Out(a: symbol, n: number)
            .input Extra
            .output Out
            Out(a, n + 1) :- In(a, n), !Extra(a).
            """
        ),
        filename="mine.dl",
    )
    engine = get_engine("souffle")
    assert "souffle" in available_engines()
    with pytest.warns(EngineWarning) as caught:
        result = engine.run(program, {"In": [("x y", 1), ("b", -5)]})
    assert result == {"Out": [("b", -4), ("x y", 2)]}
    # Soufflé's message, one line, at the rule's file and line instead of the printed program's
    assert [str(w.message) for w in caught] == ["souffle: Warning: Variable q only occurs once (mine.dl:7:1)"]

    monkeypatch.setenv("FAKE_SOUFFLE_FAIL", "1")
    with pytest.raises(EngineError) as info:
        engine.run(program, {"In": [("b", 1)]})
    assert str(info.value) == "souffle exited with status 3: Error: something broke (mine.dl:7:1) (and 1 more)"


def test_souffle_rejects_symbols_the_fact_format_cannot_hold(fake_souffle):
    program = parse_string(".decl In(a: symbol, n: number)\n.decl Out(a: symbol, n: number)\n.output Out\n")
    with pytest.raises(DatalogError, match="tab or newline"):
        get_engine("souffle").run(program, {"In": [("a\tb", 1)]})


def _real_souffle():
    try:
        return get_engine("souffle")
    except EngineUnavailable as exc:
        pytest.skip(f"real Soufflé: {exc}")


def test_real_souffle_agrees_with_clingo():
    engine = _real_souffle()
    program = parse_string(PROGRAM)
    assert engine.run(program, FACTS) == get_engine("clingo").run(program, FACTS)


def test_real_souffle_division_by_zero_does_not_fire():
    """Soufflé aborts on a zero divisor; the printed program guards it (the other engines'
    meaning: the rule instance does not fire)."""
    engine = _real_souffle()
    program = parse_string(
        ".decl P(a: number, b: number)\n.decl Q(a: number, q: number, r: number)\n.input P\n.output Q\n"
        "Q(a, a / b, a % (b - 1)) :- P(a, b).\n"
    )
    facts = {"P": [(7, 0), (7, 1), (-7, 2), (9, 4)]}
    assert engine.run(program, facts) == get_engine("seminaive").run(program, facts) == {"Q": [(-7, -3, 0), (9, 2, 0)]}


def test_real_souffle_error_and_warning_are_one_line_at_the_source(tmp_path):
    engine = _real_souffle()
    rules = tmp_path / "mine.dl"
    rules.write_text(".decl P(a: number, b: number)\n.decl Q(a: number)\n.input P\n.output Q\n\nQ(a) :- P(a, b).\n")
    program = load_program([rules])
    with pytest.warns(EngineWarning) as caught:
        assert engine.run(program, {"P": [(1, 2)]}) == {"Q": [(1,)]}
    assert [str(w.message) for w in caught] == [f"souffle: Warning: Variable b only occurs once ({rules}:6:1)"]
    # Soufflé's error, one line at the source: subtypes of symbol do not mix there (here
    # only base types are checked)
    rules.write_text(
        ".type A <: symbol\n.type B <: symbol\n.decl R(x: A)\n.decl S(x: B)\n.input R\n.output S\nS(x) :- R(x).\n"
    )
    with pytest.raises(EngineError) as info:
        engine.run(load_program([rules]), {"R": [("a",)]})
    assert str(info.value) == (
        f"souffle exited with status 1: Error: Atom's argument type is not a subtype of its declared type ({rules}:7:1)"
    )
    # Soufflé stops at to_number of a non-number: the FunctorError of the other engines
    program = parse_string('.decl Q(a: number)\n.output Q\nQ(n) :- n = to_number("x").\n')
    with pytest.raises(FunctorError, match='to_number\\("x"\\): not a decimal integer'):
        engine.run(program, {})


def test_engine_error_types():
    assert issubclass(EngineUnavailable, RuntimeError)
    assert issubclass(EngineError, RuntimeError)
