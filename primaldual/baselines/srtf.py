"""SRTF: preemptive shortest remaining time first, the clairvoyant reference for job completion time.

Source: Schrage's SRPT rule (optimal for mean response time on one server, Schrage 1968), the ``shortest``
scheme of Tiresias's simulator ("shortest-remaining-time job first",
https://github.com/SymbioticLab/Tiresias/blob/b0ef8449aaa1ad1a61b922de3ab65fd87a3dcf2e/simulator/run_sim.py) and the clairvoyant reference the field's papers compare against (Tiresias NSDI'19, section 2.2:
SRTF needs the remaining time, which a DL cluster does not know). docs/papers.md states the adaptations.

Rule, at every slot ``t``:

* each active job's **remaining time** is ``ceil(R_i / w_i)`` slots: its remaining work ``R_i`` at the fastest
  allocation it may have, ``w_i = min(N_i, V_i, what fits on the empty cluster with its PSs)``
  (:func:`primaldual.simulation.placement.widest`); a job with ``w_i = 0`` can never run and is passed over;
* jobs are served shortest remaining time first (ties: lower index, i.e. earlier arrival), each with as many
  workers as fit, up to ``min(N_i, R_i)``, and the PSs eq. (6) needs (:func:`.ordered.serve_in_order`): a job
  that finds no room is passed over and the next one tries;
* the order is recomputed every slot from an empty cluster: **preemptive**; a newcomer with less remaining
  time takes resources from a running job. Under the simulator's restart costs each such change costs the
  job ``F`` of that slot's work, as it does every scheduler.

Clairvoyant: it reads ``V_i`` (through ``widest``) and the remaining work every slot. Choices in the baseline's
favour, as for the paper's baselines (:mod:`primaldual.baselines`): a job that cannot finish by the horizon at
its width is not run (``skip_unfinishable``), and no job gets a worker beyond its remaining work.

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): the order reads the remaining work on each job's
fastest type; each job's workers go to the first type with room, capped by the work left on its slowest type,
then trimmed to what its type needs.

Parameters: ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).

Cost per slot: a sort of the active jobs and one placement search per job served.
"""

from __future__ import annotations

import numpy as np

from primaldual.baselines import parameter_specs
from primaldual.baselines.ordered import job_tables, serve_in_order
from primaldual.baselines.finishing import FinishingBaseline
from primaldual.simulation.placement import FreeCapacity, fit_to_need, most_needed
from primaldual.simulation.scheduler import Allocation, SlotState


def remaining_times(remaining: np.ndarray, widest: np.ndarray) -> np.ndarray:
    """``ceil(R_i / w_i)`` slots; infinite where ``w_i = 0`` (the job fits nowhere)."""
    remaining = np.asarray(remaining, dtype=np.int64)
    widest = np.asarray(widest, dtype=np.int64)
    out = np.full(remaining.shape, np.inf)
    runs = widest > 0
    out[runs] = -(-remaining[runs] // widest[runs])
    return out


def srtf_order(jobs: np.ndarray, remaining: np.ndarray, widest: np.ndarray) -> list[int]:
    """``jobs`` shortest remaining time first, ties by lower index (``remaining``/``widest`` aligned to ``jobs``)."""
    times = remaining_times(remaining, widest)
    return [int(jobs[m]) for m in np.lexsort((jobs, times))]


class SrtfScheduler(FinishingBaseline):
    name = "srtf"
    PARAMETER_SPECS = parameter_specs.SRTF
    handles_gpu_types = True

    def start(self, instance) -> None:
        super().start(instance)
        self.tables = job_tables(instance)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        active = np.array(state.active, dtype=np.int64)
        if not active.size:
            return {}
        remaining = np.asarray(state.remaining_work[active], dtype=np.int64)
        widest = self.tables.widest[active]
        finishable = self.finishable(slot, active, remaining, widest)
        active, remaining, widest = active[finishable], remaining[finishable], widest[finishable]
        order = srtf_order(active, remaining, widest)
        if state.remaining_fraction is not None:  # heterogeneous: capped on the slowest type, then fitted
            remaining = most_needed(self.instance, state)[active]
        limits = dict(zip(active.tolist(), np.minimum(self.tables.chunks[active], remaining).tolist()))
        return fit_to_need(self.instance, state, serve_in_order(
            self.instance, order, limits, FreeCapacity(self.instance.cluster), self.placement, self.tables.profile))


__all__ = ["SrtfScheduler", "remaining_times", "srtf_order"]
