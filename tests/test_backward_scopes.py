"""Backward and optimizer nodes of the training-step exports carry module scopes and source lines
(analyzer/export/backward_scopes.py), so a discrepancy in a gradient names the module it belongs to.

The bundled examples are read without torch; the recording itself is tested on a small module
when torch is importable.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx
import pytest
import yaml

from analyzer.facts.source import node_trace, parse_source, stack_frames

REPO = Path(__file__).resolve().parents[1]
TRAINING = sorted(
    p.parent for p in (REPO / "examples").glob("*/case.yaml") if "training_step" in yaml.safe_load(p.read_text())
)


def _parameter_module(output: str) -> str:
    """updated.<param> / updated.state.<kind>.<param> -> the module path of <param>."""
    name = output.removeprefix("updated.")
    param = name.split(".", 2)[2] if name.startswith("state.") else name
    return param.rsplit(".", 1)[0]


@pytest.mark.parametrize("folder", TRAINING, ids=[p.name for p in TRAINING])
def test_each_update_is_scoped_in_its_parameters_module(folder: Path):
    model = onnx.load(folder / "rank0.onnx", load_external_data=False)
    producer = {o: n for n in model.graph.node for o in n.output}
    updated = [o.name for o in model.graph.output if o.name.startswith("updated.")]
    assert updated
    wrong = {}
    for name in updated:
        scope = parse_source(producer[name]).scope
        module = _parameter_module(name)
        if not (scope == module or module.startswith(scope + ".")):  # a module without ops: its parent
            wrong[name] = scope
    assert not wrong, wrong


@pytest.mark.parametrize("folder", TRAINING, ids=[p.name for p in TRAINING])
def test_only_shared_nodes_lack_a_scope(folder: Path):
    """A node without a module scope is either part of the loss (the model's root module computes
    it) or feeds the updates of several parameters (the gradient norm of clipping, a gradient
    all-reduce whose result the clipping norm also reads). Before backward_scopes.py every
    backward and optimizer node had none."""
    model = onnx.load(folder / "rank0.onnx", load_external_data=False)
    graph = model.graph
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    reaches: dict[str, set[str]] = {o.name: {o.name} for o in graph.output}
    for node in reversed(graph.node):  # topological order: consumers come later
        found = set()
        for out in node.output:
            found |= reaches.get(out, set())
            for user in consumers.get(out, []):
                found = found.union(*(reaches.get(u, set()) for u in user.output))
        for out in node.output:
            reaches[out] = reaches.get(out, set()) | found
    unexplained = []
    for node in graph.node:
        if parse_source(node).scope:
            continue
        outs = set().union(*(reaches.get(o, set()) for o in node.output))
        modules = {_parameter_module(o) for o in outs if o.startswith("updated.")}
        if "loss" not in outs and len(modules) < 2:
            unexplained.append((node.name, sorted(modules)))
    assert not unexplained, unexplained[:10]
    # recorded frames (framework-only ones too: the report then names the module's call site,
    # analyzer/verdict/sources.py)
    assert sum(1 for n in graph.node if stack_frames(node_trace(n))) > 0.5 * len(graph.node)


_missing = [m for m in ("torch",) if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(_missing), reason="needs torch (the 'export' extra)")
def test_recorder_scopes_backward_ops_by_their_forward_module():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from analyzer.export.backward_scopes import BackwardScopes

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    names = [n for n, _ in model.named_parameters()]
    params = list(model.parameters())

    def step(x):
        loss = model(x).square().sum()
        grads = torch.autograd.grad(loss, params)
        return [loss.detach()] + [p.detach() - 0.1 * g for p, g in zip(params, grads)]

    step._orig_mod = model
    with BackwardScopes(model) as scopes:
        gm = make_fx(step, record_module_stack=True, record_stack_traces=True)(torch.randn(3, 4))
    scopes.annotate(gm, [None, *names])

    def scope(node):
        stack = node.meta.get("nn_module_stack")
        return list(stack.values())[-1][0] if stack else ""

    nodes = list(gm.graph.nodes)
    # layer norm's backward is the only native_layer_norm_backward; it belongs to module "1"
    (ln_bwd,) = [n for n in nodes if "native_layer_norm_backward" in str(n.target)]
    assert scope(ln_bwd) == "1"
    # its source is the forward op's stack (ending in F.layer_norm), not where autograd.grad was called
    assert "layer_norm" in ln_bwd.meta["stack_trace"].rstrip().splitlines()[-1]
    # the backward of the first linear (its weight gradient mm) comes after layer norm's backward
    after = nodes[nodes.index(ln_bwd) + 1 :]
    assert any(scope(n) == "0" and n.target == torch.ops.aten.mm.default for n in after)
    # each update (p - 0.1 * g) is scoped in its parameter's module
    outputs = nodes[-1].args[0]
    assert [scope(o) for o in outputs[1:]] == [name.rsplit(".", 1)[0] for name in names]
