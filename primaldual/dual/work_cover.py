"""Step (b) of the dual subroutine (:mod:`primaldual.dual.subroutine`, whose module docstring gives the argument):
the dynamic programme over slots that covers a job's work at least cost, and the choice of the completion slot
of step (c).

``F_t(v)``, the least cost of supplying exactly ``v`` worker-slots by slot ``t``, is one min-plus convolution
per slot of the previous row with the slot costs ``c_t(D)``; each is vectorised over ``(v, D)`` through a
strided view of one buffer (no copy), and only the reachable states and the columns with a finite cost are
computed; a job that runs one worker at most (most jobs of a trace) takes a two-operation step written straight
into the stored row. Only the minima are taken per slot (an elementwise minimum over ``D``, several times cheaper
than a row ``argmin``); the back-pointers are recomputed along the one path that is rebuilt. With the early stop,
a pass first keeps only the states that can still complete within a few slots of the earliest completion
(:mod:`primaldual.dual.band`), where a trace's searches end, and replays whole rows if it goes on. The pass runs forward in
blocks of slots and stops as soon as no later completion can beat the best payoff found (utility is non-increasing and costs are non-negative, or above a known cost floor).
"""

from __future__ import annotations

import numpy as np

from primaldual.core.errors import InputError
from primaldual.dual.band import BAND_SLOTS, ONE_WORKER_BAND_SLOTS, Band

#: What the subroutine maximises: ``"payoff"`` (utility minus cost, eq. (21): OASiS) or ``"utility"`` (the
#: ``greedy`` ablation, cost only breaks ties).
OBJECTIVES = ("payoff", "utility")


def check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError(f"objective: must be one of {OBJECTIVES}, got {objective!r}")


