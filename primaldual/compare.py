"""Every online scheduler on one instance, beside the offline optimum: the library behind ``primaldual compare``.

:func:`compare` runs the schedulers through the simulator, checks every schedule with the independent
verifier, optionally solves the offline ILP with a time limit (seeded with the best online schedule as a MIP
start), and bounds OPT/ALG for each scheduler.

**OPT/ALG.** The optimum OPT is known to lie in ``[low, high]``:

* ``low`` is the best verified utility in the run: the ILP's incumbent, or the best scheduler's schedule;
* ``high`` is the smallest proven upper bound: the ILP's bound (``opt=True``) and OASiS's certificate (its dual
  bound ``D``, or the smaller standalone bound it reports; both are objectives of feasible duals of the
  packing LP (14), so they bound OPT by weak duality).

When the ILP proves optimality, ``low = high = OPT`` and OPT/ALG is one number; otherwise each row holds the
interval ``[low / ALG, high / ALG]`` (None for an end that is unknown, ``inf`` when ALG = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primaldual.metrics import compute_metrics
from primaldual.scheduler import available_schedulers, make_scheduler
from primaldual.simulate import SimulationError, SimulationResult, simulate, to_jsonable
from primaldual.verify import verify

#: Relative slack when comparing utilities with bounds (floating-point sums, solver tolerances).
BOUND_TOLERANCE = 1e-6


def describe(instance) -> dict:
    """The instance's size, as reported by ``run`` and ``compare``."""
    return {
        "jobs": instance.n_jobs,
        "horizon": instance.horizon,
        "worker_servers": instance.cluster.n_worker_servers,
        "ps_servers": instance.cluster.n_ps_servers,
    }


def _ratio(numerator: float | None, utility: float) -> float | None:
    if numerator is None:
        return None
    if utility <= 0:
        return math.inf
    return numerator / utility


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` found: ``summary`` is the ``--json`` object (JSON-ready), ``results`` each scheduler's
    :class:`~primaldual.simulate.SimulationResult` (schedulers that broke a rule have none) and ``offline`` the
    :class:`~primaldual.offline.OfflineResult` (None without ``opt``)."""

    summary: dict
    results: dict[str, SimulationResult]
    offline: object | None


def compare(instance, names: list[str] | None = None, parameters: dict[str, dict] | None = None, *,
            opt: bool = False, solver: str = "highs", time_limit: float | None = 60.0,
            mip_gap: float | None = None) -> Comparison:
    """Run the schedulers ``names`` (default: all registered) with ``parameters[name]`` on ``instance``, verify
    every schedule, optionally solve the offline ILP (seeded with the best online schedule), and bound OPT/ALG
    (module docstring)."""
    names = available_schedulers() if names is None else list(names)
    parameters = parameters or {}
    rows = []
    results = {}
    for name in names:
        scheduler = make_scheduler(name, **parameters.get(name, {}))
        try:
            result = simulate(instance, scheduler)
        except SimulationError as error:
            rows.append({"scheduler": name, "error": str(error), "rule": error.rule, "slot": error.slot,
                         "job": error.job, "verified": False})
            continue
        report = verify(instance, result.schedule)
        results[name] = result
        metrics = result.metrics
        rows.append({
            "scheduler": name,
            "utility": metrics.utility,
            "admitted": metrics.admitted,
            "completed": metrics.completed,
            "unfinished": metrics.unfinished,
            "mean_jct": metrics.mean_jct,
            "runtime_seconds": result.scheduler_seconds,
            "verified": report.feasible,
            "verified_utility": report.utility,
            "violations": [v.message for v in report.violations[:5]],
            "utilisation": metrics.utilisation,
            "parameters": to_jsonable(result.parameters),
        })

    good = [row for row in rows if row.get("verified")]
    best_row = max(good, key=lambda row: row["utility"], default=None)
    low = best_row["utility"] if best_row else 0.0
    uppers = []

    certificate = None
    if "oasis" in results and results["oasis"].report.get("certificate"):
        certificate = to_jsonable(results["oasis"].report["certificate"])
        for key in ("dual_objective", "best_upper_bound"):
            if certificate.get(key) is not None:
                uppers.append(("oasis certificate", float(certificate[key])))

    opt_summary = None
    offline = None
    warnings = []
    if opt:
        from primaldual.offline import solve_offline  # imported here: without --opt no model code is loaded

        start = results[best_row["scheduler"]].schedule if best_row and best_row["utility"] > 0 else None
        offline = solve_offline(instance, solver=solver, time_limit=time_limit, mip_gap=mip_gap, start=start)
        opt_summary = {
            "status": offline.status,
            "objective": offline.objective,
            "bound": offline.bound,
            "gap": offline.gap,
            "solver": offline.solver,
            "build_seconds": offline.build_seconds,
            "solve_seconds": offline.solve_seconds,
            "start_scheduler": best_row["scheduler"] if start is not None else None,
            "start_objective": offline.start_objective,
            "incumbent_source": offline.incumbent_source,
            "message": offline.message,
        }
        if offline.schedule is not None:
            opt_report = verify(instance, offline.schedule)
            opt_metrics = compute_metrics(instance, offline.schedule)
            opt_summary.update({
                "verified": opt_report.feasible,
                "admitted": opt_metrics.admitted,
                "completed": opt_metrics.completed,
                "mean_jct": opt_metrics.mean_jct,
            })
            if opt_report.feasible and offline.objective is not None:
                low = max(low, float(offline.objective))
        if offline.bound is not None:
            uppers.append(("ILP bound", float(offline.bound)))
        if offline.status == "optimal" and offline.objective is not None:
            uppers.append(("ILP optimum", float(offline.objective)))

    high = min((value for _, value in uppers), default=None)
    if high is not None and low > high * (1 + BOUND_TOLERANCE) + BOUND_TOLERANCE:
        sources = ", ".join(f"{source} {value:.6g}" for source, value in uppers)
        warnings.append(f"a verified utility {low:.6g} exceeds an upper bound ({sources}): a bound is wrong")
    proven = opt_summary is not None and opt_summary["status"] == "optimal"
    for row in rows:
        if "utility" not in row:
            continue
        row["ratio"] = {
            "low": _ratio(low, row["utility"]),
            "high": _ratio(high, row["utility"]),
            "proven": proven,
        }
    if certificate is not None:
        alg = results["oasis"].utility
        best = certificate.get("best_upper_bound", certificate.get("dual_objective"))
        certificate["ratio_interval"] = [_ratio(max(low, alg), alg), _ratio(best, alg)]
    summary = {
        "instance": describe(instance),
        "rows": rows,
        "opt": opt_summary,
        "opt_interval": [low, high],
        "certificate": certificate,
        "warnings": warnings,
    }
    return Comparison(summary=summary, results=results, offline=offline)


__all__ = ["BOUND_TOLERANCE", "Comparison", "compare", "describe"]
