"""The pure task of a sweep: one :class:`~primaldual.sweep.spec.Spec` in, one JSON record out.

The record is :func:`primaldual.evaluation.pipeline.evaluate` on the generated instance, written down (its format, with an
example, is in ``docs/formats.md``). Durations (every key ending in ``seconds``) go to ``record["timings"]``,
the only part of a record that depends on the machine; :func:`deterministic_part` is the rest.
"""

from __future__ import annotations

import platform
import time
from importlib import metadata
from typing import Any

from primaldual.evaluation.bounds import Ratio, standalone_bound
from primaldual.core.jsonable import jsonable
from primaldual.core.provenance import KEY as PROVENANCE, provenance
from primaldual.sweep.spec import Spec, spec_key

RECORD_FORMAT = "primaldual.sweep_record"
#: 3: under restart costs the OPT interval bounds the optimum *with* restart costs through the start-cost
#: relaxation (``opt.relaxation``, :mod:`primaldual.evaluation.restart_bound`); a version-2 record with a restart cost
#: bounded it by the model without them, and is recomputed (:func:`outdated`).
RECORD_VERSION = 3
#: The first record version whose OPT interval under restart costs is the start-cost relaxation's.
RELAXED_BOUND_VERSION = 3


def versions() -> dict[str, str]:
    import primaldual

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "primaldual": primaldual.__version__,
        "pyomo": version("pyomo"),
        "highspy": version("highspy"),
        "numpy": version("numpy"),
        "python": platform.python_version(),
    }


def _instance_summary(instance, standalone: float) -> dict[str, Any]:
    return {
        "jobs": int(instance.n_jobs),
        "horizon": int(instance.horizon),
        "worker_servers": int(instance.cluster.n_worker_servers),
        "ps_servers": int(instance.cluster.n_ps_servers),
        "resources": list(instance.cluster.resources),
        "can_finish": int(instance.can_finish.sum()),
        "total_work_units": int(instance.work_units.sum()),
        "standalone_bound": standalone,
    }


def _without_seconds(data: dict, timings: dict) -> dict:
    """``data`` without its top-level ``*seconds`` entries, which are moved into ``timings``."""
    kept = {}
    for key, value in data.items():
        (timings if str(key).endswith("seconds") else kept)[key] = value
    return kept


def _scheduler_entry(instance, outcome, timings: dict) -> dict[str, Any]:
    result, check = outcome.result, outcome.verification
    timings["simulate_seconds"] = outcome.seconds
    entry = {
        # The verifier's utility is the one every ratio uses: it shares no code with the scheduler.
        "utility": outcome.utility,
        "feasible": bool(check.feasible),
        "violations": len(check.violations),
        "admitted": check.admitted,
        "metrics": _without_seconds(jsonable(result.metrics), timings),
        "parameters": jsonable(result.parameters),
        "report": _without_seconds(jsonable(result.report), timings),
        "upper_bounds": dict(outcome.upper_bounds),
    }
    entry["outcomes"] = _job_outcomes(instance, outcome)
    return entry


def _job_outcomes(instance, outcome) -> dict:
    """Per-job outcomes of the run (:class:`primaldual.evaluation.outcomes.JobOutcomes`), abandoned jobs included."""
    from primaldual.evaluation.outcomes import job_outcomes

    return job_outcomes(instance, outcome.result.schedule, received=outcome.result.received).to_dict()


def _opt_entry(evaluation, timings: dict) -> dict[str, Any]:
    offline = evaluation.offline
    if evaluation.restart_opt is not None and (evaluation.offline_entry or {}).get("model") == "restart":
        solve = evaluation.restart_opt.solve  # the exact restart solve, proven
        timings.update(opt_seconds=evaluation.seconds.get("restart_opt"), opt_build_seconds=solve.build_seconds,
                       opt_solve_seconds=solve.solve_seconds)
        return jsonable(evaluation.offline_entry)
    if offline is None:
        return {"computed": False}
    timings.update(opt_seconds=evaluation.seconds.get("opt"), opt_build_seconds=offline.build_seconds,
                   opt_solve_seconds=offline.solve_seconds)
    return jsonable(evaluation.offline_entry)


def run(spec: Spec) -> dict[str, Any]:
    """Run one spec; return its record (a plain JSON dict; ``docs/formats.md`` describes it)."""
    from primaldual.core.generate import generate
    from primaldual.evaluation.pipeline import evaluate

    started = time.perf_counter()
    timings: dict[str, Any] = {"schedulers": {}}
    instance = generate(**spec.generator_knobs())
    timings["generate_seconds"] = time.perf_counter() - started
    evaluation = evaluate(instance, spec.schedulers, solve=spec.solve, restart_cost=spec.restart_cost,
                          parameters={name: spec.params_for(name) for name in spec.schedulers})
    schedulers = {}
    for name, outcome in evaluation.outcomes.items():
        if outcome.error is not None:
            raise outcome.error  # a scheduler that breaks a rule stops the sweep: its records would be wrong
        timings["schedulers"][name] = {}
        schedulers[name] = _scheduler_entry(instance, outcome, timings["schedulers"][name])
    opt = _opt_entry(evaluation, timings)
    timings["total_seconds"] = time.perf_counter() - started
    return {
        "key": spec_key(spec),
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "spec": spec.to_dict(),
        # The instance's own standalone bound; under a restart cost the interval's is the relaxation's.
        "instance": _instance_summary(instance, evaluation.interval.upper_candidates["standalone"]
                                      if evaluation.relaxation is None else standalone_bound(instance)),
        "schedulers": schedulers,
        "opt": opt,
        "opt_interval": jsonable(evaluation.interval),
        "ratios": {name: ratio.to_dict() for name, ratio in evaluation.ratios.items()},
        "versions": versions(),
        "timings": jsonable(timings),
        PROVENANCE: provenance(),
    }


def scheduler_revisions(spec: Spec) -> dict[str, int]:
    """Each scheduler's ``revision`` (:attr:`primaldual.simulation.scheduler.OnlineScheduler.revision`) as this package
    runs it; a record without the field was made at revision 1 of every scheduler."""
    from primaldual.simulation.scheduler import scheduler_revision

    return {name: scheduler_revision(name) for name in spec.schedulers}


def outdated(record: dict, spec: Spec) -> bool:
    """True if a scheduler of ``spec`` has changed since ``record`` was made (its runs would differ now), or
    if the record bounds OPT under restart costs the way records did before version 3 (:data:`RECORD_VERSION`)."""
    if spec.restart_cost and int(record.get("version", 1)) < RELAXED_BOUND_VERSION:
        return True
    made = record.get("scheduler_revisions") or {}
    return any(made.get(name, 1) != revision for name, revision in scheduler_revisions(spec).items())


def ratio_interval(opt_lower: float, opt_upper: float, utility: float) -> dict[str, Any]:
    """OPT/ALG of one scheduler as a certified interval, in a record's form (:class:`primaldual.evaluation.bounds.Ratio`)."""
    return Ratio.of(opt_lower, opt_upper, utility).to_dict()


def deterministic_part(record: dict) -> dict:
    """The record without its timings and provenance: what must be identical across executors and reruns."""
    return {key: value for key, value in record.items() if key not in ("timings", PROVENANCE)}


__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "deterministic_part", "outdated", "ratio_interval",
           "scheduler_revisions",
           "run", "versions"]
