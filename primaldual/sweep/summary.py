"""Per-scheduler OPT/ALG over the records of a sweep: the table ``ratio`` prints and ``reproduce`` checks, and the
utility per knob value behind the utility curves."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from primaldual.core.plural import counted
from primaldual.sweep.distributions import distribution_summary
from primaldual.sweep.records import Record, typed


@dataclass(frozen=True)
class RatioSample:
    """One scheduler's OPT/ALG over records: points with their certified intervals, and the instances with
    ALG = 0 (``unbounded``), which have no finite ratio."""

    points: list
    lowers: list
    uppers: list
    certificates: list
    utilities: list
    unbounded: int


def ratio_sample(records: Iterable[Record | Mapping], name: str) -> RatioSample:
    """Collect scheduler ``name``'s ratios from ``records`` (records without it are skipped)."""
    points, lowers, uppers, certificates, utilities = [], [], [], [], []
    unbounded = 0
    for record in typed(records):
        ratio = record.ratios.get(name)
        if ratio is None:
            continue
        utilities.append(record.schedulers[name].utility)
        if ratio.point is None or ratio.upper is None:
            unbounded += 1
            continue
        points.append(ratio.point)
        lowers.append(ratio.lower)
        uppers.append(ratio.upper)
        if ratio.certified is not None:
            certificates.append(ratio.certified)
    return RatioSample(points, lowers, uppers, certificates, utilities, unbounded)


def _mean(values: list) -> float | None:
    return float(np.mean(values)) if values else None


def _row(sample: RatioSample, exact: int) -> dict[str, Any]:
    points = sample.points
    # An instance where the scheduler earned nothing (OPT > 0) has OPT/ALG = inf: it is the worst instance,
    # never silently dropped; the means run over the finite ratios, with ``unbounded`` counting the others.
    infinite = sample.unbounded > 0
    row = {
        "instances": len(sample.utilities),
        "unbounded": sample.unbounded,
        "exact": exact,
        "mean_utility": _mean(sample.utilities),
        "mean": _mean(points),
        "median": float(np.median(points)) if points else None,
        "worst": math.inf if infinite else (float(np.max(points)) if points else None),
        "mean_interval": [float(np.mean(sample.lowers)), float(np.mean(sample.uppers))] if points else None,
        "worst_interval": [math.inf, math.inf] if infinite else (
            [float(np.max(sample.lowers)), float(np.max(sample.uppers))] if points else None),
    }
    if sample.certificates:
        row["certificate_mean"] = float(np.mean(sample.certificates))
        row["certificate_worst"] = float(np.max(sample.certificates))
    return row


def summarize(records: Iterable[Record | Mapping]) -> dict[str, Any]:
    """Per scheduler: how many instances, OPT/ALG mean, median and worst, and the certified intervals.

    Means run over instances where ALG > 0 or OPT = 0 (the ratio is finite); ``unbounded`` counts the others
    (ALG = 0 < OPT), which make ``worst`` (and both ends of ``worst_interval``) infinite (``null`` in JSON, with
    ``unbounded`` > 0 saying why).
    ``mean_interval``/``worst_interval`` bracket the mean and worst ratio with the OPT intervals, so they hold
    even where the solver stopped at its time limit. ``certificate_mean``/``certificate_worst`` summarise what a
    scheduler's own certificate proves about its ratio (for schedulers that offer upper bounds).
    ``distributions`` holds the per-job numbers (JCT quantiles, utility against standalone, finish-time
    fairness, utilisation) of :func:`primaldual.sweep.distributions.distribution_summary`.
    """
    records = typed(records)
    names: list[str] = []
    for record in records:
        names += [name for name in record.ratios if name not in names]
    statuses: dict[str, int] = {}
    for record in records:
        status = record.opt.get("status", "not computed")
        statuses[status] = statuses.get(status, 0) + 1
    rows = {name: _row(ratio_sample(records, name), sum(r.ratios[name].exact for r in records if name in r.ratios))
            for name in names}
    # Under restart costs the solve is of the start-cost relaxation: its "optimal" proves a bound, not OPT.
    relaxed = sum(1 for record in records if record.opt.get("relaxation"))
    return {"instances": len(records), "opt_status": statuses, "relaxed": relaxed, "schedulers": rows,
            "distributions": distribution_summary(records)}


def utility_table(records: Iterable[Record | Mapping], knob: str) -> dict[str, dict[float, list[float]]]:
    """``{scheduler: {knob value: [total utility per seed]}}``; the knob's value is read from the spec, else from
    the instance summary (records without it are skipped)."""
    table: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in typed(records):
        value = record.spec.get(knob)
        if value is None:
            value = record.instance.get(knob)
        if value is None:
            continue
        for name, entry in record.schedulers.items():
            table[name][value].append(entry.utility)
    return table


def _format(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v, digits) for v in value) + "]"
    return f"{value:.{digits}f}"


def format_summary(summary: dict) -> str:
    """The summary as a fixed-width text table."""
    header = ["scheduler", "n", "mean OPT/ALG (finite)", "worst", "mean interval", "worst interval", "exact", "ALG=0", "mean ALG"]
    lines = [header]
    for name, row in summary["schedulers"].items():
        lines.append([
            name, str(row["instances"]), _format(row["mean"]), _format(row["worst"]), _format(row["mean_interval"]),
            _format(row["worst_interval"]), str(row["exact"]), str(row["unbounded"]), _format(row["mean_utility"], 2),
        ])
    widths = [max(len(line[c]) for line in lines) for c in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    status = ", ".join(f"{key}: {value}" for key, value in sorted(summary["opt_status"].items()))
    relaxed = summary.get("relaxed", 0)
    text.append(f"{counted(summary['instances'], 'instance')}; OPT status: {status}" + (
        f" (on {relaxed}, of the start-cost relaxation: a bound on OPT with restart costs, proofs/oasis-lr.md "
        "Lemma R)" if relaxed else ""))
    if any(row["unbounded"] for row in summary["schedulers"].values()):
        text.append("mean OPT/ALG runs over the instances with a finite ratio; ALG=0 counts the others (ALG = 0 "
                    "< OPT), each an infinite OPT/ALG, so their worst is inf")
    for name, row in summary["schedulers"].items():
        if "certificate_mean" in row:
            text.append(f"{name}'s certificate bounds its OPT/ALG: mean {row['certificate_mean']:.3f}, "
                        f"worst {row['certificate_worst']:.3f}")
    return "\n".join(text)


__all__ = ["RatioSample", "format_summary", "ratio_sample", "summarize", "utility_table"]
