"""Replay a recorded straggler trace through BSP, LB-BSP and the oracle ([design] time law).

**Time law.** A trace gives each worker's mini-batch time ``m[t, i]`` at the equal batch
``x0 = X / n``. For other batch sizes we assume a fixed per-iteration overhead ``a`` (the same on every
worker: framework and synchronisation costs that do not scale with the batch) plus a per-sample cost
calibrated so that the law reproduces the trace at ``x0``:

    T_i^t(x) = a + (m[t, i] - a) * x / x0,      a = overhead_fraction * min_{t,i} m[t, i].

``overhead_fraction = 0`` (the default) is the linear CPU law of docs/papers.md, LB-BSP. Consequences (tested in
``tests/lbbsp/test_lbbsp_replay.py``): BSP's iteration time is the trace's per-iteration maximum
whatever ``a`` is; the per-sample speed a worker can measure at the barrier, ``x / (T - a)``, equals
``x0 / (m - a)`` whatever batch it ran, so predictors see the same series under every method; because
``a`` is common to all workers the continuous optimum is still proportional to speeds (docs/papers.md, LB-BSP,
``x_i* = v_i (tau* - a)``). A larger ``a`` makes the per-sample costs ``m_i - a`` *more* unequal (two
workers at 1 and 2 differ 2x at ``a = 0`` and 3x at ``a = 0.5``), so the oracle's gain over BSP grows
with ``a``: 1.5x at ``a = 0`` and 1.58x at ``a = 0.5`` on that pair (hand-computed in the tests).

**Methods.** ``bsp`` (equal batches), ``lbbsp_cpu[P]`` (the proportional rule of :mod:`.cpu` on the
speeds predicted by predictor P, fed the measured per-sample speeds; no CPU/memory readings exist in
these traces, so ARX/NARX run without exogenous inputs), ``lbbsp_gpu`` (the leader/straggler stepper of
:mod:`.gpu` on the measured times) and ``oracle``: the exact integer min-max allocation (:mod:`.exact`)
for the true law of the coming iteration, i.e. it knows the trace's times before they happen (a
clairvoyant upper bound; in a trace the "jitter" the simulator's oracle does not know is part of the
recorded times). ``DEFAULT_PREDICTOR`` names the LB-BSP method behind ``speedup``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from primaldual.core.errors import InputError
from primaldual.lbbsp.cpu import equal_batches, proportional_batches
from primaldual.lbbsp.exact import solve_exact
from primaldual.lbbsp.gpu import GpuController, GpuStepperConfig
from primaldual.lbbsp.predictors.registry import make_predictor
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.time_laws import TimeLaws
from primaldual.lbbsp.traces import WorkerTrace

DEFAULT_PREDICTOR = "select"
REPLAY_PREDICTORS = ("last", "ewma", "arx", "narx", "sarx", "robust", "robust_changes", "select")
BATCH_PER_WORKER = 64


@dataclass(frozen=True)
class ReplayLaw:
    """The calibrated law ``T_i^t(x) = overhead + (m[t, i] - overhead) * x / x0`` of one trace."""

    times: np.ndarray
    global_batch: int
    overhead: float

    @property
    def equal_batch(self) -> float:
        return self.global_batch / self.times.shape[1]

    def seconds(self, t: int, batch) -> np.ndarray:
        return self.overhead + (self.times[t] - self.overhead) * np.asarray(batch, dtype=float) / self.equal_batch

    def speed(self, t: int) -> np.ndarray:
        """Per-sample speed ``x0 / (m - a)`` of iteration t (what a worker measures as ``x / (T - a)``)."""
        return self.equal_batch / (self.times[t] - self.overhead)

    def laws(self, t: int) -> TimeLaws:
        return TimeLaws.linear(self.speed(t), self.overhead)


def share_of_gain(speedup: float, oracle_speedup: float) -> float | None:
    """``(B/Pi - 1) / (B/O - 1)`` from the speedups ``B/Pi`` and ``B/O`` (proofs/lbbsp.md 1); None if ``B/O <= 1``."""
    return (speedup - 1.0) / (oracle_speedup - 1.0) if oracle_speedup > 1.0 else None


def gap_to_oracle_percent(speedup: float, oracle_speedup: float) -> float:
    """Percent by which LB-BSP's iterations are slower than the oracle's (replay and ``bench lbbsp`` alike)."""
    return 100.0 * (oracle_speedup / speedup - 1.0)


#: Iterations x workers a replay accepts. Every predictor runs at every barrier, and select's bank solves four
#: small LPs there: about 0.9 ms per trace cell, measured (2 shared cores; docs/lbbsp-traces.md, "Cost"), so the cap
#: keeps a replay of every predictor under ~10 minutes. A larger trace is refused up front.
MAX_REPLAY_CELLS = 200_000
#: ``--global-batch`` at most this many samples per worker: the batches are int64 and the oracle's greedy
#: fill is O(n log n) per iteration whatever X is; 10^6 per worker is far beyond any GPU memory.
MAX_BATCH_PER_WORKER = 1_000_000
#: ``--overhead-fraction`` below 1 by this margin: the per-sample cost m - a >= 0.01 min m keeps speeds finite.
MAX_OVERHEAD_FRACTION = 0.99


def check_replay_size(trace: WorkerTrace, cells: int = MAX_REPLAY_CELLS) -> None:
    """Refuse, before any work, a trace whose iterations x workers exceed ``cells`` (the documented limit)."""
    if trace.n_iterations * trace.n_workers > cells:
        raise InputError(f"trace {trace.name}: {trace.n_iterations} iterations x {trace.n_workers} workers = "
                         f"{trace.n_iterations * trace.n_workers:,} cells; a replay handles at most {cells:,} "
                         "(about 1 ms per cell; docs/lbbsp-traces.md, \"Cost\"). Replay a part of the trace")


def make_law(trace: WorkerTrace, global_batch: int | None, overhead_fraction: float) -> ReplayLaw:
    n = trace.n_workers
    global_batch = BATCH_PER_WORKER * n if global_batch is None else global_batch
    high = MAX_BATCH_PER_WORKER * n
    if int(global_batch) != global_batch or not n <= global_batch <= high:
        raise InputError(f"--global-batch: must be an integer >= workers = {n} and <= {high} (10^6 per worker), "
                         f"got {global_batch}")
    if not 0.0 <= overhead_fraction <= MAX_OVERHEAD_FRACTION:
        raise InputError(f"--overhead-fraction: must be in [0, 0.99], got {overhead_fraction}")
    return ReplayLaw(trace.times, int(global_batch), overhead_fraction * float(trace.times.min()))


@dataclass(frozen=True)
class ReplayResult:
    """Per-method iteration times (trace units) and batches; per-predictor one-step MAPE (percent)."""

    trace: WorkerTrace
    law: ReplayLaw
    iteration_times: dict
    batches: dict
    mape_percent: dict
    default_method: str
    references: dict = field(default_factory=dict)

    def mean(self, method: str) -> float:
        return float(np.mean(self.iteration_times[method]))

    def speedup_of(self, method: str) -> float:
        return self.mean("bsp") / self.mean(method)

    def summary(self) -> dict:
        speedup, oracle = self.speedup_of(self.default_method), self.speedup_of("oracle")
        return {
            "trace": self.trace.name,
            "workers": self.trace.n_workers,
            "iterations": self.trace.n_iterations,
            "skipped_iterations": self.trace.skipped_iterations,
            "global_batch": self.law.global_batch,
            "time_law": {"formula": "T_i(x) = a + (m_i - a) * x / x0", "overhead_a": self.law.overhead,
                         "equal_batch_x0": self.law.equal_batch},
            "lbbsp_method": self.default_method,
            "mean_iteration_seconds": {m: self.mean(m) for m in self.iteration_times},
            "speedups": {m: self.speedup_of(m) for m in self.iteration_times},
            "speedup": speedup,
            "oracle_speedup": oracle,
            "gap_to_oracle_percent": gap_to_oracle_percent(speedup, oracle),
            "share_of_oracle_gain": share_of_gain(speedup, oracle),
            "captures_half_of_oracle_gain": bool(speedup - 1.0 >= 0.5 * (oracle - 1.0)),
            "mape_percent": self.mape_percent,
        } | ({"hindsight_references": self._reference_summary(speedup, oracle)} if self.references else {})

    def _reference_summary(self, speedup: float, oracle: float) -> dict:
        """The hindsight references of :mod:`.limits`: their speedups, shares of the oracle's gain, and how far
        the LB-BSP method is from each (``speedup / reference - 1``; > 0 when LB-BSP is faster)."""
        bsp = self.mean("bsp")
        summary = {}
        for key, (label, times) in self.references.items():
            reference = bsp / float(np.mean(times))
            summary[key] = {"rule": label, "speedup": reference,
                            "share_of_oracle_gain": share_of_gain(reference, oracle),
                            "lbbsp_over_reference_percent": 100.0 * (speedup / reference - 1.0)}
        return summary


def _predictions(law: ReplayLaw, predictor: str, seed: int, members: dict | None = None, tick=None) -> np.ndarray:
    """One-step predictions of every iteration's speeds (row t: made at the barrier before t; NaN at t=0).

    The measured speed does not depend on the batch a worker ran (module docstring), so one pass serves
    every method and gives the MAPE on the real series. If ``members`` is a dict and the predictor has a
    bank (``select``), each member's predictions are stored in it under the member's label.
    """
    iterations, n = law.times.shape
    model = make_predictor(predictor, n, seed=seed)
    predicted = np.full((iterations, n), np.nan)
    banked = members is not None and hasattr(model, "members")
    if banked:
        from primaldual.lbbsp.limits import member_labels

        labels = member_labels(model)
        bank = np.full((len(labels), iterations, n), np.nan)
    for t in range(iterations):
        guess = model.predict()
        if guess is not None:
            predicted[t] = guess
        if banked:
            for index, member_guess in enumerate(model.predictions):
                if member_guess is not None:
                    bank[index, t] = member_guess
        model.observe(law.speed(t), None)
        if tick is not None:
            tick()
    if banked:
        members.update(zip(labels, bank))
    return predicted


def _run_cpu(law: ReplayLaw, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    iterations, n = law.times.shape
    equal = equal_batches(n, law.global_batch)
    batches = np.empty((iterations, n), dtype=np.int64)
    for t in range(iterations):
        known = not np.isnan(predicted[t, 0])
        batches[t] = proportional_batches(predicted[t], law.global_batch) if known else equal
    return batches, _times(law, batches)


def _run_gpu(law: ReplayLaw) -> tuple[np.ndarray, np.ndarray]:
    iterations, n = law.times.shape
    config = GpuStepperConfig(law.global_batch, np.full(n, law.global_batch, dtype=np.int64))
    controller = GpuController(config, equal_batches(n, law.global_batch))
    batches = np.empty((iterations, n), dtype=np.int64)
    for t in range(iterations):
        batches[t] = controller.next_batch()
        controller.observe(law.seconds(t, batches[t]))
    return batches, _times(law, batches)


def _run_oracle(law: ReplayLaw, tick=None) -> tuple[np.ndarray, np.ndarray]:
    iterations, n = law.times.shape
    batches = np.empty((iterations, n), dtype=np.int64)
    for t in range(iterations):
        batches[t] = solve_exact(BatchSizingProblem(law.laws(t), law.global_batch)).batch
        if tick is not None:
            tick()
    return batches, _times(law, batches)


def _times(law: ReplayLaw, batches: np.ndarray) -> np.ndarray:
    return np.array([np.max(law.seconds(t, batches[t])) for t in range(len(batches))])


def replay(trace: WorkerTrace, global_batch: int | None = None, predictors=REPLAY_PREDICTORS,
           overhead_fraction: float = 0.0, default_predictor: str = DEFAULT_PREDICTOR, gpu: bool = True,
           seed: int = 0, references: bool = True, progress=None) -> ReplayResult:
    """Run BSP, LB-BSP (CPU rule per predictor, GPU stepper) and the oracle on ``trace``; with
    ``references``, also the hindsight references of :mod:`.limits` (the best bank member needs a
    ``select`` predictor among ``predictors``).

    Cost: linear in the trace's iterations T, O(T (P + 1)) barrier steps for P predictors plus the oracle, each
    the predictor's own update (docs/lbbsp-traces.md, "Cost") and the static split's LP on at most 2,000 of the
    iterations. ``progress(total)``, if given, returns a callable ticked once per barrier step (a progress bar).
    """
    check_replay_size(trace)
    law = make_law(trace, global_batch, overhead_fraction)
    predictors = tuple(dict.fromkeys((default_predictor, *predictors)))
    tick = None if progress is None else progress((len(predictors) + 1) * trace.n_iterations)
    n = trace.n_workers
    bsp = np.tile(equal_batches(n, law.global_batch), (trace.n_iterations, 1))
    batches, times = {"bsp": bsp}, {"bsp": _times(law, bsp)}
    mape, members = {}, {}
    truth = np.array([law.speed(t) for t in range(trace.n_iterations)])
    for name in predictors:
        predicted = _predictions(law, name, seed, members if references and not members else None, tick)
        known = ~np.isnan(predicted[:, 0])
        mape[name] = float(100.0 * np.mean(np.abs(predicted[known] - truth[known]) / truth[known]))
        batches[f"lbbsp_cpu[{name}]"], times[f"lbbsp_cpu[{name}]"] = _run_cpu(law, predicted)
    if gpu:
        batches["lbbsp_gpu"], times["lbbsp_gpu"] = _run_gpu(law)
    batches["oracle"], times["oracle"] = _run_oracle(law, tick)
    reference_times = _references(law, members) if references else {}
    return ReplayResult(trace, law, times, batches, mape, f"lbbsp_cpu[{default_predictor}]", reference_times)


def _references(law: ReplayLaw, members: dict) -> dict:
    """``{key: (rule, per-iteration times)}`` of the hindsight references (:mod:`.limits`)."""
    from primaldual.lbbsp.limits import static_split_batches

    static = np.tile(static_split_batches(law), (law.times.shape[0], 1))
    references = {"best_static_split": ("one split for the whole trace", _times(law, static))}
    if members:
        member_times = {label: _run_cpu(law, predicted)[1] for label, predicted in members.items()}
        best = min(member_times, key=lambda label: float(np.mean(member_times[label])))
        references["best_bank_member"] = (best, member_times[best])
    return references


def cov_distribution(jobs=None, seed: int = 0, global_batch: int | None = None,
                     predictor: str = DEFAULT_PREDICTOR, max_iterations: int | None = None) -> dict:
    """Replay a synthetic-from-CoV trace (:func:`primaldual.lbbsp.traces.cov_trace`) per job of the CoV
    table; the distribution of LB-BSP's and the oracle's speedups over BSP, with quantiles."""
    from primaldual.lbbsp.traces import cov_trace, load_cov_table

    table = load_cov_table()
    jobs = range(table.shape[0]) if jobs is None else jobs
    rows = []
    for job in jobs:
        trace = cov_trace(job, seed=seed, table=table, max_iterations=max_iterations)
        result = replay(trace, global_batch, predictors=(predictor,), gpu=False,
                        default_predictor=predictor, seed=seed).summary()
        rows.append({"job": job, "mean_cov": float(np.nanmean(table[job][:max_iterations])), "speedup": result["speedup"],
                     "oracle_speedup": result["oracle_speedup"],
                     "gap_to_oracle_percent": result["gap_to_oracle_percent"],
                     "captures_half_of_oracle_gain": result["captures_half_of_oracle_gain"]}
                    | {f"{key}_speedup": reference["speedup"]
                       for key, reference in result.get("hindsight_references", {}).items()})
    quantiles = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)

    def summary(key: str) -> dict:
        values = np.array([row[key] for row in rows])
        return {f"q{int(100 * q)}": float(np.quantile(values, q)) for q in quantiles} | {"mean": float(values.mean())}

    return {"jobs": len(rows), "seed": seed, "max_iterations": max_iterations, "lbbsp_method": f"lbbsp_cpu[{predictor}]",
            "speedup": summary("speedup"), "oracle_speedup": summary("oracle_speedup"),
            "gap_to_oracle_percent": summary("gap_to_oracle_percent"),
            "jobs_capturing_half_of_oracle_gain": int(sum(row["captures_half_of_oracle_gain"] for row in rows)),
            "per_job": rows}
