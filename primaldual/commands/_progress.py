"""Feedback on long work: a step that runs longer than a few seconds says so on stderr, and when it ends.

Quick steps print nothing, so short commands stay quiet and ``--json`` output on stdout is never touched.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator, TextIO

#: A step silent for this many seconds is announced.
ANNOUNCE_AFTER = 3.0


def slow_steps(command: str, after: float = ANNOUNCE_AFTER, stream: TextIO | None = None) -> Callable[[str], ContextManager]:
    """``step(description)`` context managers for :func:`primaldual.evaluation.pipeline.evaluate`: a step still running
    after ``after`` seconds prints ``COMMAND: DESCRIPTION...`` and, when it ends, how long it took."""

    @contextmanager
    def step(description: str) -> Iterator[None]:
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


@contextmanager
def progress_bar(description: str, unit: str = "step"):
    """A factory ``progress(total) -> tick`` for the long LB-BSP loops: a tqdm bar on stderr (never stdout, so
    ``--json`` stays one object) that appears only once the work has run for 10 s, so short runs stay quiet."""
    from tqdm import tqdm

    bars = []

    def start(total: int):
        bar = tqdm(total=total, desc=description, unit=unit, file=sys.stderr, delay=10.0, mininterval=1.0,
                   smoothing=0.1, leave=True)
        bars.append(bar)
        return bar.update

    try:
        yield start
    finally:
        for bar in bars:
            bar.close()


__all__ = ["ANNOUNCE_AFTER", "progress_bar", "slow_steps"]
