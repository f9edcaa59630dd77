"""The trace section of ``primaldual reproduce``: every scheduler on real Philly arrivals (docs/traces.md).

**Cases.** A *window* is a week (or shorter) cut out of a packaged VC by :func:`primaldual.traces.windows.busiest_window`
(the window whose own arrivals bring the most GPU-hours), imported at one-hour slots with the default options of
:class:`primaldual.traces.TraceOptions`; a *whole* VC is the packaged VC imported whole. Each case runs at restart
cost 0 and at the reproduction's ``--restart-cost``.

**Bounds.** On a window, OPT is bracketed by column generation (``method="cg"``, :mod:`primaldual.offline.price_and_branch`)
under a time limit: the interval's low end is the best verified schedule, its high end the smallest certified
bound (:mod:`primaldual.evaluation.bounds`). With ``skip_tight_solve`` (the quick settings) the schedulers run first and the
solve is skipped when their best verified utility already meets the standalone bound (OPT is then proven). On a whole VC no ILP is built: the high end is the smaller of the
standalone bound (every job alone) and the pooled LP relaxation (:func:`primaldual.offline.pooled.pooled_lp_prices`,
a sparse LP, skipped when it does not finish within its time limit). At a restart cost both bound the optimum of
the start-cost relaxation (:mod:`primaldual.evaluation.restart_bound`), which bounds the optimum with restart costs.

**What each case records** (:func:`run_case`, a JSON object, one line of ``traces.jsonl``): per scheduler its
verified utility, OPT/ALG as an interval, jobs admitted and completed, the per-job JCT and slowdown (JCT over the
standalone JCT, :attr:`primaldual.evaluation.outcomes.JobOutcomes.finish_time_fairness`) of the completed jobs, and
Jain's index of the slowdowns (:func:`jain_index`). A rerun reuses the lines whose key (case, restart cost,
schedulers, time limits) it finds and whose solve was not stopped by the clock.

Cost: the schedulers' runs (seconds per week window, Dorm tens of seconds) plus the time limit of each bound.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from primaldual.reproduce.experiments import TraceCase, TraceSettings

def jain_index(values) -> float | None:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)`` of the finite values: 1 when all are equal, ``1/n``
    when one holds everything; None without values."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    if array.size == 0 or not np.any(array):
        return None
    return float(array.sum() ** 2 / (array.size * np.sum(array ** 2)))


def case_window(case: TraceCase) -> tuple[float, float] | None:
    """The ``--window`` of a case: as given, the busiest window of its length, or None (whole)."""
    if case.busiest is None:
        return case.window
    from primaldual.traces import read_records
    from primaldual.traces.throughput import packaged_table
    from primaldual.traces.windows import busiest_window

    records, found = read_records(case.source)
    window = busiest_window(records, packaged_table(), case.busiest, source=found.name)
    return window.start_hour, window.hours


def case_key(case: TraceCase, restart_cost: float, settings: TraceSettings) -> str:
    fields = {k: v for k, v in asdict(case).items() if k != "gpu_types" or v is not None}  # keys stay as before
    text = json.dumps([fields, restart_cost, list(settings.schedulers), settings.cg_time_limit,
                       settings.pooled_lp_time_limit], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _scheduler_row(instance, outcome, low: float, high: float | None) -> dict:
    from primaldual.evaluation.outcomes import job_outcomes

    if not outcome.ran:
        return {"ran": False, "error": str(outcome.error)}
    jobs = job_outcomes(instance, outcome.result.schedule, received=outcome.result.received)
    done = jobs.completed
    slowdown = jobs.finish_time_fairness[done]
    slowdown = slowdown[np.isfinite(slowdown)]
    alg = float(outcome.utility)
    return {
        "ran": True, "verified": bool(outcome.feasible), "utility": outcome.utility,
        "ratio": [_ratio(low, alg), _ratio(high, alg)], "admitted": outcome.result.metrics.admitted,
        "completed": int(done.sum()), "completed_jobs": np.flatnonzero(done).tolist(),
        "jct": jobs.jct[done].tolist(), "slowdown": slowdown.tolist(), "jain_slowdown": jain_index(slowdown),
        "seconds": outcome.seconds,
    }


def whole_bound(instance, time_limit: float, threads: int) -> tuple[float | None, float]:
    """The pooled LP relaxation's bound on OPT (None if it did not finish in ``time_limit``) and its seconds."""
    from primaldual.offline.pooled import pooled_lp_prices

    clock = time.perf_counter()
    pooled = pooled_lp_prices(instance, time_limit, threads)
    return (None if pooled is None else float(pooled[0])), time.perf_counter() - clock


