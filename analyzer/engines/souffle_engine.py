"""Run the real Soufflé (the ``souffle`` binary, 2.5, interpreter mode).

Which binary (:func:`find_souffle`), first found wins:

1. ``$SHARDLOG_SOUFFLE``: an explicit path (or a command name on PATH);
2. ``../shared/tools/souffle/souffle`` beside the source checkout the package runs from (the
   build of Soufflé 2.5 this project keeps there, README beside it);
3. ``souffle`` on PATH.

Each run leaves out the rules that cannot change an output on its facts
(:mod:`analyzer.speedups.relevance`, as the other engines; ``SouffleEngine.prune``) and works in
a fresh temporary directory:

* ``facts/<Name>.facts``: every ``.input`` relation, every relation given as facts and every
  relation with no rule and no fact in the program (empty: EDB that was not given; Soufflé
  would warn "No rules/facts defined"), tab-separated (Soufflé's default: the file name is the
  relation name);
* ``program.dl``: the checked program printed back as one file
  (:func:`analyzer.datalog.printer.to_souffle_with_origins`: includes resolved, rules normalised,
  divisions guarded), plus an ``.input`` directive for each of those relations that the
  program does not read;
* ``souffle --no-preprocessor -F facts -D out program.dl`` runs with an argument list (no
  shell), a timeout and a return-code check; the program has no ``#include`` left, so no C
  preprocessor is needed (Soufflé's default would run ``mcpp``);
* Soufflé's messages on stderr become one line each, ``program.dl`` lines replaced by the
  file and line of the rule or declaration printed there: a warning is issued as an
  :class:`~analyzer.engines.base.EngineWarning` (the CLI prints ``shardlog: warning: ...``), an
  error (non-zero exit status) is the :class:`EngineError`'s message, except
  ``to_number`` of a non-number, a :class:`~analyzer.datalog.functors.FunctorError` as on the other
  engines;
* ``out/<Name>.csv`` (tab-separated) is read back for each ``.output`` relation, number
  columns converted to ``int``.

Without a binary, :class:`EngineUnavailable` says so in one line.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import analyzer
from analyzer.datalog.errors import NOWHERE, DatalogError, Loc
from analyzer.datalog.facts_io import read_relation_file, write_relation_file
from analyzer.datalog.functors import FunctorError
from analyzer.datalog.printer import to_souffle_with_origins
from analyzer.datalog.syntax import Program
from analyzer.engines.base import (
    Engine,
    EngineError,
    EngineUnavailable,
    EngineWarning,
    finish_outputs,
    validate_facts,
)
from analyzer.engines.limits import SOUFFLE_MEMORY, SOUFFLE_OUTPUT, engine_seconds, limit_error
from analyzer.speedups.relevance import kept_on_facts

__all__ = ["ENV_VAR", "SouffleEngine", "find_souffle", "souffle_messages"]

#: Environment variable naming the ``souffle`` binary explicitly.
ENV_VAR = "SHARDLOG_SOUFFLE"
#: Where the project keeps its Soufflé build, relative to the source checkout's root.
CHECKOUT_BINARY = Path("..") / "shared" / "tools" / "souffle" / "souffle"

_MISSING = (
    f"Soufflé not found: no {CHECKOUT_BINARY} beside the checkout and no souffle on PATH; "
    f"set {ENV_VAR}=/path/to/souffle or use the default engine"
)
# a message of Soufflé's starts a line: "Error: ...", "Warning: ...", "error: wrong string ...",
# "Floating-point arithmetic exception signal in rule:"
_MESSAGE_START = re.compile(r"^(?:(?P<kind>Error|Warning|error|warning)\b|.*\bsignal in rule\b)")
_WHERE = re.compile(r"\s*in file (?P<file>\S+?)(?: at line (?P<line>\d+)| \[(?P<span_line>\d+):[^\]]*\])")
_TO_NUMBER = re.compile(r"wrong string provided by `to_number\((.*)\)` functor")
_SUMMARY = re.compile(r"^\d+ errors? generated, evaluation aborted")


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_souffle() -> tuple[str | None, str]:
    """Locate the ``souffle`` binary.

    Returns:
        ``(path, "")`` when found, else ``(None, reason)`` with a one-line reason.
    """
    explicit = os.environ.get(ENV_VAR, "").strip()
    if explicit:
        if _executable(Path(explicit)):
            return str(Path(explicit).resolve()), ""
        found = shutil.which(explicit) if os.sep not in explicit else None
        if found:
            return found, ""
        return None, f"{ENV_VAR}={explicit} is not an executable file"
    checkout = Path(analyzer.__file__).resolve().parent.parent
    beside = checkout / CHECKOUT_BINARY
    if _executable(beside):
        return str(beside.resolve()), ""
    found = shutil.which("souffle")
    if found:
        return found, ""
    return None, _MISSING


def souffle_messages(stderr: str, program_file: str, origins: list[Loc]) -> list[tuple[str, str]]:
    """Soufflé's stderr as one line per message.

    Soufflé prints a message over several lines (the message, then the source line and a
    ``---^---`` marker, or the rule); the message line is kept, its ``in file program.dl at line
    N`` replaced by the file and line of what was printed at line N.

    Args:
        stderr: Soufflé's standard error.
        program_file: The path of the printed program as given to Soufflé.
        origins: Per printed line (0-based), where it came from
            (:func:`analyzer.datalog.printer.to_souffle_with_origins`).

    Returns:
        ``(kind, text)`` pairs, ``kind`` ``"warning"`` or ``"error"``, in Soufflé's order.
    """
    blocks: list[list[str]] = []
    for line in stderr.splitlines():
        if _SUMMARY.match(line.strip()):
            continue
        if _MESSAGE_START.match(line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    out = []
    for block in blocks:
        head = block[0].strip()
        if not head:
            continue
        kind = "warning" if head.lower().startswith("warning") else "error"
        where = next((m for m in map(_WHERE.search, block) if m), None)
        text = _WHERE.sub("", head).rstrip(":").strip() if where else head
        if where is not None:
            number = int(where.group("line") or where.group("span_line"))
            ours = Path(where.group("file")).name == Path(program_file).name and 0 < number <= len(origins)
            loc = origins[number - 1] if ours else NOWHERE
            text += f" ({loc})" if loc != NOWHERE else f" ({where.group('file')} line {number})"
        out.append((kind, text))
    return out


class SouffleEngine(Engine):
    """Evaluate with the ``souffle`` executable (interpreter mode).

    Args:
        executable: Path or name of the binary; ``None``: :func:`find_souffle`.
        timeout: Seconds before the run is abandoned; ``None``:
            :func:`~analyzer.engines.limits.engine_seconds` (``$SHARDLOG_ENGINE_SECONDS``, 600).
        jobs: Threads for Soufflé (``-j``); ``None`` leaves Soufflé's default (1).
    """

    name = "souffle"
    #: leave out rules that cannot change an output on the given facts
    #: (:mod:`analyzer.speedups.relevance`, as the other engines do): Soufflé's front end costs
    #: ~4 ms per rule (llama_tp2: 645 rules 4.8 s, the 306 kept 1.7 s, same outputs); off to
    #: run the whole program (tests)
    prune = True

    def __init__(self, executable: str | None = None, timeout: float | None = None, jobs: int | None = None) -> None:
        self.executable = executable
        self.timeout = timeout
        self.jobs = jobs

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why Soufflé cannot run here, or ``None``.

        Returns:
            A one-line reason, or ``None``.
        """
        return find_souffle()[1] or None

    def _binary(self) -> str:
        if self.executable is None:
            exe, reason = find_souffle()
            if exe is None:
                raise EngineUnavailable(reason)
            return exe
        exe = shutil.which(self.executable)
        if exe is None:
            raise EngineUnavailable(f"{self.executable} not found; use the default engine")
        return exe

    def run(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
        """Evaluate ``program`` over ``facts`` with Soufflé.

        Args:
            program: A checked program.
            facts: Relation name -> tuples (the EDB).

        Returns:
            Every output relation as a sorted list of tuples.

        Raises:
            DatalogError: On bad facts (including symbols with tabs or newlines).
            FunctorError: When Soufflé stops at ``to_number`` of a symbol that is not a number
                (Soufflé reads a numeric prefix, ``"12ab"`` is 12, where the other engines raise).
            EngineUnavailable: If no ``souffle`` binary is found (see :func:`find_souffle`).
            EngineError: If Soufflé fails (its first error, one line), times out, writes no
                output file or writes one that cannot be read back.

        Warns:
            EngineWarning: One per warning Soufflé prints (e.g. a variable that occurs once).
        """
        exe = self._binary()
        edb = validate_facts(program, facts)
        if self.prune:
            kept = kept_on_facts(program, {name: list(rows) for name, rows in edb.items()})
            program = dataclasses.replace(program, rules=[program.rules[i] for i in kept])
        with tempfile.TemporaryDirectory(prefix="shardlog-souffle-") as tmp:
            root = Path(tmp)
            facts_dir, out_dir = root / "facts", root / "out"
            facts_dir.mkdir()
            out_dir.mkdir()
            # a relation without rules or facts in the program is EDB too: read (empty) from a file
            derived = {r.head.relation for r in program.rules} | {f.relation for f in program.facts}
            edb_only = [name for name in program.decls if name not in derived]
            inputs = list(dict.fromkeys([*program.inputs, *edb, *edb_only]))
            for name in inputs:
                write_relation_file(facts_dir / f"{name}.facts", program.decls[name], sorted(edb.get(name, ())))
            source = root / "program.dl"
            extra = [name for name in inputs if name not in program.inputs]
            text, origins = to_souffle_with_origins(program, extra_inputs=extra)
            source.write_text(text, encoding="utf-8")
            cmd = [exe, "--no-preprocessor", "-F", str(facts_dir), "-D", str(out_dir)]
            if self.jobs is not None:
                cmd += ["-j", str(self.jobs)]
            cmd.append(str(source))
            seconds = self.timeout if self.timeout is not None else engine_seconds()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds, check=False,
                                      preexec_fn=_limit_resources if os.name == "posix" else None)
            except subprocess.TimeoutExpired:
                raise limit_error("souffle", program, None, f"over {seconds:g} s") from None
            except OSError as exc:
                raise EngineUnavailable(f"cannot run {exe}: {exc.strerror or exc}; use the default engine") from None
            messages = souffle_messages(proc.stderr, str(source), origins)
            for kind, message in messages:
                if kind == "warning":
                    warnings.warn(EngineWarning(f"souffle: {message}"), stacklevel=2)
            over = _over_limit(proc.returncode, proc.stderr)
            if over:
                raise limit_error("souffle", program, None, over)
            if proc.returncode != 0:
                errors = [m for k, m in messages if k == "error"] or ["no message"]
                bad = next((m for m in map(_TO_NUMBER.search, errors) if m), None)
                if bad is not None:  # the other engines' FunctorError (functors.to_number)
                    raise FunctorError(f"to_number({bad.group(1)}): not a decimal integer (souffle: {errors[0]})")
                more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                raise EngineError(f"souffle exited with status {proc.returncode}: {errors[0]}{more}")
            rows = {}
            for name in program.outputs:
                path = out_dir / f"{name}.csv"
                if not path.is_file():
                    raise EngineError(f"souffle wrote no {path.name} for output relation {name}")
                try:
                    rows[name] = read_relation_file(path, program.decls[name])
                except DatalogError as exc:
                    raise EngineError(
                        f"souffle's {path.name} cannot be read back ({exc.message}): a derived symbol with a "
                        "tab or newline does not fit Soufflé's tab-separated output"
                    ) from None
        return finish_outputs(program, rows)


