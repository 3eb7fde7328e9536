"""Fuzzing every subcommand with bad and hostile input (generator and runner: ``scripts/fuzz.py``
and ``scripts/fuzz_commands.py``; the classes and the figures of the last run: docs/fuzzing.md).

``test_fuzz_every_command`` runs 1,200 generated inputs (mutated and truncated ONNX files,
cycles, absurd shapes, hostile strings, bad specs and YAML bombs, odd paths, FIFOs, devices and
links in every input role, reports aimed at inputs, mutated rule files and torch.fx dumps,
names that forge output) through ``check``, ``import-fx``, ``facts``, ``query`` and ``rules
test`` in worker processes with a per-input time limit, every 40th in a subprocess. Every input
must end in a report (exit 0/1) or one ``shardlog: error:`` line (exit 2): never a traceback,
an internal error (exit 70), a hang, a change to an input file, a control character on the
terminal, a second verdict line, a payload that ran, or a worker over 2 GiB. The hypothesis
tests below add ~1,000 inputs to the parsers in-process (YAML, Datalog, torch.fx, file names)
and to the escaping of names. The other tests pin each robustness fix the fuzzer found.
"""

from __future__ import annotations

import copy
import hashlib
import os
import sys
import time
from collections import Counter
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper

from analyzer.cli import main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz  # noqa: E402  (scripts/fuzz.py)

FUZZ_CASES = 1200
FUZZ_SEED = 20261121
CASE_TIMEOUT = 60.0  # seconds; the slowest generated input takes ~3 s on a quiet machine
SUBPROCESS_EVERY = 40


@pytest.mark.slow
def test_fuzz_every_command():
    cases = list(fuzz.generate(FUZZ_CASES, FUZZ_SEED))
    per_category = Counter(c.category for c in cases)
    assert len(cases) >= 1000
    assert set(per_category) == set(fuzz.CATEGORIES), per_category
    assert {c.command for c in cases} == {"check", "import-fx", "facts", "query", "rules test"}
    t0 = time.perf_counter()
    outcomes = fuzz.run_cases(cases, jobs=2, timeout=CASE_TIMEOUT, subprocess_every=SUBPROCESS_EVERY)
    seconds = time.perf_counter() - t0
    assert len(outcomes) == len(cases)
    failing = [(o.category, o.name[:100], fuzz.problems(o), (o.stderr or o.output)[:300]) for o in outcomes]
    failing = [f for f in failing if f[2]]
    assert not failing, f"{len(failing)} failing inputs, first ones:\n" + "\n".join(map(repr, failing[:10]))
    codes = Counter(o.exit_code for o in outcomes)
    assert codes[2] > 0 and codes[0] + codes[1] + codes[3] > 0, codes  # both reports and input errors were reached
    assert sum(o.subprocess for o in outcomes) >= FUZZ_CASES // SUBPROCESS_EVERY
    print(f"\nfuzz: {len(outcomes)} inputs in {seconds:.0f} s, exit codes {dict(codes)}, 0 failing")


# --------------------------------------------------------------------------- hypothesis: parsers in-process

_FAST = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_CONTROL = fuzz.CONTROL


@_FAST
@given(st.text(), st.integers(min_value=1, max_value=400))
def test_escape_gives_one_clean_line(text, limit):
    from analyzer.errors import escape

    shown = escape(text, limit)
    assert "\n" not in shown and "\r" not in shown and not _CONTROL.search(shown)
    assert len(shown) <= limit * 10 + 30  # each kept character is at most one \UXXXXXXXX escape


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True),
    st.text(max_size=30),
)
_YAML_DATA = st.recursive(
    _SCALARS,
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=30,
)


