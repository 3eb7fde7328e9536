"""Tests of the Datalog front end: grammar, AST, normalisation, checks and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.datalog import (
    Aggregate,
    Atom,
    BinOp,
    Call,
    Const,
    Constraint,
    DatalogError,
    Negation,
    Var,
    Wildcard,
    load_program,
    parse_string,
    read_decls,
    read_facts_dir,
    strata,
    to_souffle,
    write_facts_dir,
)
from analyzer.datalog.golden import find_cases, load_case_program
from analyzer.datalog.printer import souffle_rule

RULES = Path(__file__).parent / "rules"

DECLS = """
.decl A(x: number)
.decl B(x: number, y: symbol)
.decl C(y: symbol)
"""


def parse(text: str):
    return parse_string(DECLS + text, filename="t.dl")


def error_of(text: str) -> DatalogError:
    with pytest.raises(DatalogError) as info:
        parse(text)
    return info.value


# ---------------------------------------------------------------------------------------
# What parses, and into what


def test_declarations_types_io_and_doc_comments():
    program = parse_string(
        """
        .type Node <: symbol
        .type Id <: Node   // a subtype of a user type
        .type Size <: number
        /** A directed edge.
         *  Second line of the doc. */
        .decl Edge(src: Id, dst: Node)

        /** Not a doc: a blank line separates it from the declaration. */

        .decl Len(n: Node, size: Size)
        /* a plain comment is not a doc */
        .decl Done()
        .input Edge, Len
        .output Len
        .output Done
        """,
        filename="schema.dl",
    )
    edge = program.decls["Edge"]
    assert edge.columns == (("src", "Id"), ("dst", "Node"))
    assert edge.base_types == ("symbol", "symbol")
    assert edge.column_names == ("src", "dst")
    assert edge.arity == 2
    assert edge.doc == "A directed edge.\nSecond line of the doc."
    assert edge.source == "schema.dl"
    assert (edge.loc.file, edge.loc.line) == ("schema.dl", 7)
    assert program.decls["Len"].base_types == ("symbol", "number")
    assert program.decls["Len"].doc is None
    assert program.decls["Done"].doc is None and program.decls["Done"].arity == 0
    assert list(program.decls) == ["Edge", "Len", "Done"]
    assert program.inputs == ["Edge", "Len"]
    assert program.outputs == ["Len", "Done"]
    assert program.types["Id"].base == "symbol"


def test_facts_with_escapes_and_negative_numbers():
    program = parse('B(-3, "a \\"q\\" \\\\ b\\tc"). A(0). C("").')
    assert [(f.relation, f.values) for f in program.facts] == [
        ("B", (-3, 'a "q" \\ b\tc')),
        ("A", (0,)),
        ("C", ("",)),
    ]


def test_rule_body_constructs():
    program = parse("A(w) :- B(x, s), !C(s), x != 3, w = (x + 1) * 2 % 5 - -1, B(_, t), strlen(cat(s, t)) > 2.")
    (rule,) = program.rules
    assert rule.head == Atom("A", (Var("w"),))
    body = rule.body
    assert body[0] == Atom("B", (Var("x"), Var("s")))
    assert body[1] == Negation(Atom("C", (Var("s"),)))
    assert body[2] == Constraint("!=", Var("x"), Const(3))
    assert body[3] == Constraint(
        "=",
        Var("w"),
        BinOp("-", BinOp("%", BinOp("*", BinOp("+", Var("x"), Const(1)), Const(2)), Const(5)), Const(-1)),
    )
    assert body[4] == Atom("B", (Wildcard(), Var("t")))
    assert body[5] == Constraint(">", Call("strlen", (Call("cat", (Var("s"), Var("t"))),)), Const(2))


def test_lower_and_upper_case_variables_and_keywords_as_prefixes():
    program = parse("A(Count) :- B(Count, minimum), C(minimum).")
    assert program.rules[0].body[0] == Atom("B", (Var("Count"), Var("minimum")))


def test_reserved_words_are_fine_as_functors_strings_and_aggregates():
    program = parse('A(n) :- C(s), s != "count", n = strlen(cat(s, "as")) + count : { B(_, s) }.')
    *_, length, agg = program.rules[0].body
    assert agg.right.op == "count"
    assert length.right.left == Call("strlen", (Call("cat", (Var("s"), Const("as"))),))


def test_reserved_word_error_points_at_the_word_after_a_comment():
    err = error_of("// the count of rows\nA(x) :- B(x, count).")
    assert (err.line, err.col) == (6, 14) and "'count' is a reserved word" in err.message


def test_disjunction_and_multiple_heads_are_split():
    program = parse_string(
        """
        .decl P(x: number)
        .decl Q(x: number)
        .decl R(x: number)
        .decl S(x: number)
        R(x), S(x) :- P(x), x > 1 ; Q(x).
        """
    )
    rendered = [(r.head.relation, len(r.body)) for r in program.rules]
    assert rendered == [("R", 2), ("R", 1), ("S", 2), ("S", 1)]


def test_aggregates_are_normalised_to_var_equals_aggregate():
    program = parse(
        "A(n) :- C(s), n = count : { B(_, s) }.\n"
        "A(m) :- C(s), m = min x : B(x, s).\n"
        "A(max x : { B(x, _) }) :- C(_).\n"
        "A(k) :- C(s), k = 2 * sum x : { B(x, s), x > 0 } + 1.\n"
        "A(z) :- C(s), count : { B(_, s) } = z.\n"
    )
    r1, r2, r3, r4, r5 = program.rules
    agg = r1.body[1]
    assert agg == Constraint("=", Var("n"), Aggregate("count", None, (Atom("B", (Wildcard(), Var("s"))),)))
    assert r2.body[1].right == Aggregate("min", Var("x"), (Atom("B", (Var("x"), Var("s"))),))
    # An aggregate in the head is bound to a fresh variable first.
    assert r3.head == Atom("A", (Var("agg1"),))
    assert r3.body[-1] == Constraint(
        "=", Var("agg1"), Aggregate("max", Var("x"), (Atom("B", (Var("x"), Wildcard())),))
    )
    # ... and so is one inside arithmetic.
    assert r4.body[1] == Constraint("=", Var("k"), BinOp("+", BinOp("*", Const(2), Var("agg1")), Const(1)))
    assert isinstance(r4.body[2].right, Aggregate) and r4.body[2].right.op == "sum"
    # `agg = v` is turned around.
    assert r5.body[1] == Constraint("=", Var("z"), Aggregate("count", None, (Atom("B", (Wildcard(), Var("s"))),)))


def test_comments_are_ignored_everywhere():
    program = parse("A(x) :- /* inline */ B(x, _), // trailing\n x > 0. // end\n/* last */")
    assert len(program.rules) == 1 and len(program.rules[0].body) == 2


def test_include_is_relative_to_the_including_file_and_read_once(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "types.dl").write_text(".type Person <: symbol\n")
    (tmp_path / "lib" / "schema.dl").write_text('#include "types.dl"\n.decl Parent(p: Person, c: Person)\n')
    main = tmp_path / "main.dl"
    main.write_text('#include "lib/schema.dl"\n#include "lib/types.dl"\n.decl G(a: Person)\nG(a) :- Parent(a, _).\n')
    program = load_program([main, tmp_path / "lib" / "schema.dl"])
    assert set(program.decls) == {"Parent", "G"}
    assert [Path(f).name for f in program.files] == ["main.dl", "schema.dl", "types.dl"]


def test_load_program_accepts_directories_and_read_decls(tmp_path):
    (tmp_path / "a.dl").write_text(".decl X(n: number)\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.dl").write_text("/** Y's doc */\n.decl Y(s: symbol, n: number)\n")
    decls = read_decls([tmp_path])
    assert list(decls) == ["X", "Y"]
    assert decls["Y"].columns == (("s", "symbol"), ("n", "number"))
    assert decls["Y"].doc == "Y's doc"
    assert Path(decls["Y"].source).name == "b.dl"


def test_strata_order_dependencies_first():
    program = parse_string(
        """
        .decl E(a: number, b: number)
        .decl T(a: number, b: number)
        .decl N(a: number)
        T(a, b) :- E(a, b).
        T(a, c) :- T(a, b), E(b, c).
        N(a) :- E(a, _), !T(a, a).
        """
    )
    order = [name for comp in strata(program) for name in comp]
    assert order.index("E") < order.index("T") < order.index("N")


def test_printed_programs_parse_back_to_the_same_rules():
    for case in find_cases(RULES):
        program = load_case_program(case)
        text = to_souffle(program)
        again = parse_string(text)
        assert again.rules == [souffle_rule(r) for r in program.rules], case.name
        assert to_souffle(again) == text, case.name
        assert again.facts == program.facts, case.name
        assert {n: (d.columns, d.base_types, d.doc) for n, d in again.decls.items()} == {
            n: (d.columns, d.base_types, d.doc) for n, d in program.decls.items()
        }, case.name


def test_souffle_text_names_aggregate_wildcards_and_guards_divisions():
    program = parse(
        "A(n) :- C(s), n = sum x : { B(x, s), B(_, s), !C(_) }.\n"
        "A(q) :- B(x, _), q = 10 / x + x % 3.\n"
        "A(q) :- B(x, _), x != 0, q = 10 / x.\n"
    )
    assert to_souffle(program).splitlines()[-3:] == [
        "A(n) :- C(s), n = sum x : { B(x, s), B(_w1, s), !C(_) }.",
        "A(q) :- B(x, _), q = ((10 / x) + (x % 3)), x != 0.",
        "A(q) :- B(x, _), x != 0, q = (10 / x).",
    ]


def test_facts_dir_round_trip_and_rejections(tmp_path):
    decls = parse("").decls
    facts = {"B": [(1, "with space"), (-2, 'q"uote\\')], "C": [("ünï",)]}
    write_facts_dir(tmp_path, decls, facts)
    assert (tmp_path / "B.facts").read_text() == '1\twith space\n-2\tq"uote\\\n'
    assert read_facts_dir(tmp_path, decls) == facts
    with pytest.raises(DatalogError, match="tab or newline"):
        write_facts_dir(tmp_path, decls, {"C": [("a\tb",)]})
    with pytest.raises(DatalogError, match="expected an int"):
        write_facts_dir(tmp_path, decls, {"A": [("1",)]})
    with pytest.raises(DatalogError, match="no relation Z"):
        write_facts_dir(tmp_path, decls, {"Z": []})
    (tmp_path / "A.facts").write_text("x\n")
    with pytest.raises(DatalogError, match="not a number"):
        read_facts_dir(tmp_path, decls)


# ---------------------------------------------------------------------------------------
# Errors: one line, with file:line:col


def test_parse_error_has_location_and_one_line():
    err = error_of("A(x) :- B(x, y)\nA(1).")
    assert (err.file, err.line, err.col) == ("t.dl", 6, 1)
    assert "missing '.'" in err.message
    assert str(err).startswith("t.dl:6:1: parse error")
    assert "\n" not in str(err)


def test_parse_error_unexpected_token():
    err = error_of("A(x) :- B(x,, y).")
    assert "parse error: unexpected ','" in str(err)
    assert err.line == 5


def test_undeclared_relation():
    err = error_of("A(x) :- D(x).")
    assert err.message == "undeclared relation D"
    assert (err.line, err.col) == (5, 9)


def test_arity_mismatch():
    err = error_of("A(x) :- B(x).")
    assert "arity mismatch: B has 2 columns, used with 1" in err.message


def test_unsafe_head_variable():
    err = error_of("A(y) :- B(x, _).")
    assert "variable y in the head of A is not grounded" in err.message
    assert (err.line, err.col) == (5, 3)


def test_unsafe_variable_in_negation_and_comparison():
    assert "negated atom !C" in error_of("A(x) :- B(x, _), !C(s).").message
    assert "variable z in '<'" in error_of("A(x) :- B(x, _), x < z.").message


def test_unstratifiable_negation_names_the_cycle():
    err = parse_error_program(
        """
        .decl A(x: number)
        .decl P(x: number)
        .decl Q(x: number)
        P(x) :- A(x), !Q(x).
        Q(x) :- A(x), P(x).
        """
    )
    assert "not stratifiable" in err.message
    assert "P -> Q -> P" in err.message
    assert err.line == 5


def test_unstratifiable_aggregate():
    err = parse_error_program(
        """
        .decl A(x: number)
        .decl P(x: number)
        P(n) :- A(n), n = count : { P(_) }.
        """
    )
    assert "aggregate over P" in err.message and "P -> P" in err.message


def parse_error_program(text: str) -> DatalogError:
    with pytest.raises(DatalogError) as info:
        parse_string(text, filename="p.dl")
    return info.value


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("A(y) :- B(_, y).", "type mismatch: variable y"),
        ("A(x) :- B(x, y), y < 3.", "comparison < needs a number"),
        ('A(x) :- B(x, _), x = "s".', "type mismatch"),
        ("A(x) :- B(x, y), x = strlen(x).", "argument 1 of strlen needs a symbol"),
        ('A("s").', "type mismatch: column 1 (x) of A is a number"),
        ("A(3000000000).", "does not fit in 32 bits"),
        ("A(x).", "facts must be constants"),
        ("A(_) :- B(_, _).", "wildcard '_' in the head"),
        ("A(x) :- B(x, _), x = _ + 1.", "only allowed as an atom argument"),
        ("A(x) :- B(x, y), x = foo(y).", "unsupported construct: functor foo"),
        (".type T = A | B", "union/equivalence types"),
        ('.pragma "a" "b"', "unsupported directive '.pragma'"),
        ("#define X 1", "unsupported preprocessor directive '#define'"),
        (".decl Z(x: number) btree", "relation qualifier 'btree'"),
        ('.input A(IO=file, filename="a.csv")', ".input parameters"),
        (".output Z", ".output of undeclared relation Z"),
        (".decl A(y: symbol)", "relation A declared twice"),
        (".decl Z(x: Foo)", "unknown type 'Foo'"),
        ("A(1.5).", "float constants"),
        ("A(x) :- B(x, [1, 2]).", "records"),
        ('B(1, "a\\qb").', "unknown escape sequence"),
        ("A(n) :- n = count : { A(m), m = count : { A(_) } }.", "nested inside an aggregate"),
        ("A(n) :- C(s), n = count : { B(k, s), k < z }.", "inside the count aggregate is not grounded"),
        ('#include "nope.dl"', "#include: no such file"),
        # Soufflé's reserved words (its scanner's keyword tokens) as identifiers
        ("A(x) :- B(x, as).", "'as' is a reserved word in Soufflé and cannot be a variable name"),
        ("A(count) :- B(count, _).", "'count' is a reserved word in Soufflé and cannot be a variable name"),
        ("A(x) :- B(x, _), sum = x + 1.", "'sum' is a reserved word in Soufflé"),
        ("A(x) :- B(x, y), x = max - 1.", "'max' is a reserved word in Soufflé"),
        ('A(x) :- B(x, range), C(range).', "'range' is a reserved word in Soufflé"),
        (".decl Z(count: number)", "cannot be a column name; rename it (e.g. 'n_count' or 'cnt')"),
        (".decl ord(x: number)", "'ord' is a reserved word in Soufflé and cannot be a relation name"),
        ("A(x) :- B(x, _), !match(x).", "cannot be a relation name"),
        (".type true <: number", "cannot be a type name"),
    ],
)
def test_rejections(source, expected):
    err = error_of(source)
    assert expected in str(err)
    assert err.file == "t.dl" and err.line is not None
    assert "\n" not in str(err)


def test_datalog_error_is_a_value_error():
    assert issubclass(DatalogError, ValueError)


def test_missing_file():
    with pytest.raises(DatalogError, match="no such Datalog file"):
        load_program(["/nonexistent/x.dl"])
