"""Feedback on long work, on stderr only (``--json`` output on stdout is never touched), and only for work that
lasts: quick commands print nothing.

- :func:`activity`: a tqdm line (``DESCRIPTION: elapsed, latest news``) that appears once the work has run
  :data:`ANNOUNCE_AFTER` seconds and is refreshed every second, for work without a count (an ILP solve, a
  simulation, an LB-BSP sweep);
- :func:`slow_steps`: the steps of ``compare``, each announced when it outlasts :data:`ANNOUNCE_AFTER`;
- counted work (``ratio``, ``reproduce``) has its own tqdm bar (:mod:`primaldual.sweep.driver`).

Every command that can run past a few seconds takes ``--no-progress`` (:func:`add_progress_flag`); progress
is also off when stderr is not a terminal (:func:`progress_enabled`), so logs and pipes get no bar.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator, TextIO

#: A step silent for this many seconds is announced.
ANNOUNCE_AFTER = 3.0


def add_progress_flag(parser) -> None:
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr (it is also off when stderr is not a terminal)")


def progress_enabled(args) -> bool:
    """Progress is shown unless ``--no-progress`` was given or stderr is not a terminal."""
    return not getattr(args, "no_progress", False) and sys.stderr.isatty()


@contextmanager
def activity(description: str, enabled: bool, after: float = ANNOUNCE_AFTER,
             stream: TextIO | None = None) -> Iterator[Callable[[str], None]]:
    """Show ``DESCRIPTION: elapsed[, news]`` on ``stream`` (stderr) while the block runs past ``after`` seconds.

    Yields ``news(text)``, which puts the latest word of the work (a solver's incumbent and bound, say) beside
    the elapsed time. Disabled, it shows nothing and ``news`` does nothing. A daemon thread draws the line, so
    work that never yields control (a solver call) still shows time passing; the line is removed at the end.
    """
    latest = [""]
    if not enabled:
        quiet = lambda text: None  # noqa: E731
        quiet.finish = lambda: None  # type: ignore[attr-defined]
        yield quiet
        return
    from tqdm import tqdm

    started = time.monotonic()
    stop = threading.Event()
    lock = threading.Lock()
    bar = []

    def draw() -> None:
        if stop.wait(after):
            return
        with lock:
            if stop.is_set():
                return
            # delay > 0: tqdm draws nothing until the first refresh, after the clock is set back to the start.
            bar.append(tqdm(total=None, desc=description, file=stream or sys.stderr, leave=False, delay=after,
                            bar_format="{desc}: {elapsed}{postfix}"))
            bar[0].start_t -= time.monotonic() - started  # elapsed since the work began, not since the line
            bar[0].set_postfix_str(latest[0], refresh=True)
        while not stop.wait(1.0):
            with lock:
                if not stop.is_set():
                    bar[0].set_postfix_str(latest[0], refresh=True)

    def finish() -> None:
        with lock:
            stop.set()
            if bar:
                bar[0].close()  # idempotent: wipes the line once

    thread = threading.Thread(target=draw, daemon=True)
    thread.start()
    news = lambda text: latest.__setitem__(0, text)  # noqa: E731
    news.finish = finish  # type: ignore[attr-defined]
    try:
        yield news
    finally:
        finish()
        thread.join()


class _FinishFirst:
    """``stdout`` that ends the progress line before its first write (the terminal shares the line)."""

    def __init__(self, stream, finish: Callable[[], None]):
        self._stream, self._finish = stream, finish

    def write(self, text: str) -> int:
        self._finish()
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def with_activity(description: str, handler: Callable) -> Callable:
    """``handler(args)`` run inside :func:`activity` (``description``: the command's name), honouring
    ``--no-progress``; for commands whose work has no count to show."""

    def run(args):
        enabled = progress_enabled(args)
        with activity(description, enabled) as news:
            if not enabled:
                return handler(args)
            stdout, sys.stdout = sys.stdout, _FinishFirst(sys.stdout, news.finish)
            try:
                return handler(args)
            finally:
                sys.stdout = stdout

    return run


def slow_steps(command: str, after: float = ANNOUNCE_AFTER, stream: TextIO | None = None,
               enabled: bool = True) -> Callable[[str], ContextManager]:
    """``step(description)`` context managers for :func:`primaldual.evaluation.pipeline.evaluate`: a step still running
    after ``after`` seconds prints ``COMMAND: DESCRIPTION...`` and, when it ends, how long it took (nothing when
    not ``enabled``)."""

    @contextmanager
    def step(description: str) -> Iterator[None]:
        if not enabled:
            yield
            return
        out = stream or sys.stderr
        started = time.perf_counter()
        announced = threading.Event()

        def announce():
            announced.set()
            print(f"{command}: {description} ...", file=out, flush=True)

        timer = threading.Timer(after, announce)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            if announced.is_set():
                print(f"{command}: {description}: done in {time.perf_counter() - started:.1f} s", file=out, flush=True)

    return step


#: Counted work is shown once it has run this long; off a terminal, one plain line at most this often.
COUNTED_AFTER = 10.0
PLAIN_EVERY = 30.0


@contextmanager
def progress_bar(description: str, unit: str = "step", enabled: bool = True,
                 stream: TextIO | None = None):
    """A factory ``progress(total) -> tick`` for long counted loops (LB-BSP replay and sweep).

    On a terminal: a tqdm bar on stderr (never stdout, so ``--json`` stays one object) that appears only once
    the work has run :data:`COUNTED_AFTER` seconds. Off a terminal (a log, a pipe): no bar, but one plain
    line ``DESCRIPTION: done/total UNIT (p%), elapsed s`` at most every :data:`PLAIN_EVERY` seconds after
    the first :data:`COUNTED_AFTER`, so a long run in a log is never silent and never floods it. Disabled
    (``--no-progress``): nothing. Cost: one clock read per tick.
    """
    out = stream or sys.stderr
    closers: list[Callable[[], None]] = []

    def start(total: int):
        if not enabled:
            return lambda n=1: None
        if out.isatty():
            from tqdm import tqdm

            bar = tqdm(total=total, desc=description, unit=unit, file=out, delay=COUNTED_AFTER,
                       mininterval=1.0, smoothing=0.1, leave=True)
            closers.append(bar.close)
            return bar.update
        return _plain_ticks(description, unit, total, out)

    try:
        yield start
    finally:
        for close in closers:
            close()


def _plain_ticks(description: str, unit: str, total: int, out: TextIO) -> Callable[..., None]:
    started = time.monotonic()
    state = {"done": 0, "next": started + COUNTED_AFTER}

    def tick(n: int = 1) -> None:
        state["done"] += n
        now = time.monotonic()
        if now >= state["next"]:
            state["next"] = now + PLAIN_EVERY
            share = 100.0 * state["done"] / total if total else 100.0
            print(f"{description}: {state['done']}/{total} {unit} ({share:.0f}%), {now - started:.0f} s",
                  file=out, flush=True)

    return tick


__all__ = ["ANNOUNCE_AFTER", "COUNTED_AFTER", "PLAIN_EVERY", "activity", "add_progress_flag", "progress_bar",
           "progress_enabled", "slow_steps", "with_activity"]
