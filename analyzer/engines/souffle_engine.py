"""Run the real Soufflé (the ``souffle`` binary) when it is on PATH.

Each run works in a fresh temporary directory:

* ``facts/<Name>.facts``: every ``.input`` relation and every relation given as facts,
  tab-separated (Soufflé's default: the file name is the relation name);
* ``program.dl``: the checked program printed back as one file
  (:func:`analyzer.datalog.printer.to_souffle`, includes resolved, rules normalised), plus an
  ``.input`` directive for each relation given as facts that the program does not read;
* ``souffle -F facts -D out program.dl`` runs with an argument list (no shell), a timeout,
  and a return-code check (stderr is only quoted in the error, never parsed);
* ``out/<Name>.csv`` (tab-separated) is read back for each ``.output`` relation, number
  columns converted to ``int``.

Without ``souffle`` on PATH, :class:`EngineUnavailable` says so in one line.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from analyzer.datalog.facts_io import read_relation_file, write_relation_file
from analyzer.datalog.printer import to_souffle
from analyzer.datalog.syntax import Program
from analyzer.engines.base import (
    Engine,
    EngineError,
    EngineUnavailable,
    finish_outputs,
    validate_facts,
)

__all__ = ["SouffleEngine"]

_MISSING = "souffle is not on PATH; install Soufflé or use --engine clingo"


class SouffleEngine(Engine):
    """Evaluate with the ``souffle`` executable (interpreter mode).

    Args:
        executable: Name or path of the binary.
        timeout: Seconds before the run is abandoned.
        jobs: Threads for Soufflé (``-j``); ``None`` leaves Soufflé's default.
    """

    name = "souffle"

    def __init__(self, executable: str = "souffle", timeout: float = 3600.0, jobs: int | None = None) -> None:
        self.executable = executable
        self.timeout = timeout
        self.jobs = jobs

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why Soufflé cannot run here, or ``None``.

        Returns:
            A one-line reason, or ``None``.
        """
        return None if shutil.which("souffle") else _MISSING

    def run(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> dict[str, list[tuple]]:
        """Evaluate ``program`` over ``facts`` with Soufflé.

        Args:
            program: A checked program.
            facts: Relation name -> tuples (the EDB).

        Returns:
            Every output relation as a sorted list of tuples.

        Raises:
            DatalogError: On bad facts (including symbols with tabs or newlines).
            EngineUnavailable: If ``souffle`` is not on PATH.
            EngineError: If Soufflé fails, times out or writes no output file.
        """
        exe = shutil.which(self.executable)
        if exe is None:
            raise EngineUnavailable(
                _MISSING if self.executable == "souffle" else f"{self.executable} not found; use --engine clingo"
            )
        edb = validate_facts(program, facts)
        with tempfile.TemporaryDirectory(prefix="shardlog-souffle-") as tmp:
            root = Path(tmp)
            facts_dir, out_dir = root / "facts", root / "out"
            facts_dir.mkdir()
            out_dir.mkdir()
            for name in dict.fromkeys([*program.inputs, *edb]):
                write_relation_file(facts_dir / f"{name}.facts", program.decls[name], sorted(edb.get(name, ())))
            source = root / "program.dl"
            extra = [name for name in edb if name not in program.inputs]
            source.write_text(to_souffle(program, extra_inputs=extra), encoding="utf-8")
            cmd = [exe, "-F", str(facts_dir), "-D", str(out_dir)]
            if self.jobs is not None:
                cmd += ["-j", str(self.jobs)]
            cmd.append(str(source))
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, check=False)
            except subprocess.TimeoutExpired:
                raise EngineError(f"souffle did not finish within {self.timeout:g} s") from None
            except OSError as exc:
                raise EngineUnavailable(f"cannot run {exe}: {exc.strerror or exc}; use --engine clingo") from None
            if proc.returncode != 0:
                detail = next((line.strip() for line in proc.stderr.splitlines() if line.strip()), "no message")
                raise EngineError(f"souffle exited with status {proc.returncode}: {detail}")
            rows = {}
            for name in program.outputs:
                path = out_dir / f"{name}.csv"
                if not path.is_file():
                    raise EngineError(f"souffle wrote no {path.name} for output relation {name}")
                rows[name] = read_relation_file(path, program.decls[name])
        return finish_outputs(program, rows)
