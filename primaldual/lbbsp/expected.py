"""Expected LB-BSP figures with tolerances, for ``reproduce`` (each check is recomputed, not stored).

:func:`expectations` returns named checks; each has the expected value, a tolerance, how to compare
(``at_least``, ``at_most`` or ``within``) and a callable that recomputes the measured value. Replay
figures are deterministic (trace replay, linear law, global batch 64 per worker, ``select`` predictor);
the training check measures wall clock on the running machine, so its bound is loose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Expectation:
    name: str
    expected: float
    tolerance: float
    comparison: str          # "at_least": measured >= expected - tolerance; "at_most": <= expected + tolerance
    measure: Callable[[], float]
    description: str

    def check(self) -> tuple[float, bool]:
        measured = float(self.measure())
        if self.comparison == "at_least":
            return measured, measured >= self.expected - self.tolerance
        if self.comparison == "at_most":
            return measured, measured <= self.expected + self.tolerance
        return measured, abs(measured - self.expected) <= self.tolerance


def _replay_figure(job: int, key: str) -> Callable[[], float]:
    def measure() -> float:
        from primaldual.lbbsp.replay import replay
        from primaldual.lbbsp.traces import load_trace

        return replay(load_trace(f"pai:job_{job}"), predictors=("select",), gpu=False).summary()[key]

    return measure


def _simulated_cpu_gap() -> float:
    from primaldual.lbbsp.scenarios import cpu_scenario
    from primaldual.lbbsp.simulator import simulate

    result = simulate(cpu_scenario(), seed=0, methods=("bsp", "lbbsp_cpu", "oracle"))
    return 100.0 * (result.speedup("oracle") / result.speedup("lbbsp_cpu") - 1.0)


def _training_speedup() -> float:
    from primaldual.lbbsp.traces import load_trace
    from primaldual.lbbsp.training import compare

    return compare(4, 60, load_trace("pai:job_1"))["time_to_target_speedup"]


# Measured values (replay: exact up to the LP solver; see docs/lbbsp-traces.md). Tolerances cover numpy/BLAS
# and HiGHS differences only. Job 1's gap, 4.996%, is at the 5% bound.
_REPLAY = {1: (1.0546, 5.00), 2: (1.1061, 1.73), 3: (1.0541, 4.60)}


def expectations(include_training: bool = False) -> list[Expectation]:
    """The checks; ``include_training`` adds the real-training one (spawns 4 worker processes)."""
    checks = []
    for job, (speedup, gap) in _REPLAY.items():
        checks.append(Expectation(f"lbbsp_replay_job_{job}_speedup", speedup, 0.002, "within",
                                  _replay_figure(job, "speedup"), f"PAI job {job}: LB-BSP speedup over BSP"))
        checks.append(Expectation(f"lbbsp_replay_job_{job}_gap_to_oracle_percent", 5.0, 0.0, "at_most",
                                  _replay_figure(job, "gap_to_oracle_percent"),
                                  f"PAI job {job}: gap to the oracle below 5% (measured {gap}%)"))
        checks.append(Expectation(f"lbbsp_replay_job_{job}_share_of_oracle_gain", 0.5, 0.0, "at_least",
                                  _replay_figure(job, "share_of_oracle_gain"),
                                  f"PAI job {job}: LB-BSP captures at least half of the oracle's gain over BSP"))
    checks.append(Expectation("lbbsp_simulated_cpu_gap_to_oracle_percent", 3.0, 0.0, "at_most", _simulated_cpu_gap,
                              "simulated non-dedicated CPU cluster (seed 0, rreg predictor): gap to oracle <= 3% "
                              "(measured 2.91%)"))
    if include_training:
        checks.append(Expectation("lbbsp_train_time_to_target_speedup", 1.3, 0.0, "at_least", _training_speedup,
                                  "K=4 real training, one straggler: time-to-target speedup >= 1.3x"))
    return checks
