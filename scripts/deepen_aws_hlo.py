"""Make a deeper transformers-neuronx Llama-3 program from a published one by repeating its last
decoder layer in the HLO text (transformers-neuronx is not installable here, so no real deeper
export can be made; this is a text edit, said plainly).

``python scripts/deepen_aws_hlo.py IN.hlo OUT.hlo --layers L`` reads a GraphGuard graph with at
least 2 layers (``../shared/data/hlo/aws_llama/tp*_layer2/graph.0.hlo``) and writes the same
program with L layers: the instructions of the last layer (those between its input hidden state
and its output, the residual adds that chain from ``parameter(0)``) are copied L - 2 more times,
each copy reading the previous copy's output and its own new weight parameters (numbered after
the existing ones, ``parameter(26)`` ...; the same shapes, so a spec that selects weights by
shape serves every depth), its kv caches appended to the ROOT tuple. Shared values (rotary
tables, the mask) and the reducer computations are reused; the header's alias and layout
attributes and the ENTRY signature are dropped (the importer reads the parameter
instructions). Metadata is copied, so each copy reports the model's own source lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

_INST = re.compile(r"^(\s*)(ROOT )?%([\w.\-]+) = (.*)$")
_REF = re.compile(r"%([\w.\-]+)")
_PARAM = re.compile(r"parameter\((\d+)\)")


def deepen(text: str, layers: int) -> str:
    """The program of ``text`` (an HLO module of >= 2 decoder layers) with ``layers`` layers.

    Raises:
        ValueError: the text has no ENTRY computation, fewer than two residual layers, or
            ``layers`` below its own depth.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("ENTRY ")), None)
    if start is None:
        raise ValueError("no ENTRY computation")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("}"))
    body = lines[start + 1 : end]
    insts: dict[str, tuple[int, str]] = {}
    deps: dict[str, set[str]] = {}
    for i, line in enumerate(body):
        m = _INST.match(line)
        if m:
            insts[m.group(3)] = (i, line)
    for name, (_, line) in insts.items():
        rhs = _INST.match(line).group(4)  # type: ignore[union-attr]
        deps[name] = {r for r in _REF.findall(rhs.split(", metadata=")[0]) if r in insts and r != name}
    params = {name: int(m.group(1)) for name, (_, line) in insts.items() if (m := _PARAM.search(line))}
    hidden = [next(n for n, k in params.items() if k == 0)]
    while True:
        nxt = [n for n, (_, line) in insts.items() if " add(" in line and hidden[-1] in deps[n] and n != hidden[-1]]
        if not nxt:
            break
        hidden.append(min(nxt, key=lambda n: insts[n][0]))
    depth = (len(hidden) - 1) // 2
    if depth < 2:
        raise ValueError(f"the program has {depth} decoder layer(s); deepen a 2-layer one")
    if layers < depth:
        raise ValueError(f"--layers {layers} is below the program's {depth} layers")
    h_in, h_out = hidden[-3], hidden[-1]

    def ancestors(name: str) -> set[str]:
        seen, todo = set(), [name]
        while todo:
            for d in deps[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    before = ancestors(h_in) | {h_in}
    layer = sorted((ancestors(h_out) | {h_out}) - before, key=lambda n: insts[n][0])
    layer_params = sorted((n for n in layer if n in params), key=lambda n: params[n])
    next_param = max(params.values()) + 1
    root_line = next(line for _, line in insts.values() if _INST.match(line).group(2))  # type: ignore[union-attr]
    root_name = _INST.match(root_line).group(3)  # type: ignore[union-attr]
    caches = [r for r in _REF.findall(root_line.split(" tuple(")[1]) if r in layer]

    copies: list[str] = []
    extra_outputs: list[str] = []
    prev = h_out
    for k in range(depth + 1, layers + 1):
        rename = {n: f"{n}.L{k}" for n in layer}
        rename[h_in] = prev
        for j, n in enumerate(layer_params):
            rename[n] = f"p{next_param + j}.{n.split('.')[-1]}L{k}"
        for n in layer:
            line = insts[n][1]
            head, _, meta = line.partition(", metadata=")
            head = _REF.sub(lambda m, names=rename: "%" + names.get(m.group(1), m.group(1)), head)
            if n in params:
                head = _PARAM.sub(f"parameter({next_param + layer_params.index(n)})", head)
            copies.append(head + (", metadata=" + meta if meta else ""))
        next_param += len(layer_params)
        extra_outputs += [rename[c] for c in caches]
        prev = rename[h_out]

    out_body: list[str] = []
    last_layer_line = max(insts[n][0] for n in layer)
    shapes = {n: _INST.match(line).group(4).split(" ")[0] for n, (_, line) in insts.items()}  # type: ignore[union-attr]
    for i, line in enumerate(body):
        m = _INST.match(line)
        name = m.group(3) if m else None
        if name is not None and name not in layer and name not in before and prev != h_out:
            head, _, meta = line.partition(", metadata=")
            head = re.sub(rf"%{re.escape(h_out)}\b(?![\w.\-])", f"%{prev}", head)
            if name == root_name:
                operands = head.rsplit(" tuple(", 1)[1].rstrip(")")
                new_ops = operands + "".join(f", %{o}" for o in extra_outputs)
                types = [shapes[r.split(".L")[0]] for r in _REF.findall(new_ops)]
                head = f"{m.group(1)}ROOT %{root_name} = ({', '.join(types)}) tuple({new_ops})"  # type: ignore[union-attr]
            line = head + (", metadata=" + meta if meta else "")
        out_body.append(line)
        if i == last_layer_line:
            out_body.extend(copies)
    entry = re.sub(r"^ENTRY (%[\w.\-]+) .*\{$", r"ENTRY \1 {", lines[start])
    module = re.match(r"HloModule ([\w.\-]+)", lines[0])
    header = f"HloModule {module.group(1) if module else 'm'}_L{layers}"
    return "\n".join([header, *lines[1:start], entry, *out_body, *lines[end:]]) + "\n"


@click.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--layers", required=True, type=click.IntRange(2, 64), help="Decoder layers of the program written.")
def main(source: str, target: str, layers: int) -> None:
    """Write SOURCE (a >= 2-layer transformers-neuronx HLO program) with LAYERS layers to TARGET."""
    try:
        Path(target).write_text(deepen(Path(source).read_text(), layers))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {target} ({layers} layers)")


if __name__ == "__main__":
    main()
