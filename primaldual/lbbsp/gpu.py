"""LB-BSP's GPU-cluster rule: the leader/straggler stepper (docs/papers.md, LB-BSP, [design]).

Every ``window`` iterations the controller takes the median compute time of each worker over the
window (docs/papers.md, LB-BSP: robust to non-deterministic jitter), then

* straggler ``s`` = slowest worker; leader ``l`` = fastest *other* worker with memory headroom
  (``x_l < M_l``; docs/papers.md, LB-BSP: a worker with no headroom can only be a straggler);
* dead band: if ``T_s - T_l <= dead_band * T_s`` the cluster counts as balanced and nothing moves
  (docs/papers.md, LB-BSP);
* oscillation: the move would send a worker "back the way it came" (docs/papers.md, LB-BSP, R2's reading) -- the
  straggler gained samples at its last move, or the leader lost samples at its last move. Then
  ``step_size <- ceil(step_size / 2)`` and ``window <- min(2 window, max_window)`` (R1, R2). If the
  step is already 1 and the reversed move was itself a 1-sample move, the allocation is within one
  sample of a local balance and the stepper *freezes*; reversing an older, coarser move by one sample
  is a refinement and goes ahead ([design]: freezing there would stop short of the balance that the
  finer move reaches);
* otherwise ``d = min(step_size, x_s - min_batch, M_l - x_l)`` samples move from ``s`` to ``l``. The
  clipping to the leader's headroom is a [design] choice (the paper's pseudo-code skips leaders with
  less than a full step of headroom, which can stall with a large step next to the caps);
* re-arming: if a worker whose batch did not change between two windows (or any worker, when frozen)
  sees its time change by more than ``reset_jump`` (relative), a persistent change in the hardware
  happened (e.g. a co-located job): step, window and direction memory are reset (docs/papers.md, LB-BSP).

Convergence for static laws (docs/papers.md, LB-BSP, [design] argument): between two halvings every worker moves
in one direction only, and its batch is bounded, so only finitely many moves happen per step size;
the step size only decreases (static laws never trigger the reset: an unchanged batch gives an
unchanged time). At step 1 every move records size 1 for both workers, so each worker can reverse an
older coarse move at most once; after that any reversal freezes, and between reversals moves are
monotone and bounded. Hence the stepper stops after finitely many adjustments.

Quality at rest (noise-free static laws, ``dead_band = 0``): for two workers the makespan is within
one per-sample step (the steepest slope) of the exact optimum -- when it freezes the straggler's
last move was to gain one sample while it was the leader, and the leader's time never exceeds the
optimum (if every candidate were above it, every worker would hold more than in an optimal
allocation). For n > 2 there is no proof; the tests assert an excess of at most 1.5 per-sample steps
on random instances with flat-then-linear laws and random caps (the documented tolerance).

Cost: one adjustment per window, O(n) on the median times of the window, which cost O(window n) to take.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class GpuStepperConfig:
    """Constants of the stepper; defaults are this package's (docs/papers.md, LB-BSP)."""

    global_batch: int
    memory_cap: np.ndarray
    min_batch: int = 1
    initial_step_size: int | None = None   # None: max(1, floor(0.1 * X / n)) (docs/papers.md, LB-BSP)
    initial_window: int = 3
    max_window: int = 32
    dead_band: float = 0.03
    reset_jump: float = 0.2

    def first_step_size(self) -> int:
        if self.initial_step_size is not None:
            return max(1, int(self.initial_step_size))
        return max(1, int(0.1 * self.global_batch / len(self.memory_cap)))


@dataclass(frozen=True)
class GpuStepperState:
    """Everything the stepper remembers between windows.

    ``last_direction[i]`` is +1 if worker i gained samples at its last move, -1 if it lost, 0 if it
    has not moved since the last reset, and ``last_moved[i]`` the size of that move.
    ``previous_times``/``previous_batch`` are the window statistic
    and the allocation of the previous window (for change detection).
    """

    batch: np.ndarray
    step_size: int
    window: int
    last_direction: np.ndarray
    last_moved: np.ndarray
    frozen: bool = False
    previous_times: np.ndarray | None = None
    previous_batch: np.ndarray | None = None


@dataclass(frozen=True)
class GpuAdjustment:
    """What one call to :func:`adjust` decided: ``action`` is one of ``moved``, ``balanced``,
    ``frozen``, ``froze``, ``no_leader``, ``no_room``; ``oscillation``/``reset`` flag those events."""

    action: str
    straggler: int | None
    leader: int | None
    moved: int
    oscillation: bool
    reset: bool


