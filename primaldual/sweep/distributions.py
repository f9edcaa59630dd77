"""Distributions over jobs from sweep records, as numbers: JCT, finish-time fairness, utility against standalone
utility, and utilisation per scheduler (what ``plot --json`` prints and the distribution figures draw).

Readers use exactly each scheduler's per-job ``outcomes`` (a :meth:`JobOutcomes.to_dict
<primaldual.evaluation.outcomes.JobOutcomes.to_dict>`) and its metrics' ``utilisation``
(:meth:`primaldual.core.metrics.RunMetrics.to_dict`). Jobs are pooled over the records (seeds) of a group.
Schedulers come in one canonical order (:func:`ordered`), so tables, legends and axes agree.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from primaldual.evaluation.outcomes import JobOutcomes
from primaldual.sweep.records import Record, typed

#: The canonical order of scheduler names in tables, legends and axes.
ORDER = ("oasis", "oasis-lr", "oasis-p", "greedy", "fifo", "drf", "rrh", "dorm")
#: The quantiles reported per distribution, as ``p10`` ... ``p90``.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def ordered(names: Iterable[str]) -> list[str]:
    """``names`` without duplicates, in the canonical order (:data:`ORDER`, then alphabetical, OPT last)."""
    unique = list(dict.fromkeys(names))
    known = [name for name in ORDER if name in unique]
    others = sorted(name for name in unique if name not in ORDER and name != "OPT")
    return known + others + (["OPT"] if "OPT" in unique else [])


def outcomes_by_scheduler(records: Iterable[Record | Mapping]) -> dict[str, list[JobOutcomes]]:
    """``{scheduler: [JobOutcomes per record that carries them]}``, schedulers in the canonical order."""
    found: dict[str, list[JobOutcomes]] = {}
    for record in typed(records):
        for name, entry in record.schedulers.items():
            if entry.outcomes is not None:
                found.setdefault(name, []).append(JobOutcomes.from_dict(entry.outcomes))
    return {name: found[name] for name in ordered(found)}


def utilisation_by_scheduler(records: Iterable[Record | Mapping]) -> dict[str, dict[str, list[float]]]:
    """``{scheduler: {"pool/resource": [mean utilisation per record]}}`` from the records' metrics."""
    found: dict[str, dict[str, list[float]]] = {}
    for record in typed(records):
        for name, entry in record.schedulers.items():
            for pool, values in entry.utilisation.items():
                for resource, value in (values or {}).items():
                    if value is not None:
                        found.setdefault(name, {}).setdefault(f"{pool}/{resource}", []).append(float(value))
    return {name: found[name] for name in ordered(found)}


def quantiles(values) -> dict:
    """``{"n", "mean", "p10", ..., "p90"}`` of the finite values (None where there are none)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    out: dict = {"n": int(array.size), "mean": float(array.mean()) if array.size else None}
    for q in QUANTILES:
        out[f"p{round(100 * q)}"] = float(np.quantile(array, q)) if array.size else None
    return out


def pooled(outcomes: list[JobOutcomes], field: str) -> np.ndarray:
    """One per-job array of :class:`JobOutcomes` (``field``) over all the runs, concatenated."""
    return np.concatenate([getattr(o, field) for o in outcomes]) if outcomes else np.zeros(0)


def utility_share(outcomes: list[JobOutcomes]) -> np.ndarray:
    """Per job that can earn something alone: its utility divided by its standalone utility (in [0, 1])."""
    alone, got = pooled(outcomes, "standalone_utility"), pooled(outcomes, "utility")
    keep = alone > 0
    return got[keep] / alone[keep]


def distribution_summary(records: Iterable[Record | Mapping]) -> dict:
    """The numbers behind the distribution figures, per scheduler: how many records and jobs, quantiles of JCT
    (slots, completed jobs), finish-time fairness, utility share of standalone, and mean utilisation."""
    records = typed(records)
    outcomes, usage = outcomes_by_scheduler(records), utilisation_by_scheduler(records)
    out = {}
    for name in ordered(list(outcomes) + list(usage)):
        row: dict = {}
        if name in outcomes:
            runs = outcomes[name]
            completed = pooled(runs, "completion") >= 0
            row.update(
                records=len(runs), jobs=int(completed.size), completed=int(completed.sum()),
                abandoned=int(sum(int(o.abandoned.sum()) for o in runs)),
                jct_slots=quantiles(pooled(runs, "jct")),
                finish_time_fairness=quantiles(pooled(runs, "finish_time_fairness")),
                utility_share_of_standalone=quantiles(utility_share(runs)),
            )
        if name in usage:
            row["utilisation"] = {key: quantiles(values) for key, values in usage[name].items()}
        out[name] = row
    return {"records": len(records), "quantiles": [f"p{round(100 * q)}" for q in QUANTILES], "schedulers": out}


__all__ = [
    "ORDER", "QUANTILES", "distribution_summary", "ordered", "outcomes_by_scheduler", "pooled", "quantiles",
    "utilisation_by_scheduler", "utility_share",
]
