"""The compiled-Python engine (``seminaive``, the default) against clingo on programs that
exercise its code generator: long joins (continuation functions), repeated variables, the
delta atom of a recursive rule with constants, aggregates with outer variables, negation with
wildcards, division by zero; and on random EDBs (hypothesis) for a recursive program with
negation and aggregates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.datalog import DatalogError, parse_string
from analyzer.engines import get_engine
from analyzer.engines.seminaive_codegen import rule_source
from analyzer.engines.seminaive_engine import program_source

CHAIN = 18  # more atoms than one generated function may nest loops for (15)

LONG = (
    ".decl E(a: number, b: number)\n.decl N(a: number, t: symbol)\n.decl Long(a: number, z: number)\n"
    ".input E, N\n.output Long\n"
    + 'Long(x0, x{n}) :- {body}, !N(x0, _), !N(x{n}, "stop").\n'.format(
        n=CHAIN, body=", ".join(f"E(x{i}, x{i + 1})" for i in range(CHAIN))
    )
)

FEATURES = """
.decl E(a: symbol, b: symbol)
.decl W(a: symbol, w: number)
.decl Mark(a: symbol, k: symbol)
.input E, W, Mark
.decl Path(a: symbol, b: symbol)
.decl Loop(a: symbol)
.decl Tagged(a: symbol, b: symbol)
.decl Stats(a: symbol, n: number, s: number, lo: number, hi: number)
.decl NoOut(a: symbol, n: number)
.decl Ratio(a: symbol, q: number, r: number)
.decl Named(a: symbol, t: symbol, len: number)
.output Path, Loop, Tagged, Stats, NoOut, Ratio, Named
Path(a, b) :- E(a, b).
Path(a, c) :- Path(a, b), E(b, c).
Path(a, c) :- Path(a, b), Mark(b, "hop"), Path(b, c).
Loop(a) :- Path(a, a).
Tagged(a, b) :- E(a, b), Mark(a, k), Mark(b, k), !Mark(a, "hop").
Stats(a, n, s, lo, hi) :- W(a, _), n = count : { Path(a, _) }, s = sum w1 : { Path(a, b1), W(b1, w1) },
    lo = min w2 : { Path(a, b2), W(b2, w2) }, hi = max w3 : { Path(a, b3), W(b3, w3) }.
NoOut(a, n) :- W(a, _), !E(a, _), n = count : { E(a, _) }.
Ratio(a, w / v, w % v) :- W(a, w), E(a, b), W(b, v).
Named(a, cat(a, cat("-", to_string(w))), strlen(a)) :- W(a, w), w >= 0.
"""


def _both(program, facts):
    out = get_engine("seminaive").run(program, facts)
    assert out == get_engine("clingo").run(program, facts)
    return out


def test_a_join_longer_than_python_nesting_goes_on_in_a_continuation():
    program = parse_string(LONG)
    assert "def _c0(" in program_source(program)
    edges = [(i, i + 1) for i in range(40)] + [(3, 7), (7, 3)]
    out = _both(program, {"E": edges, "N": [(0, "x"), (22, "stop")]})
    assert (1, 19) in out["Long"] and (0, 18) not in out["Long"] and (4, 22) not in out["Long"]
    assert len(out["Long"]) > 20


def test_recursion_negation_aggregates_arithmetic_and_functors_agree_with_clingo():
    program = parse_string(FEATURES)
    facts = {
        "E": [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("x", "x")],
        "W": [("a", 7), ("b", 2), ("c", 0), ("d", -5), ("e", 4), ("z", 1), ("x", 3)],
        "Mark": [("b", "hop"), ("c", "red"), ("d", "red"), ("a", "red"), ("x", "blue")],
    }
    out = _both(program, facts)
    assert ("a", "e") in out["Path"] and ("e", "a") not in out["Path"]
    assert out["Loop"] == [("a",), ("b",), ("c",), ("x",)]
    assert ("c", "d") in out["Tagged"] and ("b", "c") not in out["Tagged"]  # b is a hop
    # z has no path: min/max over nothing give no value, so no row; a's count is its paths
    assert all(r[0] != "z" for r in out["Stats"])
    n_a = len([p for p in out["Path"] if p[0] == "a"])
    assert [r[1] for r in out["Stats"] if r[0] == "a"] == [n_a]
    assert ("e", 0) in out["NoOut"] and ("z", 0) in out["NoOut"]
    # w / v with v = 0 (c's weight) does not fire; truncation toward zero for negatives
    assert all(r[0] != "b" for r in out["Ratio"])
    assert ("c", 0, 0) in out["Ratio"] and ("d", -1, -1) in out["Ratio"]
    assert ("a", "a-7", 1) in out["Named"] and all(r[0] != "d" for r in out["Named"])


def test_a_repeated_variable_in_the_recursive_atom_and_constants_in_the_delta():
    program = parse_string(
        ".decl E(a: number, b: number, k: symbol)\n.input E\n.decl R(a: number, b: number, k: symbol)\n"
        ".decl Self(a: number)\n.output R, Self\n"
        'R(a, b, k) :- E(a, b, k).\nR(a, c, "red") :- R(a, b, "red"), E(b, c, "red").\n'
        "Self(a) :- R(a, a, _).\n"
    )
    facts = {"E": [(1, 2, "red"), (2, 3, "red"), (3, 1, "red"), (3, 4, "blue"), (4, 4, "blue")]}
    out = _both(program, facts)
    assert out["Self"] == [(1,), (2,), (3,), (4,)]
    assert (1, 4, "red") not in out["R"]


def test_functor_errors_surface_as_datalog_errors():
    program = parse_string(".decl A(s: symbol)\n.input A\n.decl B(n: number)\n.output B\nB(to_number(s)) :- A(s).\n")
    assert get_engine("seminaive").run(program, {"A": [("12",)]}) == {"B": [(12,)]}
    with pytest.raises(DatalogError, match="not a decimal integer"):
        get_engine("seminaive").run(program, {"A": [("x",)]})


def test_generated_code_reads_indexes_and_membership_tests():
    program = parse_string(FEATURES)
    text = rule_source(program.rules[4], "tagged")  # Tagged: E, Mark(a, k), Mark(b, k), !Mark(a, "hop")
    assert text.startswith("def tagged(rows, index, keys, delta, out):")
    assert "index['Mark:0']" in text and "not in" in text
    assert "rows['Mark']" in text  # Mark(b, k) with b and k bound: a membership test


EDGE = st.tuples(st.sampled_from("abcdef"), st.sampled_from("abcdef"))


@settings(max_examples=60, deadline=None)
@given(
    edges=st.lists(EDGE, max_size=14),
    weights=st.lists(st.tuples(st.sampled_from("abcdefz"), st.integers(-9, 9)), max_size=8),
    marks=st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from(["hop", "red", "blue"])), max_size=6),
)
def test_random_edbs_give_what_clingo_gives(edges, weights, marks):
    _both(parse_string(FEATURES), {"E": edges, "W": weights, "Mark": marks})
