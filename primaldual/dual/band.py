"""Step (b) of the dual subroutine for a job that runs one worker at a time, over a narrow band of states.

With at most one worker per slot the programme of :mod:`primaldual.dual.work_cover` is
``F_s(v) = min(F_{s-1}(v), F_{s-1}(v - 1) + c_s(1))``. A search that is known to stop by window slot ``top``
only ever reads ``F_t(V)`` for ``t <= top``, and from state ``(t, v)`` at most one worker-slot per slot can be
added, so only the states ``v >= V - (top - t)`` can still lead to a completion by ``top``: a band of at most
``top - (V - 1) + 1`` states per slot, against ``V + 1`` for the whole row. On a trace the searches of
one-worker jobs stop at their earliest completion ``V - 1`` or the slot after (the cost floor,
:mod:`primaldual.dual.cost_floor`), so a band of :data:`ONE_WORKER_BAND_SLOTS` slot past it (two states per
slot) holds every state nearly all of them read.

**Exact.** The band is closed under the recurrence: its lower edge rises by one state per slot, so a state
``v`` in it reads ``F_{s-1}(v)`` and ``F_{s-1}(v - 1)``, both in the previous slot's band (or ``v = 0``, which has
no ``v - 1``). Each value is the same IEEE double operation on the same operands as in the whole row (a Python
float sum is a double sum; the ``D = 0`` candidate adds ``c_s(0) = 0.0``, which changes no value; a minimum is
exact), so every ``F_t(V)`` is the whole row's double. The path rebuilt from ``(best, V)`` only visits band
states (each step back lowers ``v`` by at most one), and each choice on it (one more worker iff
``F_{s-1}(v - 1) + c_s(1) < F_{s-1}(v)``, the first minimum) is the same comparison of the same doubles. A search that
goes on past ``top`` must leave the band (:meth:`primaldual.dual.work_cover.WorkCover.extend` replays the slots
on whole rows).

**Cost.** A few Python float operations per slot instead of two vector operations on the row (whose cost is
mostly per call for the short rows of a trace's jobs).

**Wider jobs.** The same band holds for ``D <= N`` workers per slot with ``v >= V - N (top - t)`` (``top`` counted
from the earliest completion ``ceil(V / N) - 1``): its edge rises by ``N`` states per slot and a state reads
states at most ``N`` below it. :meth:`primaldual.dual.work_cover.WorkCover._step` keeps its vector step and
only narrows the columns it computes to the band, at most ``N (BAND_SLOTS + 1)`` of them instead of ``V + 1``.
"""

from __future__ import annotations

#: Slots past the earliest completion that a band covers before the search must leave it: the vector band of
#: wider jobs, and the Python band of one-worker jobs (two states per slot; on the Philly traces 21 of 15,000
#: one-worker searches go on past it and replay whole rows).
BAND_SLOTS = 3
ONE_WORKER_BAND_SLOTS = 1

_INF = float("inf")


class Band:
    """The band of states of one one-worker search: per processed slot its lowest state, ``F_s`` over the band,
    its reach and ``c_s(1)`` (module docstring). ``top`` is the last window slot it can serve."""

    def __init__(self, work: int, top: int):
        self.work = work
        self.top = top
        # Per slot s + 1 (index 0 is F_{-1}: 0 at v = 0, +inf past it): lowest state, values, reach, c_s(1).
        self._slots: list[tuple[int, list[float], int, float]] = [(0, [0.0], 0, 0.0)]

    def run(self, first: int, ones: list[float], mosts: list[int]) -> list[float]:
        """``F_s`` over the band for the slots ``s = first, first + 1, ...`` (all ``<= top``), from the last slot
        run before, with ``c_s(1) = ones[s - first]`` and ``mosts[s - first]`` workers fitting; returns
        ``F_s(V)`` per slot (``+inf`` where ``V`` is not reached yet). One Python loop over the slots and their
        few states, with local variables only: the whole cost of a one-worker search's programme."""
        work, top, slots = self.work, self.top, self._slots
        lowest_before, before, reach_before, _ = slots[-1]
        totals = []
        for s, (cost_one, most) in enumerate(zip(ones, mosts), start=first):
            reach = min(work, reach_before + most)
            lowest = max(0, work - (top - s))
            values = []
            for v in range(lowest, reach + 1):
                keep = before[v - lowest_before] if v <= reach_before else _INF
                if most and v:
                    grow = before[v - 1 - lowest_before] + cost_one
                    if grow < keep:
                        keep = grow
                values.append(keep)
            slots.append((lowest, values, reach, cost_one))
            totals.append(values[-1] if reach == work else _INF)
            lowest_before, before, reach_before = lowest, values, reach
        return totals

    def workers_per_slot(self, best_slot: int, mosts: list[int]) -> list[int]:
        """``D*(s)`` for ``s = 0..best_slot`` backwards from ``(best_slot, V)`` (``mosts[s]`` workers fit in slot
        ``s``): one more worker iff ``F_{s-1}(v - 1) + c_s(1) < F_{s-1}(v)``, the comparison the pass made (ties
        keep the fewer workers, as the first minimum does)."""
        out = [0] * (best_slot + 1)
        remaining = self.work
        for s in range(best_slot, 0, -1):
            lowest, before, reach, _ = self._slots[s]  # F_{s - 1}
            cost_one = self._slots[s + 1][3]
            keep = before[remaining - lowest] if remaining <= reach else _INF
            took = mosts[s] and remaining and before[remaining - 1 - lowest] + cost_one < keep
            out[s] = 1 if took else 0
            remaining -= out[s]
        out[0] = remaining  # F_{-1} is finite at 0 only
        return out


__all__ = ["BAND_SLOTS", "ONE_WORKER_BAND_SLOTS", "Band"]
