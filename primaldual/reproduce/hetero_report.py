"""The heterogeneous section of ``primaldual reproduce`` (issue 64): its checks and summary.md lines, from the records
of :func:`primaldual.reproduce.traces.run_traces` on the cases of
:data:`~primaldual.reproduce.experiments.QUICK_HETERO` / ``FULL_HETERO`` (Philly weeks on V100, P100 and K80).

Checks: those of :func:`primaldual.reproduce.trace_report.trace_checks` (every schedule verifies, the bound holds,
the windows' interval width), and **Gavel's comparison** (OSDI 2020): on every case, heterogeneity-aware LAS
(``gavel-las``) gives a lower mean JCT than its agnostic form (``las``), **on the jobs both complete** (the horizon
cuts what Gavel's simulator runs to the end, and a policy that completes more, longer jobs would otherwise look
slower). The tables show each scheduler's mean over the jobs it completes, with the count beside it.
"""

from __future__ import annotations

import numpy as np

from primaldual.reproduce.checks import Outcome
from primaldual.reproduce.trace_report import _cell, _where, trace_checks

#: Gavel's comparison: (aware, agnostic).
AWARE, AGNOSTIC = "gavel-las", "las"


def mean_jct(row: dict | None) -> float | None:
    """The mean JCT (slots) of the jobs a scheduler completed; None if it did not run or completed none."""
    if not row or not row["ran"] or not row["jct"]:
        return None
    return float(np.mean(row["jct"]))


def paired_jct(one: dict | None, other: dict | None) -> tuple[float, float] | None:
    """The two schedulers' mean JCT over the jobs both complete; None if either did not run or none is shared."""
    if not one or not other or not one["ran"] or not other["ran"]:
        return None
    mine, theirs = (dict(zip(row["completed_jobs"], row["jct"])) for row in (one, other))
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return None
    return float(np.mean([mine[i] for i in shared])), float(np.mean([theirs[i] for i in shared]))


def hetero_checks(records: list[dict]) -> list[Outcome]:
    """The trace checks on these records, and Gavel's comparison (module docstring)."""
    if not records:
        return []
    outcomes = trace_checks(records, "heterogeneous")
    pairs = [(r, paired_jct(r["schedulers"].get(AWARE), r["schedulers"].get(AGNOSTIC))) for r in records]
    pairs = [(r, *pair) for r, pair in pairs if pair is not None]
    if pairs:
        worse = [_where(r) for r, aware, agnostic in pairs if aware >= agnostic]
        shown = "; ".join(f"{_where(r)}: {aware:.1f} vs {agnostic:.1f}" for r, aware, agnostic in pairs[:3])
        outcomes.append(Outcome(
            "Gavel: awareness lowers mean JCT",
            f"{AWARE}'s mean JCT < {AGNOSTIC}'s, on the jobs both complete, on every heterogeneous case",
            f"{len(pairs) - len(worse)}/{len(pairs)} cases ({shown})", not worse,
            why="" if not worse else "not lower on " + ", ".join(worse[:5])))
    return outcomes


def hetero_lines(records: list[dict]) -> list[str]:
    """summary.md's heterogeneous section: per case its OPT interval, then per scheduler utility (OPT/ALG), jobs
    completed and mean JCT."""
    if not records:
        return []
    lines = ["", "## Heterogeneous GPUs (V100, P100, K80)", "",
             "Philly weeks on a cluster of three GPU types (`trace import --gpu-types`; Gavel's measured "
             "throughputs per type). A job runs on one type per slot. Gavel's LAS in its agnostic (`las`) and aware "
             "(`gavel-las`) forms, and its finish-time fairness (`gavel-ftf`), beside every scheduler that handles "
             "types. Mean JCT in slots, over the jobs each completes.", ""]
    for r in records:
        opt = r["opt"]
        high = "-" if opt["high"] is None else f"{opt['high']:.1f}"
        width = "-" if opt["width"] is None else f"{opt['width']:.2%}"
        lines += [f"**{_where(r)}**: {r['jobs']} jobs, {r['slots']} slots, {r['gpus']} GPUs; OPT in "
                  f"[{opt['low']:.1f}, {high}] (width {width}, bound by {opt['high_method']}).", "",
                  "| scheduler | utility (OPT/ALG) | completed | mean JCT |", "|---|---|---|---|"]
        for name, row in r["schedulers"].items():
            jct = mean_jct(row)
            lines.append(f"| {name} | {_cell(row)} | {row.get('completed', '-') if row['ran'] else '-'} | "
                         f"{'-' if jct is None else f'{jct:.1f}'} |")
        lines.append("")
    return lines
