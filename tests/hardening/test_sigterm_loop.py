"""SIGTERM at random moments of a real ``primaldual ratio`` (while it imports, starts its pool, or runs): exit
143, at most one line on stderr (no traceback, no leaked-semaphore warning), no process left behind. A few
kills here; ``primaldual bench sigterm`` runs the 40-kill loop (docs/input-ranges.md, "Signals")."""

from __future__ import annotations

import random

import pytest

from primaldual.commands.bench.sigterm import kill_once


@pytest.mark.xfail(strict=False, reason=(
    "open defect, issue 29 item 7: a pool worker or its solver process stopped while it starts leaves the "
    "semaphore Pyomo makes at import registered with the shared resource tracker, which then warns 'leaked "
    "semaphore objects' (or, after a partial cleanup, prints its own error) after our one line; reproducible at "
    "this test's first delay, 1.87 s"))
def test_a_few_sigterms_at_random_moments_end_cleanly(tmp_path):
    rng = random.Random(29)
    for n in range(3):
        folder = tmp_path / str(n)
        folder.mkdir()
        kill = kill_once(rng.uniform(0.5, 3.0), 40, folder)
        assert kill.ok, kill
        assert kill.lines in ([], ["primaldual ratio: terminated (SIGTERM)"], ["primaldual: terminated (SIGTERM)"])
