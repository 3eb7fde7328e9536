"""The node lines of a torch.fx dump read without ast (analyzer/importers/fx/lines.py): the same graph, or
the same error, as reading the whole text with ast; and the fast reading applies to the
published dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import InputError
from analyzer.importers.fx import parse as fx_parse
from analyzer.importers.fx.lines import split_dump

PUBLISHED = Path(__file__).resolve().parent.parent / "examples" / "entangle" / "published"

HEADER = "import torch\nfrom torch import device\n\n\nclass GraphModule(torch.nn.Module):\n"


def _ast_only(text: str, monkeypatch) -> tuple[object, str | None]:
    with monkeypatch.context() as m:
        m.setattr(fx_parse, "_read_fast", lambda text, path: None)
        return _outcome(text)


def _outcome(text: str) -> tuple[object, str | None]:
    try:
        return fx_parse.parse_fx_text(text, "g.py"), None
    except InputError as exc:
        return None, str(exc)


def _same_as_ast(text: str, monkeypatch) -> tuple[object, str | None]:
    got = _outcome(text)
    assert got == _ast_only(text, monkeypatch)
    return got


@pytest.mark.slow
def test_published_dumps_read_fast_and_alike(monkeypatch):
    dumps = sorted(PUBLISHED.rglob("*.g[0-9]*.r[0-9]*.py"))  # fw.g0.r1.py, ...: not the derive scripts
    assert len(dumps) >= 10
    for path in dumps:
        text = path.read_text(encoding="utf-8")
        fast = fx_parse._read_fast(fx_parse._LAMBDA_CLASS.sub("class _lambda(", text), str(path))
        assert fast is not None, path  # every node line of a real dump is in the fast grammar
        with monkeypatch.context() as m:
            m.setattr(fx_parse, "_read_fast", lambda text, p: None)
            assert fast == fx_parse.parse_fx_text(text, str(path)), path


def test_node_lines_blanked_for_ast():
    text = HEADER + (
        '    def forward(self, x: "f32[2]"):\n'
        '        # File: m.py:1 in f, code: y = x + 1\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1);  x = None\n'
        "        return (add,)\n"
    )
    dump = split_dump(text)
    assert [(f.line, f.name, f.form, f.target) for f in dump.lines] == [(8, "add", "call", "torch.ops.aten.add.Tensor")]
    assert dump.lines[0].args == [("name", "x"), ("const", 1)]
    assert dump.skeleton.split("\n")[7] == "" and "return (add,)" in dump.skeleton


@pytest.mark.parametrize(
    "forward",
    [
        # every argument kind, spacing as torch.fx prints it
        '    def forward(self, x: "f32[2, 3]"):\n'
        '        v: "f32[3, 2]" = torch.ops.aten.view.default(x, [3, -1])\n'
        '        z: "i32[]" = torch.ops.aten.zeros.default([], dtype = torch.int32, '
        "device = device(type='cuda', index=0), pin_memory = False)\n"
        '        s: "f32[3, 2]" = torch.ops.aten.mul.Tensor(v, -1.5e-05);  v = None\n'
        '        m: "f32[3, 2]" = torch.ops.aten.clamp.default(s, -inf, 2.0)\n'
        "        split = torch.ops.aten.split.Tensor(m, 1);  s = m = None\n"
        '        getitem: "f32[1, 2]" = split[0]\n'
        '        last: "f32[1, 2]" = split[-1];  split = None\n'
        '        g: "f32[1, 2]" = torch.ops.aten.gelu.default(getitem, approximate = \'tanh\')\n'
        "        return (g, z, last)\n",
        # a node-like line inside the forward parameters: a parameter with a default for ast
        "    def forward(self, x: \"f32[2]\",\n"
        '        y: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "    ):\n"
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "        return (add,)\n",
        # a node line after the return
        '    def forward(self, x: "f32[2]"):\n'
        "        return (x,)\n"
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n',
        # a node line inside an open bracket of another statement: a syntax error
        '    def forward(self, x: "f32[2]"):\n'
        "        a = torch.ops.aten.add.Tensor(x,\n"
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "        )\n"
        "        return (a,)\n",
        # a syntax error on another line
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "        y = = 2\n"
        "        return (add,)\n",
        # a node line at another indentation
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        '          mul: "f32[2]" = torch.ops.aten.mul.Tensor(add, 2)\n'
        "        return (add,)\n",
        # a keyword as a name, a positional argument after a keyword one, a repeated keyword
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, lambda)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(alpha = 2, x)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, x, alpha = 2, alpha = 3)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        "        z: \"f32[]\" = torch.ops.aten.zeros.default([], device = device(type='cuda', type='cpu'))\n"
        "        return (z,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, -, +1, 1.5.2)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        "        z: \"f32[]\" = torch.ops.aten.zeros.default([], device = device(type='cuda', index=\u00b2))\n"
        "        return (z,)\n",
        # errors the reader finds: a name used before it is defined, a name defined twice
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(y, 1)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        x: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "        return (x,)\n",
        # a leading zero, a callee outside torch.ops, a triple-quoted string over node lines
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 01)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        add: "f32[2]" = torch.add(x, 1)\n'
        "        return (add,)\n",
        '    def forward(self, x: "f32[2]"):\n'
        '        """\n'
        '        add: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        '        """\n'
        "        return (x,)\n",
    ],
)
def test_same_graph_or_error_as_ast(forward, monkeypatch):
    _same_as_ast(HEADER + forward, monkeypatch)


def test_parameter_default_is_not_read_as_a_node(monkeypatch):
    text = HEADER + (
        '    def forward(self, x: "f32[2]",\n'
        '        y: "f32[2]" = torch.ops.aten.add.Tensor(x, 1)\n'
        "    ):\n"
        "        return (x, y)\n"
    )
    graph, error = _same_as_ast(text, monkeypatch)
    assert error is None and [i.name for i in graph.inputs] == ["x", "y"] and graph.nodes == []
