"""Which stage a check is in, for a progress display on the terminal.

The stages of a check call :func:`stage` as they start (``import``: the files loaded and their
input relations worked out, :mod:`analyzer.inputs.load`; ``facts``: the facts the rules start
from, :func:`analyzer.solve.derive.check_facts`; ``solve``: the engine's run; ``witness``: the
numeric witness and the triage on numbers). Nothing listens unless a caller installs a
listener with :func:`listening` (the CLI does, with :class:`StageProgress`, only when standard
error is a terminal); a stage started with no listener costs one context-variable read.

:class:`StageProgress` draws the stages with :mod:`rich.progress` (one line per stage: a
spinner while it runs, its elapsed time), on standard error, only once the run has taken
longer than ``delay`` seconds (a quick check prints nothing), and erases itself when done.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

__all__ = ["STAGES", "StageProgress", "listening", "stage"]

#: The stages a check reports, in the order they first run.
STAGES = ("import", "facts", "solve", "witness")

_listener: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "shardlog_progress", default=None
)


def stage(name: str) -> None:
    """Say that stage ``name`` (one of :data:`STAGES`) starts; the one before it is done."""
    listener = _listener.get()
    if listener is not None:
        listener(name)


@contextlib.contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """Call ``listener(name)`` for each :func:`stage` started inside the block (this thread and
    context only)."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class StageProgress:
    """A :mod:`rich.progress` display of the stages, shown after ``delay`` seconds.

    Use as a context manager and pass the instance to :func:`listening`::

        with StageProgress(console) as shown, listening(shown):
            run_check(...)

    Args:
        console: a :class:`rich.console.Console` on standard error (the caller decides it is a
            terminal; nothing here checks).
        delay: seconds before the display appears (the stages seen so far appear at once).
    """

    def __init__(self, console, delay: float = 1.0) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn

        self._progress = Progress(
            SpinnerColumn(finished_text="[green]done"),
            TextColumn("{task.description:<8}"),
            TextColumn("[yellow]{task.elapsed:6.1f} s"),
            console=console,
            transient=True,
        )
        self._delay = delay
        self._tasks: dict[str, int] = {}
        self._current: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._started = False

    def __call__(self, name: str) -> None:
        with self._lock:
            if name == self._current:
                return
            self._finish_current()
            self._current = name
            if name in self._tasks:  # a stage run again (a rederive, a second mesh axis)
                self._progress.reset(self._tasks[name], total=1, completed=0)
            else:
                self._tasks[name] = self._progress.add_task(name, total=1)

    def _finish_current(self) -> None:
        if self._current is not None:
            self._progress.update(self._tasks[self._current], completed=1)

    def _show(self) -> None:
        with self._lock:
            if not self._started and self._timer is not None:
                self._progress.start()
                self._started = True

    def __enter__(self) -> StageProgress:
        self._timer = threading.Timer(self._delay, self._show)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()
            self._finish_current()
            if self._started:
                self._progress.stop()
                self._started = False