@_FAST
@given(_YAML_DATA, st.sampled_from(["yaml", "mutated", "aliased"]), st.randoms(use_true_random=False))
@pytest.mark.slow
def test_spec_loader_on_generated_yaml(data, how, rng):
    """Any YAML text (dumped from random data, then maybe cut or given aliases) loads or is one
    InputError; a spec built from it is a Spec or one InputError."""
    import yaml

    from analyzer.errors import InputError
    from analyzer.inputs.yaml_file import load_yaml_text

    text = yaml.safe_dump({"relations": data, "world_size": data}, allow_unicode=True)
    if how == "mutated" and text:
        i = rng.randrange(len(text))
        text = (
            text[:i] + rng.choice(["&a ", "*a", "[", "{", "!!python/object:os.system", "\x00", "- ", ": "]) + text[i:]
        )
    elif how == "aliased":
        text = (
            "base: &a " + yaml.safe_dump(data, default_flow_style=True).strip() + "\n" + text.replace(": ", ": *a #", 1)
        )
    t0 = time.perf_counter()
    try:
        load_yaml_text(text, "spec.yaml")
    except InputError as exc:
        assert "\n" not in str(exc)
    assert time.perf_counter() - t0 < 10


_DL_TOKENS = st.sampled_from(
    [
        ".decl",
        ".type",
        ".input",
        ".output",
        "#include",
        "A",
        "B",
        "Holds",
        "OutLayout",
        "x",
        "y",
        "_",
        "(",
        ")",
        ",",
        ".",
        ":-",
        "!",
        "=",
        "<",
        "+",
        "-",
        "*",
        "/",
        "%",
        "count",
        "sum",
        ":",
        "{",
        "}",
        "number",
        "symbol",
        '"s"',
        '"\\"',
        "1",
        "-1",
        "2147483648",
        "cat",
        "to_number",
        "\n",
        " ",
        "//",
        "/*",
        "*/",
        "\xff",
        "\x00",
    ]
)


@_FAST
@given(st.lists(_DL_TOKENS, max_size=60))
def test_datalog_parser_on_token_soup(tokens):
    """Any token soup is a program or one DatalogError (never another exception)."""
    from analyzer.datalog import DatalogError, parse_string

    text = " ".join(tokens)
    try:
        parse_string(text, filename="soup.dl")
    except DatalogError as exc:
        assert str(exc)


_FX_DUMP = __import__("fuzz_commands").FX_DUMP


@_FAST
@given(st.integers(min_value=0), st.text(max_size=40), st.sampled_from(["insert", "replace", "cut"]))
def test_fx_parser_on_mutated_dumps(at, text, how):
    """Any mutation of a dump parses or is one InputError naming the dump."""
    from analyzer.errors import InputError
    from analyzer.importers.fx.parse import parse_fx_text

    i = at % (len(_FX_DUMP) + 1)
    dump = {"insert": _FX_DUMP[:i] + text + _FX_DUMP[i:], "replace": _FX_DUMP[:i] + text + _FX_DUMP[i + len(text) :]}
    dump["cut"] = _FX_DUMP[:i]
    try:
        parse_fx_text(dump[how], "dump.py")
    except InputError as exc:
        assert str(exc).startswith("dump.py")


@_FAST
@given(name=st.binary(min_size=1, max_size=300), make=st.booleans())
def test_file_names_are_read_or_refused_in_one_line(name, make, tmp_path_factory):
    """Any byte string as a file name (made as a file or not) is read, or refused with one
    clean InputError line."""
    from analyzer.errors import InputError
    from analyzer.inputs.files import read_bytes

    folder = os.fsencode(tmp_path_factory.getbasetemp())
    path = os.path.join(folder, name.replace(b"/", b"_"))
    if make:
        try:
            with open(path, "wb") as fh:
                fh.write(b"x")
        except (OSError, ValueError):  # a NUL byte, a name over 255 bytes, "." or ".."
            pass
    try:
        assert read_bytes(os.fsdecode(path), "ONNX model") == b"x"
    except InputError as exc:
        assert "\n" not in str(exc) and not _CONTROL.search(str(exc))
    finally:
        if make and os.path.isfile(path):
            os.unlink(path)


