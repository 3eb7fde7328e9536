"""Hostile and broken input (issue 20): each failure the campaign found, reproduced.

Every bad input ends in one ``shardlog: error:`` line and exit code 2, in bounded time and
memory; inputs are never overwritten; names cannot forge terminal output, SARIF locations or
a verdict; a user rule cannot certify a bug. Inputs that could hang a process (FIFOs,
devices, runaway rules, YAML bombs) run in a subprocess with a time limit.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner
from onnx import helper

from analyzer.cli import main
from analyzer.errors import INTERNAL_ERROR_EXIT, escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz  # noqa: E402  (scripts/fuzz.py: the seed graphs)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def files(tmp_path):
    """seq.onnx, rank.onnx (with all-reduce) and bug.onnx (without) in tmp_path."""
    models = fuzz.seed_models()
    (tmp_path / "seq.onnx").write_bytes(models["seq"].SerializeToString())
    (tmp_path / "rank.onnx").write_bytes(models["rank"].SerializeToString())
    (tmp_path / "bug.onnx").write_bytes(models["rank_bug"].SerializeToString())
    return tmp_path


def _run(args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _sub(args, timeout=120, env=None):
    """Run the CLI in a subprocess (for inputs that could hang the test process)."""
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    return proc.returncode, proc.stdout, proc.stderr


def _error(outcome, *needles):
    """The one error line of an exit-2 outcome (checked: one line, the prefix, no control
    characters, every needle in it)."""
    code, out, err = outcome
    assert code == 2, (code, out, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("shardlog: error: "), err
    assert not _CONTROL.search(err), err
    assert "Traceback" not in out + err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _check(files, *extra):
    return ["check", files / "seq.onnx", files / "rank.onnx", files / "rank.onnx", *extra]


# --------------------------------------------------------------------------- one error path


def test_yaml_integer_of_4301_digits(files):
    (files / "spec.yaml").write_text("relations:\n  w1: {shard: " + "1" * 4301 + "}\n")
    _error(_run(_check(files, "--relations", files / "spec.yaml")), "spec.yaml", "4,300 digits")


def test_yaml_long_integer_is_shown_cut(files):
    (files / "spec.yaml").write_text("world_size: " + "9" * 4000 + "\n")
    line = _error(_run(_check(files, "--relations", files / "spec.yaml")), "world_size")
    assert len(line) < 400


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="no /proc")
def test_proc_file_is_refused(files):
    _error(_run(["check", "/proc/self/mem", files / "rank.onnx", files / "rank.onnx"]), "/proc/self/mem", "/proc")


def test_symlink_loop(files):
    os.symlink(files / "loop.onnx", files / "loop.onnx")
    _error(_run(_check(files)[:1] + [files / "loop.onnx", files / "rank.onnx"]), "symbolic links")


def test_dangling_link(files):
    os.symlink(files / "gone.onnx", files / "dangling.onnx")
    _error(_run(["check", files / "dangling.onnx", files / "rank.onnx"]), "dangling symbolic link")


def test_name_over_255_bytes(files):
    _error(_run(["check", files / ("a" * 300 + ".onnx"), files / "rank.onnx"]), "file name too long")


def test_unreadable_rules_folder(files, monkeypatch):
    """We run as root in CI (chmod cannot make a folder unreadable): the listing fails as it
    would for a user without the permission."""
    (files / "rules" / "sub").mkdir(parents=True)
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    _error(_run(_check(files, "--rules", files / "rules")), "sub", "permission denied")


def test_unreadable_model_file(files, monkeypatch):
    real = os.open

    def fake_open(path, flags, *args, **kwargs):
        if str(path).endswith("seq.onnx"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    _error(_run(_check(files)), "seq.onnx", "permission denied")


def test_non_utf8_file_name_with_html_writes_whole_reports(files):
    name = os.fsdecode(b"r\xff\x1b[2J")
    os.link(files / "seq.onnx", files / f"{name}.onnx")
    args = ["check", files / f"{name}.onnx", files / "bug.onnx", files / "bug.onnx"]
    code, out, err = _run([*args, "--json", files / "r.json", "--html", files / f"{name}.html"])
    assert code == 1, err
    assert json.loads((files / "r.json").read_text())["verdict"] == "discrepancy"
    html = (files / f"{name}.html").read_bytes()
    assert html.rstrip().endswith(b"</html>") and b"\x1b" not in html
    assert not _CONTROL.search(out + err)
    assert not [p for p in files.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["folder", "dangling", "dev_zero", "fifo"])
def test_bad_rule_file(files, kind):
    rules = files / "rules"
    rules.mkdir()
    target = rules / "x.dl"
    if kind == "folder":
        target.mkdir()
    elif kind == "dangling":
        os.symlink(rules / "gone.dl", target)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", target)
    else:
        os.mkfifo(target)
    _error(_sub(_check(files, "--rules", rules), timeout=120), "x.dl")


def test_unreadable_rule_file(files, monkeypatch):
    (files / "rules").mkdir()
    (files / "rules" / "x.dl").write_text(".decl Mine(n: symbol)\n")
    real = os.open

    def fake_open(path, flags, *args, **kwargs):
        if str(path).endswith("x.dl"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    _error(_run(_check(files, "--rules", files / "rules")), "x.dl", "permission denied")


def test_deep_expression_in_a_rule(files):
    (files / "rules").mkdir()
    terms = "+".join(["1"] * 900)
    (files / "rules" / "deep.dl").write_text(f'.decl Deep(x: number)\nDeep({terms}) :- Node("seq", _, _, _, _).\n')
    _error(_run(_check(files, "--rules", files / "rules")), "deep.dl:2:", "nested too deeply")


_FX_HEAD = 'class GraphModule(torch.nn.Module):\n    def forward(self, x: "f32[4]"):\n'


@pytest.mark.parametrize("expr", ["+".join(["1"] * 900), "-" * 5000 + "1", "a." * 5000 + "b"])
def test_deep_expression_in_an_fx_dump(files, expr):
    dump = files / "deep.py"
    dump.write_text(_FX_HEAD + f'        add: "f32[4]" = torch.ops.aten.add.Tensor(x, {expr})\n        return (add,)\n')
    _error(_run(["import-fx", dump, "-o", files / "o.onnx"]), "deep.py:", "nested too deeply")
    assert not (files / "o.onnx").exists()


_FX_CONSTANT = (
    _FX_HEAD.replace('x: "f32[4]"', 'x: "i64[4]"')
    + "        _tensor_constant0 = self._tensor_constant0\n"
    + '        lift_fresh_copy: "i64[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)\n'
    + '        add: "i64[4]" = torch.ops.aten.add.Tensor(x, lift_fresh_copy)\n'
    + "        return (add,)\n"
)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e30", "1.5"])
def test_constant_that_does_not_fit_its_dtype(files, value):
    (files / "c.py").write_text(_FX_CONSTANT)
    args = ["import-fx", files / "c.py", "-o", files / "o.onnx", "--constant", f"_tensor_constant0={value}"]
    _error(_run(args), "_tensor_constant0", "i64")
    assert _run([*args[:-1], "_tensor_constant0=3"])[0] == 0


def _golden_case(files, facts: bytes, listing: str | None = None) -> Path:
    case = files / "golden" / "case"
    (case / "facts").mkdir(parents=True)
    (case / "expected").mkdir()
    (case / "program.dl").write_text(".decl E(x: symbol)\n.input E\n.decl F(x: symbol)\n.output F\nF(x) :- E(x).\n")
    (case / "facts" / "E.facts").write_bytes(facts)
    if listing is not None:
        (case / "program.txt").write_text(listing)
    return case.parent


def test_rules_test_on_non_utf8_facts(files):
    _error(_run(["rules", "test", _golden_case(files, b"a\xff\n"), "--engine", "seminaive"]), "E.facts", "UTF-8")


def test_rules_test_with_an_absolute_glob(files):
    folder = _golden_case(files, b"a\n", listing=f"{ROOT}/rules/core/*.dl\n")
    _error(_run(["rules", "test", folder, "--engine", "seminaive"]), "program.txt:1", "absolute path")


def test_rules_test_on_a_fifo_facts_file(files):
    folder = _golden_case(files, b"a\n")
    fifo = folder / "case" / "facts" / "E.facts"
    fifo.unlink()
    os.mkfifo(fifo)
    _error(_sub(["rules", "test", folder, "--engine", "seminaive"], timeout=60), "E.facts", "FIFO")


def test_facts_out_onto_a_file(files):
    (files / "taken").write_text("mine\n")
    _error(_run(["facts", files / "seq.onnx", "--out", files / "taken"]), "taken")
    assert (files / "taken").read_text() == "mine\n"


def test_query_on_a_malformed_csv(files):
    (files / "out").mkdir()
    (files / "out" / "Holds.csv").write_bytes(b's\tkind\n"a\tb\n\x00\xff')
    _error(_run(["query", files / "out", "Holds"]), "Holds.csv")


def test_internal_error_has_its_own_code(files, monkeypatch):
    import analyzer.api

    def broken(*args, **kwargs):
        raise KeyError("a bug of ours")

    monkeypatch.setattr(analyzer.api, "check", broken)
    code, out, err = _run(_check(files))
    assert code == INTERNAL_ERROR_EXIT == 70
    assert err.startswith("shardlog: internal error: KeyError") and "report" in err and len(err.splitlines()) == 1
    monkeypatch.setenv("SHARDLOG_DEBUG", "1")
    code, out, err = _run(_check(files))
    assert code == 70 and "Traceback" in err and "a bug of ours" in err


# --------------------------------------------------------------------------- bounded work


def test_billion_laughs_spec(files):
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    (files / "spec.yaml").write_text("\n".join(levels) + "\nrelations: {}\n")
    _error(_sub(_check(files, "--relations", files / "spec.yaml"), timeout=60), "aliases expanded")


def test_recursive_yaml_alias(files):
    (files / "spec.yaml").write_text("relations: &r {x: *r}\n")
    _error(_run(_check(files, "--relations", files / "spec.yaml")), "alias")


def test_large_spec_is_refused_before_it_is_parsed(files):
    (files / "spec.yaml").write_text("relations:\n" + "".join(f"  v{i}: {{shard: 0}}\n" for i in range(200_000)))
    assert (files / "spec.yaml").stat().st_size > 4_000_000
    _error(_sub(_check(files, "--relations", files / "spec.yaml"), timeout=60), "over the limit")


@pytest.mark.parametrize("device", ["/dev/urandom", "/dev/zero"])
def test_device_as_a_model(files, device):
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    _error(_sub(["check", device, files / "rank.onnx"], timeout=60), device, "character device")


def test_fifo_as_a_model_or_spec(files):
    os.mkfifo(files / "fifo")
    _error(_sub(["check", files / "fifo", files / "rank.onnx"], timeout=60), "FIFO")
    _error(_sub(_check(files, "--relations", files / "fifo"), timeout=60), "FIFO")


@pytest.mark.parametrize(
    "rule, relation",
    [
        ('Holds(cat(s, "x"), k, a, p) :- Holds(s, k, a, p).\n', "Holds"),
        (
            '.decl Num(x: number)\nNum(0) :- Node("seq", _, _, _, _).\nNum(x + 1) :- Num(x).\n'
            'OutLayout(n, r, m, 0, "Shard", x, "") :- Num(x), Pair(n, r, m), x < 0.\n',
            "Num",
        ),
    ],
)
def test_runaway_rule_stops_naming_the_rule(files, rule, relation):
    """A rule building new values from derived ones stops at the engine's limits. (The Holds rule
    is refused by the trust boundary for --rules files; here it is given to the engine
    directly, as a rule file of the library would be.)"""
    import resource
    import time

    from analyzer.datalog import parse_string
    from analyzer.engines.seminaive_engine import DerivationLimit, SemiNaiveEngine

    schema = (ROOT / "schemas" / "relations.dl").read_text() + (ROOT / "schemas" / "facts.dl").read_text()
    schema += (ROOT / "schemas" / "layouts.dl").read_text() + (ROOT / "schemas" / "inputs.dl").read_text()
    program = parse_string(schema + rule, filename="user.dl")
    facts = {"Holds": [("y", "Replicate", -1, "")], "Node": [("seq", "n0", "Relu", "", "")]}
    facts["Pair"] = [("n0", 0, "m0")]
    engine = SemiNaiveEngine()
    engine.prune = False
    t0, rss0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DerivationLimit, match=f"rule deriving {relation}") as info:
        engine.run(program, facts)
    assert "user.dl:" in str(info.value) and time.perf_counter() - t0 < 120
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 1_500_000  # KiB


@pytest.mark.slow
def test_runaway_user_rule_through_the_cli(files):
    """End to end: a --rules file whose recursion builds new numbers forever ends in one line
    naming its file and line, within a time limit."""
    (files / "rules").mkdir()
    (files / "rules" / "num.dl").write_text(
        '.decl Num(x: number)\nNum(0) :- Node("seq", _, _, _, _).\nNum(x + 1) :- Num(x).\n'
        'OutLayout(n, r, m, 0, "Shard", x, "") :- Num(x), Pair(n, r, m), x < 0.\n'
    )
    _error(_sub(_check(files, "--rules", files / "rules"), timeout=180), "num.dl:3:", "derivation stopped")


def test_import_fx_repeated_outputs_are_deduplicated(files):
    (files / "c.py").write_text(_FX_CONSTANT)
    positions = ",".join(["0"] * 200_000)
    code, out, err = _run(["import-fx", files / "c.py", "-o", files / "o.onnx", "--outputs", positions])
    assert code == 0, err
    assert len(onnx.load(str(files / "o.onnx")).graph.output) == 1


# --------------------------------------------------------------------------- nothing overwritten


def test_json_onto_the_replica_seq_of_a_mesh_spec(files):
    (files / "mesh.yaml").write_text("mesh: {dp: 2, tp: 2}\nreplica_seq: seq.onnx\nrelations: {}\n")
    before = _digest(files)
    args = ["check", files / "seq.onnx", *[files / "rank.onnx"] * 4, "--relations", files / "mesh.yaml"]
    _error(_run([*args, "--json", files / "seq.onnx"]), "seq.onnx", "refusing to overwrite")
    os.link(files / "seq.onnx", files / "replica.onnx")
    (files / "mesh.yaml").write_text("mesh: {dp: 2, tp: 2}\nreplica_seq: replica.onnx\nrelations: {}\n")
    _error(_run([*args, "--sarif", files / "replica.onnx"]), "replica.onnx", "refusing to overwrite")
    assert _digest(files) == {**before, str(files / "replica.onnx"): before[str(files / "seq.onnx")]} | {
        str(files / "mesh.yaml"): _digest(files)[str(files / "mesh.yaml")]
    }


@pytest.mark.parametrize("option", ["--json", "--html", "--sarif"])
def test_report_onto_a_hard_link_of_an_input(files, option):
    os.link(files / "rank.onnx", files / "link.onnx")
    before = _digest(files)
    _error(_run(_check(files, option, files / "link.onnx")), "link.onnx", "refusing to overwrite")
    assert _digest(files) == before


def test_report_onto_a_symlink_of_a_rule_file(files):
    (files / "rules").mkdir()
    (files / "rules" / "mine.dl").write_text(".decl Mine(n: symbol)\n")
    os.symlink(files / "rules" / "mine.dl", files / "r.json")
    _error(_run(_check(files, "--rules", files / "rules", "--json", files / "r.json")), "refusing to overwrite")
    assert (files / "rules" / "mine.dl").read_text() == ".decl Mine(n: symbol)\n"


def test_tables_onto_an_input(files):
    (files / "out").mkdir()
    os.link(files / "rank.onnx", files / "out" / "Holds.csv")
    before = _digest(files)
    _error(_run(_check(files, "--out", files / "out")), "Holds.csv", "refusing to overwrite")
    assert _digest(files) == before


def test_import_fx_onto_a_hard_link_of_its_dump(files):
    (files / "c.py").write_text(_FX_CONSTANT)
    os.link(files / "c.py", files / "c.onnx")
    _error(_run(["import-fx", files / "c.py", "-o", files / "c.onnx"]), "c.onnx", "refusing to overwrite")
    assert (files / "c.py").read_text() == _FX_CONSTANT


def test_two_reports_on_one_file(files):
    _error(_run(_check(files, "--json", files / "r", "--html", files / "r")), "--json and --html")


def test_failed_report_leaves_no_file(files, monkeypatch):
    import analyzer.reports.sarif

    def broken(result):
        raise UnicodeEncodeError("utf-8", "x", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(analyzer.reports.sarif, "sarif_text", broken)
    (files / "r.json").write_text("old\n")
    outcome = _run(_check(files, "--json", files / "r.json", "--sarif", files / "r.sarif"))
    assert outcome[0] == 2
    assert (files / "r.json").read_text() == "old\n" and not (files / "r.sarif").exists()
    assert not [p for p in files.iterdir() if p.name.endswith(".tmp")]


def test_json_to_stdout(files):
    code, out, err = _run(_check(files, "--json", "-"))
    assert code == 0 and json.loads(out)["verdict"] == "verified"
    assert err.strip().splitlines()[-1].startswith("verified")
    assert not (files / "-").exists()


# --------------------------------------------------------------------------- nothing forged


def _renamed(model: onnx.ModelProto, node_name: str | None = None, output: str | None = None) -> bytes:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    if node_name is not None:
        for i, n in enumerate(model.graph.node):
            n.name = f"{node_name}{i}"
    if output is not None:
        fuzz._rename_value([model], "y", output)
    return model.SerializeToString()


ESC_NAME = "\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\u202eevil\x9b31m"


def test_escape_sequences_in_names_are_escaped(files):
    models = fuzz.seed_models()
    (files / "seq.onnx").write_bytes(_renamed(models["seq"], ESC_NAME, ESC_NAME))
    (files / "bug.onnx").write_bytes(_renamed(models["rank_bug"], ESC_NAME, ESC_NAME))
    code, out, err = _run(["check", files / "seq.onnx", files / "bug.onnx", files / "bug.onnx", "-v", "--explain"])
    assert code == 1
    assert not _CONTROL.search(out + err), out
    assert "\\x1b]0;pwned\\x07" in out and "\\u202eevil" in out


def test_newlines_in_a_name_cannot_print_a_verdict(files):
    models = fuzz.seed_models()
    fake = "\n\nverified (world size 2, engine seminaive, 0.01 s)\n"
    (files / "seq.onnx").write_bytes(_renamed(models["seq"], fake, fake))
    (files / "bug.onnx").write_bytes(_renamed(models["rank_bug"], fake, fake))
    code, out, _ = _run(["check", files / "seq.onnx", files / "bug.onnx", files / "bug.onnx", "-v"])
    assert code == 1
    verdicts = [line for line in out.splitlines() if line.startswith(("verified", "discrepancy ("))]
    assert len(verdicts) == 1 and verdicts[0].startswith("discrepancy (") and out.rstrip().endswith(verdicts[0])


@pytest.mark.parametrize("frame", ["../../etc/passwd", "a/../../../etc/passwd", "..", "/a/../../etc/passwd"])
def test_sarif_uris_stay_under_their_base(files, frame):
    models = fuzz.seed_models()
    seq, bug = (onnx.ModelProto.FromString(m.SerializeToString()) for m in (models["seq"], models["rank_bug"]))
    for m in (seq, bug):
        for n in m.graph.node:
            helper.set_metadata_props(n, {"pkg.torch.onnx.stack_trace": f'File "{frame}", line 3, in f\n  x\n'})
    (files / "seq.onnx").write_bytes(seq.SerializeToString())
    (files / "bug.onnx").write_bytes(bug.SerializeToString())
    code, _, err = _run(["check", files / "seq.onnx", files / "bug.onnx", files / "bug.onnx", "--sarif", files / "s"])
    assert code == 1, err
    uris = re.findall(r'"uri": "([^"]*)"', (files / "s").read_text())
    assert uris
    for uri in uris:
        assert ".." not in uri.split("/"), uri
        assert not uri.startswith("file:") or uri == "file:///etc/passwd" or "onnx" in uri, uri


def test_query_is_confined_to_its_folder(files):
    (files / "q").mkdir()
    (files / "secret.csv").write_text("password\nhunter2\n")
    outcome = _run(["query", f"{files}/q2/../q", "../secret"])
    line = _error(outcome, "not a relation name")
    assert "hunter2" not in line


def test_query_output_is_escaped(files):
    (files / "out").mkdir()
    (files / "out" / "Holds.csv").write_text("s\tkind\n\x1b]0;x\x07\tReplicate\n")
    code, out, err = _run(["query", files / "out", "Holds"])
    assert code == 0 and "\\x1b]0;x\\x07" in out and not _CONTROL.search(out)


def test_escape_helper():
    assert escape("a\nb\x1b[31m\u202e\x9b") == "a\\nb\\x1b[31m\\u202e\\x9b"
    assert escape(os.fsdecode(b"f\xff.onnx")) == "f\\xff.onnx"
    assert escape("x" * 1000, 10) == "x" * 10 + "...(1000 chars)"
    assert escape("é 日本 \\n") == "é 日本 \\n"


# --------------------------------------------------------------------------- user rules


def test_user_rule_cannot_certify_a_bug(files):
    args = ["check", files / "seq.onnx", files / "bug.onnx", files / "bug.onnx"]
    assert _run(args)[0] == 1
    (files / "rules").mkdir()
    rule = 'OutputRelation(s, "Replicate", -1, "") :- GraphOutput("seq", s, _).'
    (files / "rules" / "cert.dl").write_text(f"// mine\n{rule}\n")
    _error(_run([*args, "--rules", files / "rules"]), "cert.dl:2:", "cannot derive OutputRelation")


@pytest.mark.parametrize(
    "clause, relation",
    [
        ('Hint("n", "missing-allreduce").', "Hint"),
        ('Holds(s, "Replicate", -1, "") :- GraphOutput("seq", s, _).', "Holds"),
        ('Frontier(n, 0, s) :- Node_Output("seq", n, 0, s).', "Frontier"),
        ("Check_CollectiveCount(0, 1) :- WorldSize(2).", "Check_CollectiveCount"),
        ('GraphOutput("seq", "y", 0).', "GraphOutput"),
        ('Pair(n, 0, n) :- Node("seq", n, _, _, _).', "Pair"),
    ],
)
def test_user_rules_cannot_derive_core_relations(files, clause, relation):
    (files / "rules").mkdir()
    (files / "rules" / "x.dl").write_text(clause + "\n")
    _error(_run(_check(files, "--rules", files / "rules")), "x.dl:1:", f"cannot derive {relation}")


def test_user_transfer_rule_is_accepted(files):
    (files / "rules").mkdir()
    (files / "rules" / "ok.dl").write_text(
        ".decl MyRelu(n: NodeId)\n"
        'MyRelu(n) :- Node("seq", n, "Relu", _, _).\n'
        'OutLayout(n, r, m, 0, "Shard", a, p) :- MyRelu(n), InPiece(n, r, m, 0, "Shard", a, p).\n'
        'KnownOp("MyRelu", "", "ok.dl").\n'
    )
    assert _run(_check(files, "--rules", files / "rules"))[0] == 0
