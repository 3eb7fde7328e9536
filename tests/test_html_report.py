"""The HTML report: content, escaping of hostile model strings, and rendering in headless Chromium.

The Chromium tests skip when no ``chromium`` is installed, unless ``CI=true``: then they must run.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import onnx
import onnx.parser
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from analyzer import check
from analyzer.api import CheckResult
from analyzer.reports.html import render_html, write_html

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>'
BUG = "llama_tp2_bug_bias_every_rank"
OK = "llama_tp2"
EVIL_NODE = "<script>alert(1)</script>"
EVIL_PRODUCER = "</title></svg><iframe srcdoc='x'>"
# If any of these ran, document.title would become "PWNED" (the page text only holds 'P'+'WNED').
EVIL_VALUE = "<img src=x onerror=\"document.title='P'+'WNED'\">"
EVIL_CODE = "y = x  # <script>document.title='P'+'WNED'</script>"
EVIL_FILE = "/src/<svg onload=document.title='P'+'WNED'>.py"
EVIL_SCOPE = "model.<b onmouseover=alert(3)>evil</b>"


def _example(case: str) -> CheckResult:
    folder = EXAMPLES / case
    return check(folder / "seq.onnx", sorted(folder.glob("rank*.onnx")), numeric=True)


@pytest.fixture(scope="module")
def bug_result() -> CheckResult:
    return _example(BUG)


@pytest.fixture(scope="module")
def ok_result() -> CheckResult:
    return _example(OK)


def _chromium() -> str | None:
    for cand in ("/usr/bin/chromium", shutil.which("chromium")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


@pytest.fixture
def chromium() -> str:
    """Path of the Chromium binary; skip without one unless CI=true (then fail)."""
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no chromium is installed (.ci/run installs Debian's chromium)")
        pytest.skip("no chromium installed (apt-get install chromium); set CI=true to require it")
    return exe


def _run_chromium(exe: str, tmp_path: Path, html_file: Path, *mode: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    args = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1400,2000",
        *mode,
        html_file.resolve().as_uri(),
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


def _render(exe: str, tmp_path: Path, html_text: str, stem: str) -> tuple[Path, str]:
    """Write the page, screenshot it and dump its DOM after layout."""
    page = tmp_path / f"{stem}.html"
    page.write_text(html_text, encoding="utf-8")
    png = tmp_path / f"{stem}.png"
    _run_chromium(exe, tmp_path, page, f"--screenshot={png}")
    dom = _run_chromium(exe, tmp_path, page, "--dump-dom").stdout
    return png, dom


def _check_png(png: Path) -> None:
    """A real, non-blank 1400x2000 PNG (pure check: signature, IHDR, decoded pixel bytes vary)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 2000)
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    pixels = zlib.decompress(idat)
    assert len(set(pixels)) > 32, "the screenshot looks blank"


def _frontier_group(dom: str, dom_id: str) -> str:
    m = re.search(rf'<g[^>]*\bid="{re.escape(dom_id)}"[^>]*>(.*?)</g>', dom, re.S)
    assert m, f"no element with id {dom_id} in the rendered DOM"
    return m.group(1)


