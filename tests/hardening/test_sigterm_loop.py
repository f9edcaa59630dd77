"""SIGTERM at random moments of a real ``primaldual ratio`` (while it imports, starts its pool, or runs): exit
143, at most one line on stderr (no traceback, no leaked-semaphore warning), no process left behind. A few
kills here; ``primaldual bench sigterm`` runs the 40-kill loop (docs/input-ranges.md, "Signals")."""

from __future__ import annotations

import multiprocessing
import random

import pytest

from primaldual.sweep.sigterm import kill_once


def _report_pyomo_lock(queue) -> None:  # runs in a spawned child, as a pool worker or a solver process does
    import os

    from primaldual.backends.processes import exit_with_parent

    exit_with_parent(os.getppid())
    import pyomo.environ  # noqa: F401  (the whole import a solver child makes)
    from pyomo.common import dependencies

    semlock = getattr(dependencies.capture_output_lock, "_semlock", None)
    queue.put((type(dependencies.capture_output_lock).__name__, None if semlock is None else semlock.name,
               multiprocessing.get_start_method()))


def test_a_child_holds_pyomos_import_lock_unnamed_so_its_death_cannot_leak_it():
    """Pyomo's import-time ``multiprocessing.Lock`` is a named, tracker-registered semaphore under spawn; made
    by :func:`exit_with_parent` it has no name (unlinked at creation), and the child's start method is
    restored. A named one is what the tracker reported as leaked after a SIGTERM of ``ratio``."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_report_pyomo_lock, args=(queue,))
    child.start()
    kind, name, method = queue.get(timeout=120)
    child.join(30)
    assert kind == "Lock"  # a process lock, as Pyomo wants, only not a named one
    assert name is None
    assert method == "spawn"


@pytest.mark.slow  # 10 s of real signals; tests/sweep/test_processes.py sends one in the fast tier
def test_a_few_sigterms_at_random_moments_end_cleanly(tmp_path):
    rng = random.Random(29)
    for n in range(3):
        folder = tmp_path / str(n)
        folder.mkdir()
        kill = kill_once(rng.uniform(0.5, 3.0), 40, folder)
        assert kill.ok, kill
        assert kill.lines in ([], ["primaldual ratio: terminated (SIGTERM)"], ["primaldual: terminated (SIGTERM)"])