# --------------------------------------------------------------------------- single regressions


def _check(tmp_path: Path, seq: bytes | onnx.ModelProto, rank: bytes | onnx.ModelProto, *extra: str):
    data = {
        "seq.onnx": seq if isinstance(seq, bytes) else seq.SerializeToString(),
        "rank.onnx": rank if isinstance(rank, bytes) else rank.SerializeToString(),
    }
    for name, content in data.items():
        (tmp_path / name).write_bytes(content)
    before = {n: hashlib.sha256((tmp_path / n).read_bytes()).hexdigest() for n in data}
    args = ["check", str(tmp_path / "seq.onnx"), str(tmp_path / "rank.onnx"), str(tmp_path / "rank.onnx"), *extra]
    result = CliRunner().invoke(main, [a.replace("{dir}", str(tmp_path)) for a in args])
    after = {n: hashlib.sha256((tmp_path / n).read_bytes()).hexdigest() for n in data}
    assert before == after
    out = fuzz.Outcome("single", "single", result.exit_code, result.output, result.stderr)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        out.exception = repr(result.exception)
    assert fuzz.problems(out) == [], (result.output, out.exception)
    return result.exit_code, (result.stderr or result.output).strip()


@pytest.fixture
def models():
    return fuzz.seed_models()


def test_seeds_verify_and_discrepancy(tmp_path, models):
    assert _check(tmp_path, models["seq"], models["rank"])[0] == 0
    assert _check(tmp_path, models["seq"], models["rank_bug"])[0] == 1


def test_non_utf8_node_name_is_an_input_error(tmp_path, models):
    seq = copy.deepcopy(models["seq"])
    seq.graph.node[1].name = "MARKERMARKER"
    data = fuzz._poison_bytes(seq.SerializeToString(), "MARKERMARKER", b"\xff\xfe")
    code, text = _check(tmp_path, data, models["rank"])
    assert code == 2 and "seq.onnx: malformed ONNX model: model.graph.node[1].name is not UTF-8" in text


def test_non_utf8_metadata_is_an_input_error(tmp_path, models):
    seq = copy.deepcopy(models["seq"])
    seq.producer_name = "MARKERMARKER"
    data = fuzz._poison_bytes(seq.SerializeToString(), "MARKERMARKER", b"\xc3\x28")
    code, text = _check(tmp_path, data, models["rank"])
    assert code == 2 and "model.producer_name is not UTF-8" in text


def test_nul_in_a_name_is_an_input_error(tmp_path, models):
    rank = copy.deepcopy(models["rank"])
    rank.graph.node[3].domain = "com.micro\x00soft"  # clingo strings end at NUL
    code, text = _check(tmp_path, models["seq"], rank)
    assert code == 2 and "contains a NUL character" in text and "rank.onnx" in text


def test_nul_in_metadata_and_string_attributes_still_gives_a_report(tmp_path, models):
    seq, rank = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank"])
    for m in (seq, rank):
        for n in m.graph.node:
            helper.set_metadata_props(n, {"pkg.torch.onnx.stack_trace": 'File "a\x00.py", line 3, in f\n  x\x00\n'})
            n.attribute.append(helper.make_attribute("note", "a\x00b"))
    assert _check(tmp_path, seq, rank)[0] in (0, 1)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.dims.__setitem__(0, -1), "has a negative dimension"),
        (lambda t: t.dims.extend([2**40]), "dimension over 2**31-1"),
        (lambda t: setattr(t, "data_type", 999), "has no known data type (999)"),
        (lambda t: t.dims.extend([3]), "cannot be read (cannot reshape"),
        (lambda t: (t.ClearField("float_data"), setattr(t, "raw_data", b"\x00" * 5)), "cannot be read"),
    ],
)
def test_malformed_initializer_is_an_input_error(tmp_path, models, mutate, message):
    seq = copy.deepcopy(models["seq"])
    mutate(next(i for i in seq.graph.initializer if i.name == "b"))
    code, text = _check(tmp_path, seq, models["rank"])
    assert code == 2 and "initializer 'b'" in text and message in text, text