def initial_state(config: GpuStepperConfig, batch) -> GpuStepperState:
    batch = np.asarray(batch, dtype=np.int64).copy()
    return GpuStepperState(batch=batch, step_size=config.first_step_size(), window=config.initial_window,
                           last_direction=np.zeros(batch.size, dtype=np.int64),
                           last_moved=np.zeros(batch.size, dtype=np.int64))


def window_statistic(window_times) -> np.ndarray:
    """Median compute time per worker over the window (rows = iterations)."""
    return np.median(np.atleast_2d(np.asarray(window_times, dtype=float)), axis=0)


def adjust(state: GpuStepperState, window_times, config: GpuStepperConfig) -> tuple[GpuStepperState, GpuAdjustment]:
    """One adjustment at the end of a window: pure function of the state and the measured times."""
    times = window_statistic(window_times)
    batch = state.batch
    reset = False
    if state.previous_times is not None:
        unchanged = batch == state.previous_batch
        if state.frozen:
            unchanged = np.ones_like(unchanged)
        change = np.abs(times - state.previous_times) / np.maximum(state.previous_times, 1e-12)
        if np.any(unchanged & (change > config.reset_jump)):
            reset = True
            state = replace(state, step_size=config.first_step_size(), window=config.initial_window,
                            last_direction=np.zeros_like(state.last_direction),
                            last_moved=np.zeros_like(state.last_moved), frozen=False)
    state = replace(state, previous_times=times, previous_batch=batch.copy())

    def result(action, straggler=None, leader=None, moved=0, oscillation=False, new_state=None):
        decision = GpuAdjustment(action, straggler, leader, moved, oscillation, reset)
        return (state if new_state is None else new_state), decision

    if state.frozen:
        return result("frozen")
    straggler = int(np.argmax(times))  # first maximum: ties to the lowest index
    candidate_times = np.where(batch < config.memory_cap, times, np.inf)
    candidate_times[straggler] = np.inf
    if not np.isfinite(candidate_times).any():
        return result("no_leader", straggler)
    leader = int(np.argmin(candidate_times))
    if times[straggler] - times[leader] <= config.dead_band * times[straggler]:
        return result("balanced", straggler, leader)
    straggler_reverses = state.last_direction[straggler] > 0
    leader_reverses = state.last_direction[leader] < 0
    oscillation = bool(straggler_reverses or leader_reverses)
    step_size, window = state.step_size, state.window
    if oscillation:
        if step_size <= 1:
            # Freeze only on a back-and-forth at the finest step; undoing a coarser, older move by
            # one sample is a refinement, not an oscillation of the current step.
            fine = ((straggler_reverses and state.last_moved[straggler] <= 1)
                    or (leader_reverses and state.last_moved[leader] <= 1))
            if fine:
                return result("froze", straggler, leader, oscillation=True, new_state=replace(state, frozen=True))
        else:
            step_size = (step_size + 1) // 2
            window = min(config.max_window, 2 * window)
    moved = int(min(step_size, batch[straggler] - config.min_batch, config.memory_cap[leader] - batch[leader]))
    if moved <= 0:
        return result("no_room", straggler, leader, oscillation=oscillation,
                      new_state=replace(state, step_size=step_size, window=window))
    new_batch = batch.copy()
    new_batch[straggler] -= moved
    new_batch[leader] += moved
    direction = state.last_direction.copy()
    direction[straggler], direction[leader] = -1, 1
    last_moved = state.last_moved.copy()
    last_moved[straggler] = last_moved[leader] = moved
    new_state = replace(state, batch=new_batch, step_size=step_size, window=window, last_direction=direction,
                        last_moved=last_moved)
    return result("moved", straggler, leader, moved, oscillation, new_state)


class GpuController:
    """Feeds measured compute times into :func:`adjust` every ``state.window`` iterations."""

    def __init__(self, config: GpuStepperConfig, batch):
        self.config = config
        self.state = initial_state(config, batch)
        self._times: list[np.ndarray] = []
        self.adjustments: list[GpuAdjustment] = []

    def next_batch(self) -> np.ndarray:
        return self.state.batch.copy()

    def observe(self, compute_seconds) -> None:
        """Record one iteration's measured compute times (of the batch :meth:`next_batch` proposed)."""
        self._times.append(np.asarray(compute_seconds, dtype=float))
        if len(self._times) >= self.state.window:
            self.state, adjustment = adjust(self.state, np.asarray(self._times), self.config)
            self.adjustments.append(adjustment)
            self._times = []
