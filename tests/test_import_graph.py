"""The package's modules import each other without cycles, imports inside functions included
(issue 18: the flow importers -> inputs -> rewrite -> facts -> solve -> verdict -> reports reads
one way). Imports under ``if TYPE_CHECKING:`` are annotations only and do not count."""

from __future__ import annotations

import ast
from pathlib import Path

import analyzer

PACKAGE = Path(analyzer.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            node.body = []
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found.update(n for n in names if n in modules)
    return found


def test_no_import_cycles():
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    # a package's own __init__ is imported with any of its modules: not an edge of the module
    graph = {m: {d for d in _imports(p, modules) if d != m and not m.startswith(d + ".")} for m, p in paths.items()}
    cycles = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)
