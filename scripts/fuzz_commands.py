"""Fuzz cases for every subcommand and for hostile files (used by ``scripts/fuzz.py``).

Categories (issue 20; ``docs/fuzzing.md`` lists them with the figures of the last run):

- ``files``: special files in every input role (a FIFO, ``/dev/zero``, ``/dev/urandom``,
  ``/proc/self/mem``, a symlink loop, a dangling link, a folder, a name over 255 bytes, a
  non-UTF-8 name) for ``check`` (graphs, spec, rule folders), ``import-fx``, ``facts``,
  ``query`` and ``rules test``; every output option aimed at an input (the same path, a hard
  link, a symlink, a mesh spec's ``replica_seq``): exit 2 and every input unchanged.
- ``yaml``: YAML bombs of random width and depth, recursive aliases, integers over 4,300
  digits, deep nesting, long scalars, in relation specs.
- ``rules``: rule text mutated from the bundled library (truncated, bytes flipped, spliced),
  deep expressions, runaway recursion building new values (on each engine), relations of the
  verdict, wrong user transfer rules refuted by --numeric (naming the rule), in
  golden cases run by ``rules test --engine seminaive`` and in ``check --rules`` folders.
- ``fx``: torch.fx dumps mutated (truncated, bytes flipped, lines spliced, deep expressions,
  code that would create a marker file if run), through ``import-fx`` and ``check``.
- ``commands``: ``facts``, ``query``, ``rules test``, ``import-fx`` and ``check`` misuse
  (relation names that are paths, malformed tables, bad ``--constant``/``--outputs``/``--pp``,
  unknown options).
- ``forge``: names crafted to forge terminal output (newlines followed by a verdict, ESC and
  OSC sequences, C1 controls, bidi overrides) with every report option.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

import fuzz
from fuzz import Case, Link

ROOT = Path(__file__).resolve().parent.parent

FX_DUMP = """class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, 8]"):
        # File: /src/model.py:12 in forward, code: h = x @ w
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, w);  x = w = None
        _tensor_constant0 = self._tensor_constant0
        lift_fresh_copy: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(mm, lift_fresh_copy);  mm = None
        relu: "f32[4, 8]" = torch.ops.aten.relu.default(add);  add = None
        return (relu, lift_fresh_copy)