def run_case(case: TraceCase, settings: TraceSettings, restart_cost: float) -> dict:
    """One case at one restart cost (module docstring): a JSON-able record."""
    from primaldual.evaluation.bounds import tight
    from primaldual.evaluation.pipeline import evaluate
    from primaldual.offline.options import SolveOptions
    from primaldual.traces import TraceOptions, import_trace

    window = case_window(case)
    instance = import_trace(case.source, TraceOptions(window=window, gpu_types=case.gpu_types))
    solve = SolveOptions(method="cg", time_limit=settings.cg_time_limit, threads=settings.threads) \
        if window is not None else None
    clock = time.perf_counter()
    evaluation = None
    if settings.skip_tight_solve and solve is not None:
        evaluation = evaluate(instance, settings.schedulers, restart_cost=restart_cost)
        if not tight(evaluation.interval.low, evaluation.interval.high):
            evaluation = None
    if evaluation is None:
        evaluation = evaluate(instance, settings.schedulers, solve=solve, restart_cost=restart_cost)
    interval = evaluation.interval
    high, high_method, pooled_seconds = interval.high, interval.high_method, None
    if window is None:
        pooled, pooled_seconds = whole_bound(evaluation.bound_instance, settings.pooled_lp_time_limit,
                                             settings.threads)
        if pooled is not None and (high is None or pooled < high):
            high, high_method = pooled, "pooled-lp"
    low = interval.low
    rows = {name: _scheduler_row(instance, outcome, low, high) for name, outcome in evaluation.outcomes.items()}
    offline = evaluation.offline_entry or {}
    return {
        "key": case_key(case, restart_cost, settings), "case": case.name, "source": case.source,
        "window": None if window is None else list(window), "restart_cost": restart_cost,
        "jobs": instance.n_jobs, "slots": instance.horizon, "gpus": instance.meta["trace"]["cluster"]["gpus"],
        "opt": {"low": low, "high": high, "low_method": interval.low_method, "high_method": high_method,
                "width": None if high is None or high <= 0 else (high - low) / high,
                "status": offline.get("status", "proven by the standalone bound" if window is not None and
                                     tight(low, high) else None), "time_limited": bool(offline.get("time_limited")),
                "seconds": evaluation.seconds.get("opt"), "pooled_lp_seconds": pooled_seconds},
        "schedulers": rows, "warnings": list(evaluation.warnings), "seconds": time.perf_counter() - clock,
    }


def _ratio(numerator: float | None, alg: float) -> float | None:
    if numerator is None:
        return None
    if alg > 0:
        return numerator / alg
    return 1.0 if numerator <= 0 else None


def run_traces(settings: TraceSettings, path: Path, restart_costs: tuple[float, ...],
               log: Callable[[str], None] = print) -> list[dict]:
    """Every case at every restart cost, reusing the lines of ``path`` (JSON lines) computed before."""
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if not record["opt"]["time_limited"]:
                done[record["key"]] = record
    records = []
    for case in settings.windows + settings.whole:
        for cost in restart_costs:
            key = case_key(case, cost, settings)
            if key not in done:
                log(f"reproduce: traces: {case.name}, restart cost {cost:g}")
                done[key] = run_case(case, settings, cost)
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(done[key], allow_nan=False, default=_json_default) + "\n")
            records.append(done[key])
    return records


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def finite(value) -> bool:
    return value is not None and math.isfinite(value)
