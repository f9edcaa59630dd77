"""The sweep task of ``primaldual reproduce`` and the notebooks, and the RRH readings' names it runs.

The readings themselves (``rrh-full-reward``, ``rrh-nonpreemptive``) are defined and registered in
:mod:`primaldual.baselines.readings`; :data:`READINGS` is re-exported here for the reproduction's report.
"""

from __future__ import annotations

from primaldual.baselines.readings import READINGS


def run_task(spec):
    """:func:`primaldual.sweep.task.run`, importable by spawned workers by a stable name."""
    from primaldual.sweep.task import run

    return run(spec)


__all__ = ["READINGS", "run_task"]
