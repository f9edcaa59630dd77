"""``primaldual bench oasis``'s measurements: milliseconds per OASiS job decision, against the plain-Python reference in the same run.

For every job of a ``paper``-preset instance, in arrival order, the benchmark times one OASiS decision
(the compiled dual subroutine of :mod:`primaldual.dual.kernel` plus admission and price update). On every third
job (every tenth with ``--quick``), at the same prices and residual capacities, it also times the subroutine
run by its reference as plain Python (:mod:`primaldual.dual.reference`, the same loops uncompiled) and the
compiled one without the early stop. The reference must give the same answer bit for bit (``mu``, payoff,
completion and placement; mismatches counted). The figure to report is the ratio of the median times. It also times the whole preset end to end (constants, every decision, the certificate) and a second
configuration at the target size (``T = 100``, 100 servers per pool, ``N_i <= 16``), and records
OASiS's and ``greedy``'s utilities and the certificate's ``D / ALG`` as context. Wall-clock times
(``perf_counter``) and CPU times (``process_time``, robust to a busy machine) are both reported.

``--quality`` runs the other benchmark of this command instead: utility and OPT/ALG of OASiS, OASiS-LR,
OASiS-P and the baselines on fresh seeds, with and without restart costs
(:mod:`primaldual.evaluation.bench.oasis_quality`). ``--compare-lr`` times OASiS-LR against OASiS on ``paper``
instances: the median whole-run wall-time ratio and OASiS-LR's per-job decision time, defined exactly in
:mod:`primaldual.evaluation.bench.oasis_lr_speed`.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from primaldual.core.generate import generate
from primaldual.core.instance import Instance
from primaldual.core.jsonable import fields_of, jsonable
from primaldual.dual import kernel
from primaldual.dual.subroutine import best_schedule
from primaldual.oasis.engine import OnlineEngine, arrival_order, run_greedy, run_oasis
from primaldual.oasis.prices import compute_constants

#: The target median decision time for T <= 100, N_i <= 16, 100 servers per pool.
TARGET_MEDIAN_MS = 5.0


def _percentile(values, q):
    return float(np.percentile(np.asarray(values), q)) if values else None


@dataclass(frozen=True)
class ReferenceTimes:
    """The compiled subroutine against its plain-Python reference on the sampled jobs, at the same prices."""

    reference_jobs: int
    subroutine_ms_median: float
    subroutine_full_ms_median: float
    reference_ms_median: float
    reference_ms_p99: float
    speedup_median: float
    speedup_total: float
    reference_mismatches: int


@dataclass(frozen=True)
class DecisionTimes:
    """Every OASiS decision of one run, timed; ``reference``: None when no job was sampled."""

    jobs: int
    horizon: int
    worker_servers: int
    ps_servers: int
    max_chunks: int
    max_work_units: int
    decision_ms_median: float
    decision_ms_p99: float
    decision_cpu_ms_median: float
    decision_cpu_ms_p99: float
    decisions_seconds_total: float
    admitted: int
    reference: ReferenceTimes | None = None

    def to_dict(self) -> dict:
        out = fields_of(self)
        del out["reference"]
        return jsonable({**out, **({} if self.reference is None else fields_of(self.reference))})


def _reference_times(as_used, full, plain, mismatches) -> ReferenceTimes:
    return ReferenceTimes(
        reference_jobs=len(plain),
        subroutine_ms_median=1e3 * statistics.median(as_used),
        subroutine_full_ms_median=1e3 * statistics.median(full),
        reference_ms_median=1e3 * statistics.median(plain),
        reference_ms_p99=1e3 * _percentile(plain, 99),
        # The figure to report: the compiled subroutine against the same loops as plain Python.
        speedup_median=statistics.median(plain) / max(statistics.median(as_used), 1e-12),
        speedup_total=sum(plain) / max(sum(as_used), 1e-12),
        reference_mismatches=mismatches,
    )


def time_decisions(instance: Instance, reference_every: int = 1) -> DecisionTimes:
    """Time every decision of one OASiS run; every ``reference_every``-th job (0: none) is also solved, at the
    same prices, by the compiled subroutine without its early stop and by the reference as plain Python."""
    engine = OnlineEngine(instance, compute_constants(instance))
    wall, cpu = [], []
    as_used, full, plain = [], [], []
    mismatches = 0
    state = engine.state
    order = arrival_order(instance)
    if reference_every and order:  # numba's import and cache load are not a decision's time
        with kernel.using("compiled"):
            _timed(instance, order[0], state.worker_prices, state.ps_prices, state.worker_free, state.ps_free)
    for n, i in enumerate(order):
        if reference_every and n % reference_every == 0:
            arguments = (instance, i, state.worker_prices, state.ps_prices, state.worker_free, state.ps_free)
            with kernel.using("compiled"):  # not auto: the compiled code against the reference, at any size
                compiled, seconds = _timed(*arguments)
                full.append(_timed(*arguments, early_stop=False)[1])
            as_used.append(seconds)
            with kernel.using("reference"):
                reference, seconds = _timed(*arguments)
            plain.append(seconds)
            mismatches += not same_answer(compiled, reference)
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        engine.decide(i)
        wall.append(time.perf_counter() - start_wall)
        cpu.append(time.process_time() - start_cpu)
    return DecisionTimes(
        jobs=instance.n_jobs,
        horizon=instance.horizon,
        worker_servers=instance.cluster.n_worker_servers,
        ps_servers=instance.cluster.n_ps_servers,
        max_chunks=int(max(job.chunks for job in instance.jobs)),
        max_work_units=int(instance.work_units.max()),
        decision_ms_median=1e3 * statistics.median(wall),
        decision_ms_p99=1e3 * _percentile(wall, 99),
        decision_cpu_ms_median=1e3 * statistics.median(cpu),
        decision_cpu_ms_p99=1e3 * _percentile(cpu, 99),
        decisions_seconds_total=float(sum(wall)),
        admitted=sum(d.admitted for d in engine.decisions.values()),
        reference=_reference_times(as_used, full, plain, mismatches) if plain else None,
    )


def _timed(*arguments, **options):
    start = time.perf_counter()
    result = best_schedule(*arguments, **options)
    return result, time.perf_counter() - start


def same_answer(one, other) -> bool:
    """Whether two dual-subroutine results agree bit for bit: the numbers, the per-slot counts and the
    placement."""
    numbers = ("feasible", "mu", "payoff", "cost", "utility", "completion_slot")
    if any(getattr(one, name) != getattr(other, name) for name in numbers):
        return False
    placed = [(r.schedule.workers.tobytes(), r.schedule.parameter_servers.tobytes()) if r.schedule else None
              for r in (one, other)]
    return placed[0] == placed[1] and np.array_equal(one.workers_per_slot, other.workers_per_slot)


@dataclass(frozen=True)
class WholeRun:
    """OASiS's whole run on the paper instance (seconds, its certificate) and greedy's utility as context."""

    run_seconds: float
    run_cpu_seconds: float
    oasis_utility: float
    greedy_utility: float
    dual_objective: float
    ratio_upper_bound: float
    best_ratio_upper_bound: float
    alpha: float


@dataclass(frozen=True)
class OasisBench:
    """``bench oasis``: the paper instance's decisions and whole run, and the decisions at the target size."""

    seed: int
    quick: bool
    paper: DecisionTimes
    run: WholeRun
    target: DecisionTimes
    target_median_ms: float = TARGET_MEDIAN_MS
    #: ``PRIMALDUAL_KERNEL``'s mode the decisions ran under (``reference`` times plain Python: say so).
    kernel: str = "auto"

    def to_dict(self) -> dict:
        return {"seed": self.seed, "quick": self.quick, "kernel": self.kernel, "paper": {**self.paper.to_dict(), **jsonable(fields_of(self.run))},
                "target": {**self.target.to_dict(), "target_median_ms": self.target_median_ms}}