@pytest.mark.parametrize("dim, message", [(-1, "negative dimension"), (2**40, "dimension over 2**31-1")])
def test_absurd_value_dims_are_input_errors(tmp_path, models, dim, message):
    seq = copy.deepcopy(models["seq"])
    seq.graph.input[0].type.tensor_type.shape.dim[0].dim_value = dim
    code, text = _check(tmp_path, seq, models["rank"], "--numeric")
    assert code == 2 and f"value 'x' has a {message}" in text


def test_zero_and_symbolic_dims_give_a_report(tmp_path, models):
    seq, rank = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank"])
    for m in (seq, rank):
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 0
        m.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "N\t'\""
    assert _check(tmp_path, seq, rank)[0] in (0, 1)


def test_matmul_without_outputs_does_not_break_the_canonical_form(tmp_path, models):
    rank = copy.deepcopy(models["rank"])
    del rank.graph.node[0].output[:]
    assert _check(tmp_path, models["seq"], rank)[0] in (0, 1, 2)


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, "-" * 100_000 + "1", "x" * 200_000, "(" * 300 + ")" * 300])
def test_hostile_name_scopes_are_ignored(tmp_path, models, text):
    seq, rank = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank"])
    for m in (seq, rank):
        for n in m.graph.node:
            helper.set_metadata_props(n, {"pkg.torch.onnx.name_scopes": text})
    assert _check(tmp_path, seq, rank)[0] == 0


def test_huge_line_number_in_a_stack_trace_is_dropped(tmp_path, models):
    seq = copy.deepcopy(models["seq"])
    trace = 'File "m.py", line 99999999999, in f\n'
    helper.set_metadata_props(seq.graph.node[0], {"pkg.torch.onnx.stack_trace": trace})
    assert _check(tmp_path, seq, models["rank"])[0] == 0