class _TagAudit(HTMLParser):
    """Collects what could run or fetch: script tags, on* attributes, URLs in attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.handlers: list[str] = []
        self.urls: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.scripts += tag == "script"
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")
            if name in ("src", "href", "srcdoc", "action") or (value and re.match(r"\s*(https?|javascript):", value)):
                if not (name == "xmlns" and value == "http://www.w3.org/2000/svg"):
                    self.urls.append(f"{tag} {name}={value}")


def _audit(page: str) -> _TagAudit:
    audit = _TagAudit()
    audit.feed(page)
    return audit


# --------------------------------------------------------------------------- content


def test_discrepancy_page_shows_the_frontier(bug_result):
    d = bug_result.verdict_.discrepancies[0]
    page = render_html(bug_result)
    assert 'class="banner bad"' in page and "discrepancy" in page
    assert d.node in page and d.scope in page and d.source in page
    assert 'id="frontier-0"' in page
    assert 'id="frontier-0-r0"' in page and 'id="frontier-0-r1"' in page  # paired rank nodes drawn
    for i in d.inputs:
        assert i.name in page
    assert d.hints[0].split(":")[0] in page
    err = bug_result.numeric["logits"]
    assert err > 0.1 and f"{err:.3g}" in page  # numeric witness error of logits
    assert _frontier_group(page, "frontier-0").count(d.node) >= 1
    audit = _audit(page)
    assert audit.scripts == 0 and not audit.handlers and not audit.urls


def test_verified_page_shows_output_relations(ok_result):
    page = render_html(ok_result)
    assert 'class="banner ok"' in page
    assert "Replicate on ranks 0..1" in page
    assert "logits" in page and "frontier-" not in page


def test_missing_allreduce_page_marks_the_partial_sum_origin():
    result = _example("llama_tp2_bug_missing_allreduce")
    d = result.verdict_.discrepancies[0]
    page = render_html(result)
    assert d.origin_node and d.origin_node in page and d.origin_scope in page
    assert 'class="box origin"' in page


def test_rank_side_discrepancy_is_drawn_on_the_rank():
    result = _example("llama_tp2_bug_shard_order")
    d = result.verdict_.discrepancies[0]
    assert d.graph == "r0"
    page = render_html(result)
    assert d.node in _frontier_group(page, "frontier-0")


def test_cli_html_option_writes_the_page(tmp_path):
    from analyzer.cli import main

    folder = EXAMPLES / BUG
    out = tmp_path / "report.html"
    args = ["check", str(folder / "seq.onnx"), str(folder / "rank0.onnx"), str(folder / "rank1.onnx")]
    res = CliRunner().invoke(main, [*args, "--html", str(out), "-q"])
    assert res.exit_code == 1, res.output
    assert 'id="frontier-0"' in out.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- hostile strings


NORM = """
norm (float[4, 8] x, float[8, {h}] w1) => (float[4, 1] y) <int64[1] axes = {{1}}> {{
  h = MatMul(x, w1)
  y = ReduceMean<keepdims = 1>(h, axes)
}}
"""


def _hostile_model(h: int) -> onnx.ModelProto:
    model = onnx.parser.parse_model(HEADER + NORM.format(h=h))
    for node in model.graph.node:
        node.input[:] = [EVIL_VALUE if v == "h" else v for v in node.input]
        node.output[:] = [EVIL_VALUE if v == "h" else v for v in node.output]
        trace = node.metadata_props.add()
        trace.key = "pkg.torch.onnx.stack_trace"
        trace.value = f'File "{EVIL_FILE}", line 7, in forward\n    {EVIL_CODE}\n'
        scopes = node.metadata_props.add()
        scopes.key, scopes.value = "pkg.torch.onnx.name_scopes", repr(["", "model", EVIL_SCOPE, "op"])
    model.graph.node[0].name = EVIL_PRODUCER
    model.graph.node[1].name = EVIL_NODE
    return model


@pytest.fixture
def hostile_result(write_models) -> CheckResult:
    paths = write_models({"seq": _hostile_model(16), "rank0": _hostile_model(8), "rank1": _hostile_model(8)})
    result = check(paths["seq"], [paths["rank0"], paths["rank1"]])
    d = result.verdict_.discrepancies[0]
    assert (d.node, d.scope, d.code) == (EVIL_NODE, EVIL_SCOPE, EVIL_CODE)
    return result


def test_hostile_strings_are_escaped(hostile_result):
    page = render_html(hostile_result)
    for evil in (EVIL_NODE, EVIL_PRODUCER, EVIL_VALUE, EVIL_CODE, EVIL_FILE, EVIL_SCOPE):
        assert evil not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;document.title=&#x27;P&#x27;+&#x27;WNED&#x27;&quot;&gt;" in page
    audit = _audit(page)
    assert audit.scripts == 0, "a <script> element made it into the page"
    assert not audit.handlers and not audit.urls
    assert audit.tags.isdisjoint({"img", "iframe", "script"})
    assert "Content-Security-Policy" in page


@pytest.mark.slow
def test_hostile_page_runs_no_script_in_chromium(hostile_result, chromium, tmp_path):
    png, dom = _render(chromium, tmp_path, render_html(hostile_result), "hostile")
    _check_png(png)
    assert "PWNED" not in dom
    assert "<title>shardlog: discrepancy</title>" in dom
    assert _audit(dom).scripts == 0
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in _frontier_group(dom, "frontier-0")


# --------------------------------------------------------------------------- headless Chromium


@pytest.mark.slow
def test_discrepancy_page_renders_in_chromium(bug_result, chromium, tmp_path):
    d = bug_result.verdict_.discrepancies[0]
    png, dom = _render(chromium, tmp_path, render_html(bug_result), BUG)
    _check_png(png)
    group = _frontier_group(dom, "frontier-0")
    assert d.node in group
    assert d.scope in dom


@pytest.mark.slow
def test_verified_page_renders_in_chromium(ok_result, chromium, tmp_path):
    page = tmp_path / "report.html"
    write_html(ok_result, page)
    png, dom = _render(chromium, tmp_path, page.read_text(encoding="utf-8"), OK)
    _check_png(png)
    assert re.search(r'<div class="banner ok" id="verdict">verified', dom)