def _limit_resources() -> None:
    """In the Soufflé subprocess, before it runs: the address space and the size of any file it
    writes are bounded (:data:`~analyzer.engines.limits.SOUFFLE_MEMORY`,
    :data:`~analyzer.engines.limits.SOUFFLE_OUTPUT`), so a runaway rule ends in an allocation
    failure or ``SIGXFSZ`` instead of exhausting the machine."""
    import resource

    for which, cap in ((resource.RLIMIT_AS, SOUFFLE_MEMORY), (resource.RLIMIT_FSIZE, SOUFFLE_OUTPUT)):
        soft, hard = resource.getrlimit(which)
        cap = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(which, (cap, hard))


def _over_limit(returncode: int, stderr: str) -> str | None:
    """What limit of :func:`_limit_resources` a Soufflé run that failed went over, or None."""
    import signal

    if returncode == -getattr(signal, "SIGXFSZ", 25):
        return f"an output file over {SOUFFLE_OUTPUT >> 20:,} MiB"
    if returncode != 0 and any(m in stderr for m in ("bad_alloc", "Cannot allocate memory", "std::length_error")):
        return f"over {SOUFFLE_MEMORY >> 30} GiB of memory"
    if returncode in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) and not stderr.strip():
        return f"killed by signal {-returncode} (memory limit {SOUFFLE_MEMORY >> 30} GiB?)"
    return None