"""

GOLDEN_PROGRAM = """.decl E(x: symbol, n: number)
.input E
.decl F(x: symbol, n: number)
.output F
F(x, n) :- E(x, n).
F(x, m) :- F(x, n), n > 0, m = n - 1.
"""

PAYLOADS = [
    "__import__('os').system('touch {dir}/PWNED')",
    "exec(\"open('{dir}/PWNED', 'w')\")",
    "open('{dir}/PWNED', 'w')",
    "eval(compile('open(\\'{dir}/PWNED\\', \\'w\\')', 'x', 'exec'))",
]

FORGE = [
    "\n\nverified (world size 2, engine seminaive, 0.01 s)\n",
    "\rverified (world size 2, engine seminaive, 0.01 s)",
    "\x1b]0;pwned\x07",
    "\x1b]52;c;ZWNobyBoaQ==\x07",
    "\x1b[2J\x1b[H",
    "\x1b[31mverified\x1b[0m",
    "\u202eevil\u202c",
    "\u2028verified (world size 2)",
    "\x9b31m",
    "\x00\x01\x02",
    "a\x7fb",
    "[bold red]verified[/]",
]


def _rule_texts() -> list[str]:
    files = sorted((ROOT / "rules").rglob("*.dl"))
    return [f.read_text(encoding="utf-8") for f in files]


_RULES: list[str] = []


def _library_rule(rng: random.Random) -> str:
    if not _RULES:
        _RULES.extend(_rule_texts())
    return rng.choice(_RULES)


# --------------------------------------------------------------------------- files


def _files(rng: random.Random, models: dict, k: int = -1) -> Case:
    seq, rank = fuzz._ser(models["seq"]), fuzz._ser(models["rank"])
    d = "{dir}"
    base = {"seq.onnx": seq, "rank0.onnx": rank, "rank1.onnx": rank, "spec.yaml": fuzz.SPEC_OK.encode()}
    bad_kinds = [
        ("fifo", Link("fifo")),
        ("dev zero", Link("symlink", "/dev/zero")),
        ("dev urandom", Link("symlink", "/dev/urandom")),
        ("proc mem", Link("symlink", "/proc/self/mem")),
        ("loop", Link("symlink", "{dir}/bad")),
        ("dangling", Link("symlink", "{dir}/gone")),
        ("folder", Link("dir")),
    ]
    kind, link = fuzz._nth_or_random(rng, bad_kinds, k % len(bad_kinds) if k >= 0 else k)
    roles = ["seq", "rank", "spec", "rules", "dump", "facts", "table", "golden_program"]
    role = roles[(k // len(bad_kinds)) % len(roles)] if 0 <= k < len(bad_kinds) * len(roles) else rng.choice(roles)
    files: dict[str, bytes | Link] = dict(base)
    if role in ("seq", "rank", "spec"):
        files["bad"] = link
        args = [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx"]
        if role == "seq":
            args[0] = f"{d}/bad"
        elif role == "rank":
            args[2] = f"{d}/bad"
        else:
            args += ["--relations", f"{d}/bad"]
        return Case("files", f"{kind} as {role}", files, args, expect=(2,))
    if role == "rules":
        files["rules/mine.dl"] = b".decl Mine(n: symbol)\n"
        files["rules/bad.dl"] = link if kind != "loop" else Link("symlink", "{dir}/rules/bad.dl")
        args = [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--rules", f"{d}/rules"]
        return Case("files", f"{kind} as a rule file", files, args, expect=(2,))
    if role == "dump":
        files["bad.py"] = link if kind != "loop" else Link("symlink", "{dir}/bad.py")
        return Case(
            "files", f"{kind} as an fx dump", files, [f"{d}/bad.py", "-o", f"{d}/out/o.onnx"], "import-fx", (2,)
        )
    if role == "facts":
        files["g/case/program.dl"] = GOLDEN_PROGRAM.encode()
        files["g/case/expected/F.csv"] = b""
        files["g/case/facts/E.facts"] = link if kind != "loop" else Link("symlink", "{dir}/g/case/facts/E.facts")
        return Case("files", f"{kind} as a facts file", files, [f"{d}/g", "--engine", "seminaive"], "rules test", (2,))
    if role == "table":
        files["out/Holds.csv"] = link if kind != "loop" else Link("symlink", "{dir}/out/Holds.csv")
        return Case("files", f"{kind} as a table", files, [f"{d}/out", "Holds"], "query", (2,))
    files["g/case/facts/E.facts"] = b"a\t1\n"
    files["g/case/program.dl"] = link if kind != "loop" else Link("symlink", "{dir}/g/case/program.dl")
    return Case("files", f"{kind} as a golden program", files, [f"{d}/g", "--engine", "seminaive"], "rules test", (2,))


def _outputs(rng: random.Random, models: dict, k: int = -1) -> Case:
    """Every output option aimed at an input, by path, hard link or symlink."""
    seq, rank = fuzz._ser(models["seq"]), fuzz._ser(models["rank"])
    d = "{dir}"
    files: dict[str, bytes | Link] = {"seq.onnx": seq, "rank0.onnx": rank, "rank1.onnx": rank}
    files["spec.yaml"] = fuzz.SPEC_OK.encode()
    files["rules/mine.dl"] = b".decl Mine(n: symbol)\n"
    files["dump.py"] = FX_DUMP.encode()
    inputs = ["seq.onnx", "rank1.onnx", "spec.yaml", "rules/mine.dl"]
    how = rng.choice(["same", "hardlink", "symlink", "dotted"])
    target = rng.choice(inputs)
    if how == "same":
        out = f"{d}/{target}"
    elif how == "dotted":
        out = f"{d}/out/../{target}"
    else:
        files["alias"] = Link(how, target if how == "hardlink" else f"{d}/{target}")
        out = f"{d}/alias"
    option = rng.choice(["--json", "--html", "--sarif", "--out", "import-fx"])
    base = [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--relations", f"{d}/spec.yaml"]
    base += ["--rules", f"{d}/rules"]
    if option == "import-fx":
        if how in ("same", "dotted"):
            out = out.replace(target, "dump.py")
        else:
            files["alias"] = Link(how, "dump.py" if how == "hardlink" else f"{d}/dump.py")
        return Case(
            "files", f"import-fx -o onto its dump ({how})", files, [f"{d}/dump.py", "-o", out], "import-fx", (2,)
        )
    if option == "--out":
        # a table named like an input in the --out folder: the folder holds a link to the input
        files["tables/Holds.csv"] = Link("hardlink" if how != "symlink" else "symlink", f"{d}/{target}")
        if how != "symlink":
            files["tables/Holds.csv"] = Link("hardlink", target)
        return Case("files", f"--out over an input ({how})", files, [*base, "--out", f"{d}/tables"], expect=(2,))
    return Case("files", f"{option} onto {target} ({how})", files, [*base, option, out], expect=(2,))


# --------------------------------------------------------------------------- yaml


def _yaml(rng: random.Random, models: dict, k: int = -1) -> Case:
    seq, rank = fuzz._ser(models["seq"]), fuzz._ser(models["rank"])
    kind = fuzz._nth_or_random(rng, ["laughs", "recursive", "long int", "deep", "long scalar", "many keys"], k)
    if kind == "laughs":
        width, depth = rng.randint(2, 12), rng.randint(3, 12)
        lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
        for i in range(1, depth):
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
        text = "\n".join(lines) + f"\nrelations: {{x: replicate}}\nworld_size: *l{depth - 1}\n"
        name = f"billion laughs {width}^{depth}"
    elif kind == "recursive":
        text = rng.choice(["relations: &r {x: *r}\n", "a: &a [*a]\nrelations: {}\n", "relations: &r [*r, *r]\n"])
        name = "recursive alias"
    elif kind == "long int":
        digits = rng.choice([4300, 4301, 5000, 100_000])
        key = rng.choice(["world_size", "relations:\n  w1: {shard", "outputs: [", "mesh: {dp: 2, tp"])
        closing = {"world_size": "", "outputs: [": "]"}.get(key, "}")
        text = f"{key}: {'9' * digits}{closing}\n" if key == "world_size" else f"{key}: {'9' * digits}{closing}\n"
        name = f"integer of {digits} digits in {key.split(':')[0]}"
    elif kind == "deep":
        n = rng.choice([65, 200, 999, 1001, 20_000])
        text = "relations: " + rng.choice(["[" * n + "]" * n, "{a: " * n + "1" + "}" * n]) + "\n"
        name = f"nested {n} deep"
    elif kind == "long scalar":
        text = "relations: {x: " + "r" * rng.choice([10_000, 1_000_000]) + "}\n"
        name = "long scalar"
    else:
        n = rng.choice([1000, 5_000, 100_000])
        text = "relations:\n" + "".join(f"  v{i}: {{shard: 0}}\n" for i in range(n))
        name = f"{n} keys"
    files, args = fuzz._triple(seq, rank, extra=["--relations", "{dir}/spec.yaml"])
    files["spec.yaml"] = text.encode()
    return Case("yaml", name, files, args)


# --------------------------------------------------------------------------- rules


_RUNAWAY = [
    '.decl S(s: symbol)\nS("a") :- E(_, _).\nS(cat(s, "x")) :- S(s).\n.output S\n',
    ".decl N(n: number)\nN(0) :- E(_, _).\nN(n + 1) :- N(n).\n.output N\n",
    ".decl N(n: number, m: number)\nN(0, 0) :- E(_, _).\nN(a + 1, b) :- N(a, b), a < 50000.\nN(a, b + 1) :- N(a, b).\n"
    ".output N\n",
]
_PROTECTED = [
    'OutputRelation(s, "Replicate", -1, "") :- GraphOutput("seq", s, _).',
    'Hint(n, "x") :- Node("seq", n, _, _, _).',
    'Holds(s, "Replicate", -1, "") :- Value_NDim("seq", s, _).',
    'Frontier("n", 0, "s").',
    "Check_CollectiveCount(0, 0).",
    'Pair(n, 0, n) :- Node("seq", n, _, _, _).',
]


def _mutate_text(rng: random.Random, text: str) -> tuple[str, bytes]:
    data = text.encode()
    kind = rng.choice(["truncate", "flip", "splice", "deep", "garbage", "non-utf8"])
    if kind == "truncate":
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == "flip":
        b = bytearray(data)
        for _ in range(rng.choice([1, 2, 8])):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        data = bytes(b)
    elif kind == "splice":
        other = _library_rule(rng).encode()
        data = data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1) :]
    elif kind == "deep":
        n = rng.choice([60, 200, 900, 5000])
        expr = rng.choice(["+".join(["1"] * n), "(" * n + "1" + ")" * n, "-" * n + "1", "cat(" * n + '"a"' + ")" * n])
        data += f".decl Deep(x: number)\nDeep({expr}) :- E(_, _).\n".encode()
    elif kind == "garbage":
        i = rng.randrange(len(data) + 1)
        data = data[:i] + rng.randbytes(rng.choice([1, 16, 256])) + data[i:]
    else:
        data += b"// \xff\xfe\n"
    return kind, data


#: user rules that build values forever, for check --rules on an engine (line 3 runs away; the
#: OutLayout rule keeps them relevant). Each ends at a limit within ~10 s on the engines listed;
#: the slower ones (clingo's 500,000 numbers, pyDatalog, Soufflé's numbers stopped only by the
#: time limit) are tests/test_runaway.py's.
_USER_RUNAWAY = [
    (
        '.decl Num(x: number)\nNum(0) :- Node("seq", _, _, _, _).\nNum(x + 1) :- Num(x).\n'
        'OutLayout(n, r, m, 0, "Shard", x, "") :- Num(x), Pair(n, r, m), x < 0.\n',
        ("seminaive",),
    ),
    (
        '.decl Name(s: symbol)\nName(n) :- Node("seq", n, _, _, _).\nName(cat(s, "x")) :- Name(s).\n'
        'OutLayout(n, r, m, 0, "Shard", 0, "") :- Name(s), Pair(n, r, m), s = "never".\n',
        ("seminaive", "clingo", "souffle"),
    ),
]


def _installed(engines: tuple[str, ...]) -> list[str]:
    """The engines of ``engines`` that can run here (Soufflé is a binary that may be absent)."""
    from analyzer.engines import get_engine

    return [e for e in engines if not type(get_engine(e)).unavailable_reason()]
#: wrong user transfer rules (line 2 derives what the numbers refute on the seed graphs), with
#: the ranks they fire on: --numeric ends in exit 4 naming the rule
_WRONG_RULES = [
    (  # each rank adds the replicated bias to its partial sum: counted twice
        '// wrong\nOutLayout(n, r, m, 0, "Partial", a, p) :- Node("seq", n, "Add", "", _),\n'
        '    InPiece(n, r, m, 0, "Partial", a, p), InPiece(n, r, m, 1, "Replicate", _, _).\n',
        "rank_bug",
    ),
    (  # a row-parallel MatMul gives a partial sum, not the whole value
        '// wrong\nOutLayout(n, r, m, 0, "Replicate", -1, "") :- Node("seq", n, "MatMul", "", _),\n'
        '    InPiece(n, r, m, 0, "Shard", 1, _), InPiece(n, r, m, 1, "Shard", 0, _).\n',
        "rank",
    ),
]


def _rules(rng: random.Random, models: dict, k: int = -1) -> Case:
    d = "{dir}"
    kind = rng.choice(["golden"] * 12 + ["runaway", "protected", "check"] * 2 + ["engine runaway", "wrong rule"])
    files: dict[str, bytes | Link] = {"g/case/facts/E.facts": b"a\t3\nb\t0\n", "g/case/expected/F.csv": b""}
    args = [f"{d}/g", "--engine", "seminaive"]
    if kind == "golden":
        how, data = _mutate_text(rng, GOLDEN_PROGRAM if rng.random() < 0.5 else _library_rule(rng))
        files["g/case/program.dl"] = data
        return Case("rules", f"rules test: {how}", files, args, "rules test")
    if kind == "runaway":
        files["g/case/program.dl"] = (GOLDEN_PROGRAM + rng.choice(_RUNAWAY)).encode()
        return Case("rules", "rules test: runaway recursion", files, args, "rules test", (1, 2))
    seq, rank = fuzz._ser(models["seq"]), fuzz._ser(models["rank"])
    files = {"seq.onnx": seq, "rank0.onnx": rank, "rank1.onnx": rank}
    cargs = [f"{d}/seq.onnx", f"{d}/rank0.onnx", f"{d}/rank1.onnx", "--rules", f"{d}/rules"]
    if kind == "protected":
        files["rules/x.dl"] = (rng.choice(_PROTECTED) + "\n").encode()
        return Case("rules", "check --rules: a relation of the verdict", files, cargs, expect=(2,))
    if kind == "engine runaway":
        text, engines = rng.choice(_USER_RUNAWAY)
        engine = rng.choice(_installed(engines))
        files["rules/x.dl"] = text.encode()
        name = f"check --rules --engine {engine}: runaway user rule"
        return Case("rules", name, files, [*cargs, "--engine", engine], expect=(2,), says="x.dl:3:")
    if kind == "wrong rule":
        text, ranks = rng.choice(_WRONG_RULES)
        files["rank0.onnx"] = files["rank1.onnx"] = fuzz._ser(models[ranks])
        files["rules/x.dl"] = text.encode()
        return Case("rules", "check --rules --numeric: a wrong user rule", files, [*cargs, "--numeric"],
                    expect=(4,), says="derived by the user rule")
    how, data = _mutate_text(rng, _library_rule(rng))
    files["rules/x.dl"] = data
    return Case("rules", f"check --rules: {how}", files, cargs)


# --------------------------------------------------------------------------- fx dumps


def _published_dump(rng: random.Random) -> str:
    dumps = sorted((ROOT / "examples" / "entangle" / "published").rglob("fw.g0.r0.py"))
    small = [p for p in dumps if p.stat().st_size < 20_000]
    return rng.choice(small).read_text(encoding="utf-8") if small else FX_DUMP


def _fx(rng: random.Random, models: dict, k: int = -1) -> Case:
    d = "{dir}"
    base = FX_DUMP if rng.random() < 0.7 else _published_dump(rng)
    kind = rng.choice(["mutate", "mutate", "payload", "deep", "hostile name", "line splice"])
    if kind == "mutate":
        how, data = _mutate_text(rng, base)
        name = f"dump {how}"
    elif kind == "payload":
        payload = rng.choice(PAYLOADS)
        line = rng.choice(
            [
                f'        mm: "f32[4, 8]" = {payload}\n',
                f"        {payload}\n",
                f'        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, {payload})\n',
                f"    x: {payload}\n",
                f"import os; {payload}\n",
                f'        relu: "{payload}" = torch.ops.aten.relu.default(add)\n',
            ]
        )
        lines = base.splitlines(keepends=True)
        lines.insert(rng.randrange(1, len(lines)), line)
        data, name = "".join(lines).encode(), "code in the dump"
    elif kind == "deep":
        n = rng.choice([200, 900, 5000])
        expr = rng.choice(["+".join(["1"] * n), "-" * n + "1", "a." * n + "b", "[" * n + "1" + "]" * n])
        data = base.replace("torch.ops.aten.relu.default(add)", f"torch.ops.aten.relu.default(add, {expr})").encode()
        name = f"deep expression {n}"
    elif kind == "hostile name":
        s = rng.choice(fuzz.HOSTILE + FORGE)
        data = (
            base.replace("/src/model.py", s.replace('"', ""))
            .replace("relu", "relu" + "".join(c for c in s if c.isidentifier() or c.isdigit())[:50])
            .encode()
        )
        name = f"hostile name {s[:20]!r}"
    else:
        lines = base.splitlines(keepends=True)
        i, j = sorted(rng.randrange(len(lines)) for _ in range(2))
        data = "".join(lines[:i] + lines[j:] + lines[i:j]).encode()
        name = "lines moved"
    files: dict[str, bytes | Link] = {"dump.py": data}
    if rng.random() < 0.2:
        seq = FX_DUMP.encode()
        files["seq.py"] = seq
        return Case("fx", f"check: {name}", files, [f"{d}/seq.py", f"{d}/dump.py", f"{d}/dump.py"])
    args = [f"{d}/dump.py", "-o", f"{d}/out/o.onnx"]
    if rng.random() < 0.3:
        args += ["--constant", rng.choice(["_tensor_constant0=0", "_tensor_constant0=inf", "nope=1", "=", "x=1e999"])]
    if rng.random() < 0.2:
        args += ["--outputs", rng.choice(["0", "0,0,0", "1,0", "5", "-1", "0," * 5000 + "0", "a"])]
    if rng.random() < 0.2:
        args += ["--world-size", rng.choice(["1", "2", "0", "-1", "x"])]
    return Case("fx", f"import-fx: {name}", files, args, "import-fx")


# --------------------------------------------------------------------------- other commands


def _commands(rng: random.Random, models: dict, k: int = -1) -> Case:
    d = "{dir}"
    seq, rank = fuzz._ser(models["seq"]), fuzz._ser(models["rank"])
    s = rng.choice(fuzz.HOSTILE + FORGE)
    table = "s\tkind\taxis\tparam\nlogits\tReplicate\t-1\t\n"
    choices = [
        (
            "query path",
            "query",
            {"out/Holds.csv": table.encode(), "secret.csv": b"k\nhunter2\n"},
            [f"{d}/out", rng.choice(["../secret", "/etc/passwd", "Holds/../../secret", "Holds\x00", s or "x"])],
        ),
        (
            "query table",
            "query",
            {
                "out/Holds.csv": rng.choice(
                    [
                        b'"a\tb\n',
                        b"\xff\xfe",
                        b"",
                        b"s\n" + s.encode("utf-8", "replace"),
                        table.encode() + b"x\ty\tz\tw\tv\n",
                    ]
                )
            },
            [
                f"{d}/out",
                "Holds",
                *(["--where", rng.choice(["s=logits", "nope=1", "s", f"s={s}"])] if rng.random() < 0.5 else []),
            ],
        ),
        ("query missing", "query", {}, [f"{d}/nope", "Holds"]),
        (
            "facts",
            "facts",
            {"seq.onnx": seq, "taken": b"x"},
            [
                f"{d}/seq.onnx",
                "--out",
                rng.choice([f"{d}/taken", f"{d}/out/f", f"{d}/seq.onnx", f"{d}/out"]),
                *(["--graph", s] if rng.random() < 0.3 else []),
            ],
        ),
        ("rules test empty", "rules test", {"g/x": b""}, [f"{d}/g"]),
        (
            "rules test facts",
            "rules test",
            {
                "g/case/program.dl": GOLDEN_PROGRAM.encode(),
                "g/case/facts/E.facts": rng.choice(
                    [b"a\t1\n", b"a\n", b"a\t1\t2\n", b"a\tx\n", b"\xff\t1\n", s.encode("utf-8", "replace") + b"\t1\n"]
                ),
                "g/case/expected/F.csv": rng.choice([b"a\t1\na\t0\n", b"", b"zzz\n", b"\xff"]),
            },
            [f"{d}/g", "--engine", rng.choice(["seminaive", "nope", s or "x"])],
        ),
        (
            "rules test listing",
            "rules test",
            {
                "g/case/program.txt": rng.choice(
                    [b"/etc/*\n", b"../../*\n", b"rules/core/*.dl\n", b"\xff\n", b"**/*.dl\n", b"nope.dl\n"]
                ),
                "g/case/facts/E.facts": b"a\t1\n",
            },
            [f"{d}/g", "--engine", "seminaive"],
        ),
        (
            "check options",
            "check",
            {"seq.onnx": seq, "rank0.onnx": rank},
            [
                f"{d}/seq.onnx",
                f"{d}/rank0.onnx",
                f"{d}/rank0.onnx",
                *rng.choice(
                    [
                        ["--pp", "0"],
                        ["--pp", "-1"],
                        ["--pp", "3"],
                        ["--seed", "x"],
                        ["--engine", s or "x"],
                        ["--nope"],
                        ["--json"],
                        ["-q", "-v"],
                        ["--json", "-"],
                        ["--json", f"{d}/out"],
                        ["--html", f"{d}/out/r.html", "--sarif", f"{d}/out/r.html"],
                    ]
                ),
            ],
        ),
        (
            "import-fx options",
            "import-fx",
            {"dump.py": FX_DUMP.encode()},
            [
                f"{d}/dump.py",
                "-o",
                rng.choice([f"{d}/out/o.onnx", f"{d}/out", f"{d}/nope/o.onnx"]),  # -o - writes binary ONNX
                *rng.choice(
                    [
                        [],
                        ["--constant", s or "x"],
                        ["--constant", "_tensor_constant0=nan"],
                        ["--outputs", s or "x"],
                        ["--world-size", "0"],
                    ]
                ),
            ],
        ),
    ]
    name, command, files, args = fuzz._nth_or_random(rng, choices, k)
    return Case("commands", name, files, args, command)


# --------------------------------------------------------------------------- forged output


def _forge(rng: random.Random, models: dict, k: int = -1) -> Case:
    seq, bug = copy.deepcopy(models["seq"]), copy.deepcopy(models["rank_bug"])
    s = rng.choice(FORGE)
    where = rng.choice(["node", "output", "scope", "source", "all"])
    for m in (seq, bug):
        if where in ("node", "all"):
            for i, n in enumerate(m.graph.node):
                n.name = f"{s}{i}"
        if where in ("scope", "all"):
            for n in m.graph.node:
                fuzz.helper.set_metadata_props(n, {"pkg.torch.onnx.name_scopes": repr(["", s, "m"])})
        if where in ("source", "all"):
            for n in m.graph.node:
                trace = f'File "{s}.py", line 3, in f\n  {s}\n'
                fuzz.helper.set_metadata_props(n, {"pkg.torch.onnx.stack_trace": trace})
    if where in ("output", "all"):
        fuzz._rename_value([seq, bug], "y", s)
    d = "{dir}"
    files = {"seq.onnx": fuzz._ser(seq), "bug.onnx": fuzz._ser(bug)}
    args = [f"{d}/seq.onnx", f"{d}/bug.onnx", f"{d}/bug.onnx", "-v", "--explain"]
    args += rng.choice([[], ["--json", f"{d}/out/r.json", "--html", f"{d}/out/r.html", "--sarif", f"{d}/out/r.sarif"]])
    return Case("forge", f"{where}: {s[:20]!r}", files, args, expect=(1, 2))


GENERATORS = {
    "files": lambda rng, models, k: _files(rng, models, k) if rng.random() < 0.65 else _outputs(rng, models, k),
    "yaml": _yaml,
    "rules": _rules,
    "fx": _fx,
    "commands": _commands,
    "forge": _forge,
}
