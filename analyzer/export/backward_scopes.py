"""Module scopes and source lines for the backward and optimizer nodes of a traced training step.

``make_fx(..., record_module_stack=True, record_stack_traces=True)`` records the module path
(``nn_module_stack``) and the Python stack of every *forward* op, which ``torch.onnx.export``
carries into the ONNX nodes (``pkg.torch.onnx.name_scopes``, ``pkg.torch.onnx.stack_trace``) and
shardlog's reports print. The autograd engine runs the backward in C++, so its ops get neither,
and a discrepancy in a gradient was reported at ``scope: ?``. This module gives each backward op
what its forward op had:

- while the forward runs, every module's post-forward hook tags the autograd nodes it created
  (``grad_fn.metadata``), walking back from its outputs and stopping at its inputs' autograd
  nodes; inner modules finish first, so each autograd node gets its innermost module. Anomaly
  mode (``torch.autograd.set_detect_anomaly``) keeps each autograd node's forward stack
  (``metadata["traceback_"]``, documented in ``torch.autograd.detect_anomaly``);
- a pre-hook on each tagged autograd node notes how many graph nodes the tracer had when the
  engine started it: the ATen ops traced until the next autograd node are its backward;
- the ops after ``torch.autograd.grad`` returns (gradient all-reduce, clipping, the optimizer)
  get the module of the one parameter whose update they feed, if exactly one.

Forward nodes keep what ``make_fx`` recorded. Usage: ``with BackwardScopes(model) as scopes:
gm = make_fx(...)(...)``, then ``scopes.annotate(gm, output_params)``.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict

_TAG = "shardlog_module"


class BackwardScopes:
    """Record, while a training step is traced, which module each backward op belongs to."""

    def __init__(self, model):
        self.model = model
        self.marks: list[tuple[int, str | None, str]] = []  # (graph size, module, forward stack)
        self._handles = []
        self._stack = contextlib.ExitStack()

    def __enter__(self):
        import torch

        for path, module in self.model.named_modules():
            if path:
                self._handles.append(module.register_forward_pre_hook(self._pre_forward, with_kwargs=True))
                self._handles.append(module.register_forward_hook(self._make_post_forward(path), with_kwargs=True))
        self._stack.enter_context(torch.autograd.set_detect_anomaly(True, check_nan=False))
        grad = torch.autograd.grad

        def grad_then_mark(*args, **kwargs):
            out = grad(*args, **kwargs)
            self._mark(None, "")
            return out

        torch.autograd.grad = grad_then_mark
        self._stack.callback(setattr, torch.autograd, "grad", grad)
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._stack.close()
        return False

    # -- forward ---------------------------------------------------------------------------
    def _pre_forward(self, module, args, kwargs):
        module.__dict__.setdefault("_shardlog_inputs", []).append({id(fn) for fn in _grad_fns((args, kwargs))})

    def _make_post_forward(self, path):
        def hook(module, args, kwargs, output):
            inputs = module.__dict__["_shardlog_inputs"].pop()
            seen, todo = set(), list(_grad_fns(output))
            while todo:
                fn = todo.pop()
                if fn is None or id(fn) in seen or id(fn) in inputs:
                    continue
                seen.add(id(fn))
                if _TAG not in fn.metadata:
                    fn.metadata[_TAG] = path
                    fn.register_prehook(self._make_pre_backward(fn))
                todo.extend(f for f, _ in fn.next_functions)

        return hook

    # -- backward --------------------------------------------------------------------------
    def _make_pre_backward(self, fn):
        def hook(grad_outputs):
            self._mark(fn.metadata[_TAG], "".join(fn.metadata.get("traceback_", [])))

        return hook

    def _mark(self, module, stack):
        from torch.fx.experimental.proxy_tensor import get_proxy_mode

        mode = get_proxy_mode()
        if mode is not None:
            self.marks.append((len(mode.tracer.graph.nodes), module, stack))

    # -- after tracing ---------------------------------------------------------------------
    def annotate(self, gm, output_params: list[str | None]) -> int:
        """Write ``nn_module_stack``/``stack_trace`` on the backward and optimizer nodes of ``gm``.

        Args:
            gm: the traced step (``make_fx``'s GraphModule), nodes in creation order.
            output_params: per output of ``gm``, the parameter it updates (``None`` otherwise).

        Returns:
            The number of nodes annotated.
        """
        nodes = list(gm.graph.nodes)
        stacks = _module_stacks(nodes)
        owner: dict = {}
        marks = sorted(self.marks, key=lambda m: m[0])
        for (start, module, stack), nxt in zip(marks, marks[1:] + [(len(nodes), None, "")]):
            if module is None:  # after torch.autograd.grad returned: the optimizer, below
                continue
            for node in nodes[start : nxt[0]]:
                if not _has_scope(node) and node.op == "call_function":
                    owner[node] = (module, stack)
        last_grad = max((start for start, module, _ in marks if module is None), default=None)
        if last_grad is not None:
            owner.update(_optimizer_owners(nodes, last_grad, output_params))
        for node, (module, stack) in owner.items():
            while module and module not in stacks:  # a module with no op of its own: its parent's
                module = module.rpartition(".")[0]
            if module in stacks:
                node.meta["nn_module_stack"] = stacks[module]
            if stack:
                node.meta["stack_trace"] = stack
        return len(owner)


def _grad_fns(tree) -> list:
    """The autograd nodes of the tensors in a (nested) value: args, kwargs, a ModelOutput."""
    import torch
    from torch.utils._pytree import tree_leaves

    if isinstance(tree, dict) and type(tree) is not dict:  # ModelOutput: a dict subclass pytree does not know
        tree = dict(tree)
    leaves = tree_leaves(tree, is_leaf=lambda x: isinstance(x, torch.Tensor))
    return [t.grad_fn for t in leaves if isinstance(t, torch.Tensor) and t.grad_fn is not None]


def _has_scope(node) -> bool:
    return bool(node.meta.get("nn_module_stack"))


def _module_stacks(nodes) -> dict:
    """Module path -> the ``nn_module_stack`` a forward node inside exactly that module has."""
    stacks = {}
    for node in nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            path = list(stack.values())[-1][0]
            stacks.setdefault(path, OrderedDict(stack))
    return stacks


def _optimizer_owners(nodes, after: int, output_params) -> dict:
    """Ops after the backward that feed the update of exactly one parameter: its module."""
    out_node = nodes[-1]
    outs = out_node.args[0] if out_node.op == "output" else []
    users: dict = {}
    for value, param in zip(outs, output_params):
        if param is None or not hasattr(value, "op"):
            continue
        todo = [value]
        while todo:
            node = todo.pop()
            if param in users.setdefault(node, set()):
                continue
            users[node].add(param)
            todo.extend(a for a in node.all_input_nodes)
    tail = set(nodes[after:])
    owners = {}
    for node, params in users.items():
        if node in tail and len(params) == 1 and node.op == "call_function" and not _has_scope(node):
            (param,) = params
            owners[node] = (param.rsplit(".", 1)[0], "")
    return owners
