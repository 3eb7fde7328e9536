"""Commands that cannot pass vacuously: ``rules test`` on an engine that ran nothing, the golden
workflow outside a source checkout (``--update-expected``), ``facts`` into a folder that holds
tables already."""

from __future__ import annotations

from click.testing import CliRunner
from conftest import EXAMPLES

from analyzer.cli import main

PROGRAM = ".decl E(x: number)\n.input E\n.decl F(x: number)\n.output F\nF(x) :- E(x), x > 1.\n"


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _one_line(code, out):
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1 and "Traceback" not in out, out
    return out.strip()


def _case(root, name="c", rows="1\n2\n3\n"):
    case = root / name
    (case / "facts").mkdir(parents=True)
    (case / "program.dl").write_text(PROGRAM)
    (case / "facts" / "E.facts").write_text(rows)
    return case


def test_an_engine_that_cannot_run_here_is_an_error_not_a_pass(tmp_path, monkeypatch):
    from analyzer.engines import ENGINES

    monkeypatch.setattr(ENGINES["clingo"], "unavailable_reason", classmethod(lambda cls: "clingo is not installed"))
    _case(tmp_path)
    text = _one_line(*_run("rules", "test", tmp_path, "--engine", "clingo"))
    assert text == "shardlog: error: engine clingo cannot run here: clingo is not installed"


def test_an_unknown_engine_is_a_usage_error(tmp_path):
    _case(tmp_path)
    text = _one_line(*_run("rules", "test", tmp_path, "--engine", "datomic"))
    assert "'datomic' is not one of 'seminaive', 'clingo'" in text


def test_an_engine_that_skipped_every_case_is_an_error(tmp_path, monkeypatch):
    import analyzer.datalog.golden as golden
    from analyzer.engines import EngineUnavailable

    def cannot(case, engine, **kwargs):
        raise EngineUnavailable(f"{engine.name} cannot evaluate this program")

    monkeypatch.setattr(golden, "run_golden_case", cannot)
    _case(tmp_path)
    code, out = _run("rules", "test", tmp_path, "--engine", "seminaive")
    assert code == 2 and "no case ran on engine seminaive (skipped c: seminaive cannot evaluate" in out
    assert "all cases pass" not in out


def test_update_expected_then_compare_then_a_change_fails(tmp_path):
    case = _case(tmp_path)
    code, out = _run("rules", "test", tmp_path, "--engine", "seminaive", "--update-expected")
    assert code == 0 and "wrote the expected tables of 1 case(s)" in out, out
    assert (case / "expected" / "F.csv").read_text().split() == ["2", "3"]
    code, out = _run("rules", "test", tmp_path, "--engine", "seminaive", "--engine", "clingo")
    assert code == 0 and "ok   c (seminaive)" in out and "ok   c (clingo)" in out, out
    (case / "facts" / "E.facts").write_text("1\n2\n3\n4\n")
    code, out = _run("rules", "test", tmp_path, "--engine", "seminaive")
    assert code == 1 and "FAIL c (seminaive)" in out and "unexpected 1 row(s): (4)" in out, out


def test_program_lines_name_the_installed_library_outside_a_checkout(tmp_path, monkeypatch):
    """A pip install keeps schemas/ and rules/ inside the package (setup.cfg package_dir): a
    case's ``schemas/*.dl`` line finds them there when the case's folder has none."""
    import analyzer.solve.rulebook as rulebook

    package = tmp_path / "site-packages" / "analyzer"
    (package / "schemas").mkdir(parents=True)
    (package / "rules" / "core").mkdir(parents=True)
    (package / "schemas" / "e.dl").write_text(".decl E(x: number)\n.input E\n")
    (package / "rules" / "core" / "f.dl").write_text(".decl F(x: number)\n.output F\nF(x) :- E(x), x > 1.\n")
    monkeypatch.setattr(rulebook, "_PACKAGE", package)
    work = tmp_path / "work"
    case = work / "cases" / "c"
    (case / "facts").mkdir(parents=True)
    (case / "facts" / "E.facts").write_text("1\n5\n")
    (case / "program.txt").write_text("schemas/*.dl\nrules/core/*.dl\n")
    monkeypatch.chdir(work)
    code, out = _run("rules", "test", "cases", "--engine", "seminaive", "--update-expected")
    assert code == 0, out
    assert (case / "expected" / "F.csv").read_text().split() == ["5"]
    (case / "program.txt").write_text("schemas/*.dl\nrules/nowhere/*.dl\n")
    text = _one_line(*_run("rules", "test", "cases", "--engine", "seminaive"))
    assert "program.txt:2: no file matches 'rules/nowhere/*.dl'" in text


def test_facts_refuses_to_overwrite_tables(tmp_path):
    seq = EXAMPLES / "llama_tp2" / "seq.onnx"
    out = tmp_path / "facts"
    code, text = _run("facts", seq, "--out", out)
    assert code == 0, text
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    text = _one_line(*_run("facts", EXAMPLES / "llama_tp2" / "rank0.onnx", "--out", out, "--graph", "r0"))
    assert f"{out}: already holds fact tables" in text
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_facts_of_a_check_hold_every_graph_and_the_input_relations(tmp_path):
    folder = EXAMPLES / "llama_tp2"
    out = tmp_path / "facts"
    code, text = _run("facts", folder / "seq.onnx", folder / "rank0.onnx", folder / "rank1.onnx", "--out", out)
    assert code == 0, text
    graphs = {line.split("\t")[0] for line in (out / "Node.facts").read_text().splitlines()}
    assert graphs == {"seq", "r0", "r1"}
    pieces = (out / "InputPiece.facts").read_text()
    assert "model.layers.0.mlp.down_proj.weight\t1\tmodel.layers.0.mlp.down_proj.weight\tShard\t1\t" in pieces
    assert (out / "WorldSize.facts").read_text().strip() == "2"