class WorkCover:
    """Step (b), run forward block by block, and the choice of the completion slot of step (c).

    ``utility[s]`` is ``f_i(s)``, the job's utility if it completes in window slot ``s``. Feed the slot costs
    with :meth:`extend` (rows ``c_{a+s}(D)``, ``D = 0..max_workers``); it returns False once no later
    completion can beat the best so far (``early_stop``), so the caller need not compute further slot costs.
    ``objective="payoff"`` picks the earliest maximiser of ``utility - C``; ``"utility"`` the lexicographic best
    (highest utility, then least cost, then earliest).

    After the pass, ``completion_cost[s] = C_i(a + s)`` (``nan`` where the pass stopped early) and
    :meth:`workers_per_slot` rebuilds the cheapest way to cover the work by a slot.
    """

    def __init__(self, work: int, max_workers: int, utility: np.ndarray, objective: str = "payoff",
                 early_stop: bool = True, cost_floor: float = 0.0):
        check_objective(objective)
        self.cost_floor = float(cost_floor)  # a lower bound on every schedule's cost (0: none known)
        self.work = int(work)
        self.max_workers = int(max_workers)
        self.utility = np.asarray(utility, dtype=float)
        self.objective = objective
        self.early_stop = early_stop
        n_slots = self.utility.shape[0]
        self.completion_cost = np.full(n_slots, np.nan)
        # The back-pointers are not stored: rows[s, :reach_s + 1] = F_s, costs[s] = c_s and mosts[s] are, and
        # workers_per_slot recomputes the argmin along the one path it follows (np.empty: only the rows the pass
        # reaches are ever touched). reach_s = min(V, mosts[0] + ... + mosts[s]) is derived there.
        self._rows = np.empty((n_slots, self.work + 1))
        self._costs = np.empty((n_slots, self.max_workers + 1))
        self._mosts = np.zeros(n_slots, dtype=np.int64)
        # buffer[max_workers + v] = F(v); the first max_workers entries stay +inf and stand for v - D < 0.
        self._buffer = np.full(self.max_workers + self.work + 1, np.inf)
        self._buffer[self.max_workers] = 0.0
        self._row = self._buffer[self.max_workers:]
        # windows[D, v] = F(v - D): one strided view of the buffer (no copy), valid for every slot. D runs along
        # the first axis so that the minimum over D is an elementwise minimum of contiguous rows.
        item = self._buffer.itemsize
        self._windows = np.ndarray(
            shape=(self.max_workers + 1, self.work + 1), dtype=float, buffer=self._buffer,
            offset=self.max_workers * item, strides=(-item, item),
        )
        self._candidates = np.empty((self.max_workers + 1, self.work + 1))
        # F_{-1} for :meth:`_step_one`, which reads the previous row directly: 0 at v = 0, +inf past it.
        self._start = np.full(min(self.work, 1) + 1, np.inf)
        self._start[0] = 0.0
        self._reach = 0  # F(v) is +inf for every v > _reach
        # With the early stop, only the states that can still complete within BAND_SLOTS slots of the earliest
        # completion first (primaldual.dual.band: in Python floats for one worker at a time, else the columns
        # v >= V - max_workers (top - s) of the vector step); the pass replays whole rows if it goes on.
        slots = ONE_WORKER_BAND_SLOTS if self.max_workers == 1 else BAND_SLOTS
        self._top = -(-self.work // max(self.max_workers, 1)) - 1 + slots if early_stop else None
        self._band = Band(self.work, self._top) if self.max_workers == 1 and early_stop else None
        self.slots_done = 0
        self.stopped = False
        self.best_slot: int | None = None
        self._best_payoff = -np.inf
        self._best_utility = -np.inf
        self._best_cost = np.inf

    def extend(self, cost: np.ndarray) -> bool:
        """Process the next ``len(cost)`` slots; return whether more slots can still improve the answer."""
        n_slots = self.utility.shape[0]
        first = self.slots_done
        cost = np.asarray(cost, dtype=float)[: max(0, n_slots - first)]
        # Per slot, the largest D with a finite c_t(D) (0 if none): larger D can never be chosen.
        finite = np.isfinite(cost)
        most_workers = cost.shape[1] - 1 - finite[:, ::-1].argmax(axis=1)
        most_workers[~finite.any(axis=1)] = 0
        if self.stopped or cost.shape[0] == 0:
            return False
        # Stored for every row given (rows past an early stop are never read).
        self._costs[first: first + cost.shape[0]] = cost
        self._mosts[first: first + cost.shape[0]] = most_workers
        mosts = most_workers.tolist()
        if self._band is not None:  # one worker at a time: the band's slots at once (primaldual.dual.band)
            inside = max(0, min(cost.shape[0], self._band.top - first + 1))
            if inside:
                self._conclude(first, self._band.run(first, cost[:inside, 1].tolist(), mosts[:inside]))
                if self.stopped or inside == cost.shape[0]:
                    return not self.stopped and self.slots_done < n_slots
            self._leave_band(first + inside)  # the search goes on past the band: whole rows from here on
            cost, mosts, first = cost[inside:], mosts[inside:], first + inside
        utility = self.utility[first: first + cost.shape[0] + 1].tolist()  # python floats: the same IEEE sums
        if self.max_workers == 1:  # one worker at most: c_t(1) alone, as python floats (the same doubles)
            step, rows = self._step_one, cost[:, 1].tolist()
        else:
            step, rows = self._step, cost
        for k, (row_cost, most) in enumerate(zip(rows, mosts)):
            s = first + k
            if self._top is not None and s > self._top:  # past the band's slots: whole rows from here on
                self._leave_band(s)
            total = step(s, row_cost, most)
            self.completion_cost[s] = total
            if total < np.inf:
                self._see_completion(s, utility[k], total)
            self.slots_done = s + 1
            if self.early_stop and s + 1 < n_slots and self._cannot_improve(utility[k + 1]):
                self.stopped = True
                break
        return not self.stopped and self.slots_done < n_slots

    def _conclude(self, first: int, totals: list[float]) -> None:
        """Step (c) and the early stop for the slots ``first, first + 1, ...`` whose ``C(s)`` are ``totals``, as the
        slot-by-slot loop of :meth:`extend` does them, in a few vector operations: the payoffs are the same
        double differences (``+inf`` costs give ``-inf``, which never beats the best), the best after each slot
        is a running maximum, the pass stops after the first slot ``s`` with ``f(s + 1) - floor <= max(0, best)``,
        and the best slot is the earliest maximiser up to there, if it beats the best before. (Only the band
        calls it, always with the early stop on.)"""
        n_slots, count = self.utility.shape[0], len(totals)
        total = np.array(totals)
        if self.objective != "payoff":  # the greedy ablation: slot by slot
            for k, value in enumerate(totals):
                s = first + k
                self.completion_cost[s], self.slots_done = value, s + 1
                if value < np.inf:
                    self._see_completion(s, float(self.utility[s]), value)
                if s + 1 < n_slots and self._cannot_improve(float(self.utility[s + 1])):
                    self.stopped = True
                    return
            return
        payoff = self.utility[first: first + count] - total
        best = np.maximum.accumulate(np.maximum(payoff, self._best_payoff))
        following = self.utility[first + 1: first + count + 1]  # f(s + 1), none past the window's last slot
        stops = np.flatnonzero(following - self.cost_floor <= np.maximum(best[: following.shape[0]], 0.0))
        done = int(stops[0]) + 1 if stops.size else count
        self.completion_cost[first: first + done] = total[:done]
        k = int(payoff[:done].argmax())
        if payoff[k] > self._best_payoff:
            self._best_payoff, self.best_slot = float(payoff[k]), first + k
        self.slots_done, self.stopped = first + done, bool(stops.size)

    def _step(self, s: int, row_cost: np.ndarray, most: int) -> float:
        """``F_s`` from ``F_{s-1}`` (the buffer's row), stored as row ``s``; returns ``F_s(V)``."""
        # States v past what the slots so far can supply stay +inf, and so do columns past ``most``:
        # cutting both is exact, and saves most of the work once the servers fill up. In the band, states below
        # ``lowest`` are not updated: they cannot complete by its last slot, and the band's states only read
        # states of the previous slot's band (its edge rises by max_workers per slot).
        reach = min(self.work, self._reach + most)
        lowest = 0 if self._top is None else max(0, self.work - self.max_workers * (self._top - s))
        self._reach = reach
        if lowest > reach:
            return np.inf  # no state of the band is reached yet (V is not: lowest <= V)
        candidates = self._candidates[: most + 1, lowest: reach + 1]
        np.add(self._windows[: most + 1, lowest: reach + 1], row_cost[: most + 1, None], out=candidates)
        row = self._row[lowest: reach + 1]
        np.minimum.reduce(candidates, axis=0, out=row)  # exact: no sum is re-rounded
        self._rows[s, lowest: reach + 1] = row
        return float(self._row[self.work])

    def _step_one(self, s: int, cost_one: float, most: int) -> float:
        """:meth:`_step` for ``max_workers = 1``, written straight into row ``s``: ``F_s(v) = min(F_{s-1}(v),
        F_{s-1}(v - 1) + c_s(1))``, the two candidates :meth:`_step` compares (its ``D = 0`` one adds
        ``c_s(0) = 0.0``, which changes no value), so the same doubles. Row ``s - 1`` holds ``+inf`` just past
        its reach (set here), the one entry past the reach that step ``s`` reads. Two vector operations per
        slot instead of four and no copy: what most jobs of a trace (one worker at a time) pay per slot."""
        previous = self._rows[s - 1] if s else self._start
        out = self._rows[s]
        reach = self._reach
        if most:
            reach = min(self.work, reach + 1)
            grown = out[1: reach + 1]
            np.add(previous[:reach], cost_one, out=grown)
            np.minimum(grown, previous[1: reach + 1], out=grown)
            out[0] = 0.0
        else:
            out[: reach + 1] = previous[: reach + 1]
        if reach < self.work:
            out[reach + 1] = np.inf
        self._reach = reach
        return float(out[self.work]) if reach == self.work else np.inf

    def _leave_band(self, s: int) -> None:
        """Replay slots ``0..s - 1`` on whole rows (the same doubles as the band's) so that the pass can go on
        past the band's last slot; the band is dropped."""
        self._band = self._top = None
        self._reach = 0
        if self.max_workers == 1:
            for t, (cost_one, most) in enumerate(zip(self._costs[:s, 1].tolist(), self._mosts[:s].tolist())):
                self._step_one(t, cost_one, most)
            return
        self._buffer[:] = np.inf
        self._buffer[self.max_workers] = 0.0
        for t, most in enumerate(self._mosts[:s].tolist()):
            self._step(t, self._costs[t], most)

    def _see_completion(self, s: int, utility: float, total: float) -> None:
        """Step (c) for window slot ``s``, completing at cost ``total``."""
        if self.objective == "payoff":
            payoff = utility - total
            if payoff > self._best_payoff:
                self._best_payoff, self.best_slot = payoff, s
        elif utility > self._best_utility or (utility == self._best_utility and total < self._best_cost):
            self._best_utility, self._best_cost, self.best_slot = utility, total, s

    def _cannot_improve(self, next_utility: float) -> bool:
        """Later completions earn at most ``next_utility`` (f non-increasing) and pay at least the floor (>= 0)."""
        if self.objective == "payoff":
            return next_utility - self.cost_floor <= max(0.0, self._best_payoff)
        return next_utility < self._best_utility

    def workers_per_slot(self, best_slot: int) -> np.ndarray:
        """Rebuild ``D*(s)`` for ``s = 0..best_slot`` backwards from ``(best_slot, V)``: in each slot the first
        ``D`` (fewest workers) with ``F_{s-1}(v - D) + c_s(D)`` minimal, the same candidates the pass compared, so
        the choice is the one a stored back-pointer would hold. With one or two candidates (one worker at most,
        or a slot at the edge of what it can reach) they are compared as numpy scalars (the same double sums,
        a strict ``<`` for the first minimum) instead of a vector ``argmin``. Cost:
        ``O(best_slot * max_workers)``. A pass that stayed in its band reads the choices the band recorded."""
        if self._band is not None:
            return np.array(self._band.workers_per_slot(best_slot, self._mosts[: best_slot + 1].tolist()),
                            dtype=np.int64)
        out = np.zeros(best_slot + 1, dtype=np.int64)
        mosts = self._mosts[: best_slot + 1].tolist()
        reaches = np.minimum(np.cumsum(mosts), self.work).tolist()  # the pass's own reach
        rows, costs = self._rows, self._costs
        remaining = self.work
        for s in range(best_slot, 0, -1):
            # D below `low` reads F_{s-1} past its reach (+inf), above `high` past the slot's finite costs or v.
            low = max(0, remaining - reaches[s - 1])
            high = min(mosts[s], remaining)
            if high == low:
                d = low
            elif high == low + 1:
                fewer = rows[s - 1, remaining - low] + costs[s, low]
                d = low + 1 if rows[s - 1, remaining - low - 1] + costs[s, low + 1] < fewer else low
            else:
                candidates = rows[s - 1, remaining - high: remaining - low + 1][::-1] + costs[s, low: high + 1]
                d = low + int(candidates.argmin())
            out[s] = d
            remaining -= d
        out[0] = remaining  # F_{-1} is finite at 0 only
        if remaining > mosts[0]:  # pragma: no cover - the DP only records reachable states
            raise AssertionError("dual subroutine: back-pointers do not cover the work")
        return out


def cover_work(cost: np.ndarray, work: int, utility: np.ndarray, objective: str = "payoff",
               early_stop: bool = True) -> WorkCover:
    """Step (b) over a whole table ``cost[s, D]`` at once (see :class:`WorkCover`)."""
    cost = np.asarray(cost, dtype=float)
    cover = WorkCover(work, cost.shape[1] - 1, utility, objective, early_stop)
    cover.extend(cost)
    return cover


__all__ = ["OBJECTIVES", "WorkCover", "check_objective", "cover_work"]