@pytest.mark.parametrize(
    "spec, message",
    [
        ("relations: " + "[" * 5000 + "]" * 5000 + "\n", "not a valid YAML spec (nested too deeply)"),
        ("relations: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "not a valid YAML spec (nested too deeply)"),
        ("relations:\n  w1: {shard: 1, sections: [true, true]}\n", "sections: expected a list of positive"),
        ("relations:\n  w1: {shard: 7}\n", "'w1' has 2 dimensions, so it has no axis 7 to shard"),
        (f"relations:\n  w1: {{shard: {2**40}}}\n", "shard: expected a non-negative axis"),
        ("relations:\n  w1: {shard: 1, sections: [3, 5]}\n", "sections [3, 5] add up to 8, but axis 1 has size 16"),
        ("relations:\n  w1: {shard: 1, sections: [5, 11]}\n", "every section must split into 2 equal chunks"),
        ('relations: {"a\\nb": replicate}\n', "'a\\nb' is not a value of the sequential graph"),
    ],
)
def test_bad_specs_are_input_errors(tmp_path, models, spec, message):
    (tmp_path / "spec.yaml").write_text(spec)
    code, text = _check(tmp_path, models["seq"], models["rank"], "--relations", "{dir}/spec.yaml")
    assert code == 2 and message in text, text


def test_write_section_keeps_the_other_sections(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\n| a |\n\n## Fuzzing\n\nold\n\n## Later\n\nkept\n")
    fuzz.write_section(path, "## Fuzzing\n\nnew\n")
    text = path.read_text()
    assert "new" in text and "old" not in text and "## Later\n\nkept" in text and text.startswith("# Benchmarks")
    path.write_text("# Benchmarks\n\n| a |\n")
    fuzz.write_section(path, "## Fuzzing\n\nnew\n")
    assert path.read_text() == "# Benchmarks\n\n| a |\n\n## Fuzzing\n\nnew\n"


def test_generator_is_deterministic():
    a = [(c.category, c.name, c.files, c.args) for c in fuzz.generate(60, 5)]
    b = [(c.category, c.name, c.files, c.args) for c in fuzz.generate(60, 5)]
    assert a == b


# --------------------------------------------------------------------------- found outside the front door


def _usage(tmp_path, models, *args):
    (tmp_path / "seq.onnx").write_bytes(models["seq"].SerializeToString())
    result = CliRunner().invoke(main, ["check", *(a.replace("{dir}", str(tmp_path)) for a in args)])
    return result.exit_code, (result.stderr or result.output).strip()


@pytest.mark.parametrize(
    "args",
    [
        ["{dir}/seq.onnx"],
        ["{dir}/seq.onnx", "{dir}"],
        ["{dir}/seq.onnx", "{dir}/seq.onnx", "--engine", "prolog"],
        ["{dir}/seq.onnx", "{dir}/seq.onnx", "--out", "{dir}/seq.onnx"],
    ],
)
def test_usage_errors_are_one_line(tmp_path, models, args):
    code, text = _usage(tmp_path, models, *args)
    assert code == 2 and len(text.splitlines()) == 1 and text.startswith("shardlog: error:"), text


def test_unwritable_json_path_is_an_input_error(tmp_path, models):
    code, text = _usage(tmp_path, models, "{dir}/seq.onnx", "{dir}/seq.onnx", "--json", "{dir}/no/such/r.json")
    assert code == 2 and text.startswith("shardlog: error:"), text


def test_json_over_an_input_file_is_refused(tmp_path, models):
    before = models["seq"].SerializeToString()
    code, _ = _usage(tmp_path, models, "{dir}/seq.onnx", "{dir}/seq.onnx", "--json", "{dir}/seq.onnx")
    assert (tmp_path / "seq.onnx").read_bytes() == before and code == 2


def _witness_cannot_run(tmp_path, models, *args):
    """A numeric witness that cannot run leaves the check's own exit code and says why in one line
    of its report (issue 22: it never turns a verdict into an input error)."""
    plain, _ = _usage(tmp_path, models, *args)
    result = CliRunner().invoke(main, ["check", *(a.replace("{dir}", str(tmp_path)) for a in args), "--numeric"])
    assert plain in (0, 1) and result.exit_code == plain, result.output
    lines = [line for line in result.output.splitlines() if "numeric witness could not run:" in line]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_numeric_witness_on_a_huge_input_keeps_the_verdict(tmp_path, models):
    seq = copy.deepcopy(models["seq"])
    for d in seq.graph.input[0].type.tensor_type.shape.dim:
        d.dim_value = 2**20
    (tmp_path / "big.onnx").write_bytes(seq.SerializeToString())
    line = _witness_cannot_run(tmp_path, models, "{dir}/big.onnx", "{dir}/big.onnx")
    assert "do not fit in memory" in line or "cannot be run" in line, line


def test_numeric_witness_on_recursive_local_function_keeps_the_verdict(tmp_path, models):
    rank = copy.deepcopy(models["rank"])
    body = [helper.make_node("F", ["a"], ["b"], domain="com.evil")]
    rank.functions.append(helper.make_function("com.evil", "F", ["a"], ["b"], body, []))
    rank.opset_import.add(domain="com.evil", version=1)
    rank.graph.node[1].CopyFrom(helper.make_node("F", ["h"], ["a"], domain="com.evil"))
    (tmp_path / "rank.onnx").write_bytes(rank.SerializeToString())
    line = _witness_cannot_run(tmp_path, models, "{dir}/seq.onnx", "{dir}/rank.onnx", "{dir}/rank.onnx")
    assert "RecursionError" in line or "recurs" in line.lower(), line