def _whole_run(paper: Instance) -> WholeRun:
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    result = run_oasis(paper)
    run_seconds, run_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    certificate = result.certificate
    return WholeRun(run_seconds, run_cpu, result.total_utility, run_greedy(paper).total_utility,
                    certificate.dual_objective, certificate.ratio_upper_bound, certificate.best_ratio_upper_bound,
                    certificate.constants.alpha)


def run_benchmark(seed: int = 0, quick: bool = False, jobs: int | None = None) -> OasisBench:
    """All figures of ``primaldual bench oasis`` (module docstring) on the ``paper`` preset of ``seed``
    (``jobs`` jobs: default 300, or 60 when ``quick``)."""
    n_jobs = jobs if jobs is not None else (60 if quick else None)
    paper = generate("paper", seed, jobs=n_jobs)
    decisions = time_decisions(paper, reference_every=10 if quick else 3)
    run = _whole_run(paper)
    target_jobs = 50 if quick else 200
    target = generate("paper", seed, jobs=target_jobs, horizon=100, worker_servers=100, ps_servers=100,
                      load=target_jobs / 100.0)
    return OasisBench(seed, quick, decisions, run, time_decisions(target, reference_every=0), kernel=kernel.mode())


def format_benchmark(result: OasisBench) -> str:
    """The text of ``bench oasis``."""
    paper, target, run, reference = result.paper, result.target, result.run, result.paper.reference
    lines = [f"paper preset (seed {result.seed}): {paper.jobs} jobs, T = {paper.horizon}, "
             f"{paper.worker_servers}+{paper.ps_servers} servers, N_i <= {paper.max_chunks}; decisions timed "
             f"with the {result.kernel} dual-subroutine kernel (PRIMALDUAL_KERNEL)",
             f"  decision: median {paper.decision_ms_median:.2f} ms, p99 {paper.decision_ms_p99:.2f} ms "
             f"(CPU median {paper.decision_cpu_ms_median:.2f} ms)"]
    if reference is not None:
        lines.append(f"  compiled subroutine vs its plain-Python reference on {reference.reference_jobs} jobs: median "
                     f"{reference.subroutine_ms_median:.2f} ms vs {reference.reference_ms_median:.1f} ms, "
                     f"x{reference.speedup_median:.0f} (median), x{reference.speedup_total:.0f} (total); without the "
                     f"early stop {reference.subroutine_full_ms_median:.2f} ms; "
                     f"mismatches: {reference.reference_mismatches}")
    lines += [f"  whole preset (constants, decisions, certificate): {run.run_seconds:.2f} s "
              f"(CPU {run.run_cpu_seconds:.2f} s)",
              f"  utility: OASiS {run.oasis_utility:.1f}, greedy {run.greedy_utility:.1f}; "
              f"D/ALG {run.ratio_upper_bound:.1f}, min(D, standalone)/ALG {run.best_ratio_upper_bound:.3f}",
              f"target size: {target.jobs} jobs, T = {target.horizon}, {target.worker_servers}+"
              f"{target.ps_servers} servers: decision median {target.decision_ms_median:.2f} ms, "
              f"p99 {target.decision_ms_p99:.2f} ms (target <= {result.target_median_ms:g} ms median; "
              f"CPU median {target.decision_cpu_ms_median:.2f} ms)"]
    return "\n".join(lines)


__all__ = ["DecisionTimes", "OasisBench", "ReferenceTimes", "TARGET_MEDIAN_MS", "WholeRun", "format_benchmark",
           "run_benchmark", "same_answer", "time_decisions"]
