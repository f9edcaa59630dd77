"""The trace section's checks, its summary.md lines and its figures, from the records of
:func:`primaldual.reproduce.traces.run_traces`.

Checks (expectations, PASS/FAIL): every schedule on every trace instance verifies; on every case the OPT
interval's high end is at least every scheduler's utility (a bound below a verified utility would be wrong);
on the windows, the OPT interval is at most :data:`WIDTH_TARGET` wide (INCONCLUSIVE, not FAIL, where the
solve was stopped by its time limit: the width then measures the machine as much as the method).
The comparison of OASiS-LR and OASiS with RRH is a reading, not a check: per case and restart cost, who earns
more and by how much, ties (within :data:`TIE`) counted as ties.
The figures: this module only pools the numbers (:func:`trace_samples`); :mod:`primaldual.views.trace_figures`
draws them, and :func:`~primaldual.views.figure_data.save_figure` writes each as PNG, PDF and CSV.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from primaldual.reproduce.checks import Outcome
from primaldual.reproduce.experiments import BASELINES
from primaldual.views.figure_data import save_figure
from primaldual.views.trace_figures import TraceSamples, draw_trace_cdf, stem, trace_cdf_data

#: The widest OPT interval (relative to its high end) the windows' column generation is expected to certify.
WIDTH_TARGET = 0.02
#: Relative utility difference below which two schedulers tie.
TIE = 1e-6
#: Schedulers the reading compares with RRH.
CHALLENGERS = ("oasis", "oasis-lr")
#: Utility slack of a bound over a verified utility (floating-point sums, solver tolerances).
BOUND_SLACK = 1e-6


def _where(record: dict) -> str:
    cost = record["restart_cost"]
    return record["case"] + (f", restart {cost:g}" if cost else "")


def trace_checks(records: list[dict], section: str = "traces") -> list[Outcome]:
    """The three expectations of the module docstring (``section`` names them: ``traces`` or ``heterogeneous``)."""
    if not records:
        return []
    rows = [(r, name, row) for r in records for name, row in r["schedulers"].items()]
    bad = [f"{name} on {_where(r)}" for r, name, row in rows if not row["ran"] or not row["verified"]]
    outcomes = [Outcome(f"feasibility ({section})", "every schedule on every trace instance passes the verifier",
                        f"{len(rows) - len(bad)}/{len(rows)} verified", not bad,
                        why="" if not bad else "not verified: " + ", ".join(bad[:5]))]
    below = [f"{name} on {_where(r)}" for r, name, row in rows if row["ran"] and r["opt"]["high"] is not None
             and row["utility"] > r["opt"]["high"] * (1 + BOUND_SLACK) + BOUND_SLACK]
    outcomes.append(Outcome(f"OPT bound on {section}", "the certified bound >= every scheduler's utility",
                            f"{len(records) - len({w.split(' on ')[1] for w in below})}/{len(records)} cases hold",
                            not below, why="" if not below else "exceeded by " + ", ".join(below[:5])))
    windows = [r for r in records if r["window"] is not None and r["opt"]["width"] is not None]
    if windows:
        widest = max(windows, key=lambda r: r["opt"]["width"])
        wide = [r for r in windows if r["opt"]["width"] > WIDTH_TARGET]
        outcomes.append(Outcome(
            f"OPT interval on {'trace' if section == 'traces' else section} windows",
            f"width <= {WIDTH_TARGET:.0%} of the bound on every window",
            f"widest {widest['opt']['width']:.2%} ({_where(widest)}); {len(windows) - len(wide)}/{len(windows)} "
            "within", not wide, inconclusive=bool(wide) and all(r["opt"]["time_limited"] for r in wide),
            why="" if not wide else "stopped by the time limit: " + ", ".join(_where(r) for r in wide[:5])))
    return outcomes


def _reference(record: dict, reference: str) -> float | None:
    """RRH's utility (``reference="rrh"``) or the best baseline's (``"best-baseline"``: every scheduler of
    :data:`primaldual.reproduce.experiments.BASELINES` that ran), None if none ran."""
    names = ("rrh",) if reference == "rrh" else BASELINES
    values = [record["schedulers"][n]["utility"] for n in names
              if n in record["schedulers"] and record["schedulers"][n]["ran"]]
    return max(values) if values else None


def versus_rrh(records: list[dict], reference: str = "rrh") -> dict[str, dict]:
    """Per challenger: the cases (and restart costs) where it beats, ties or loses to the reference (RRH, or
    the best baseline), and the relative differences ``utility / reference's - 1`` where the reference earns."""
    out = {}
    for name in CHALLENGERS:
        tally = {"wins": [], "ties": [], "losses": [], "relative": []}
        for record in records:
            mine, other = record["schedulers"].get(name), _reference(record, reference)
            if not (mine and mine["ran"]) or other is None:
                continue
            difference = mine["utility"] - other
            key = "ties" if abs(difference) <= TIE * max(abs(other), 1.0) else ("wins" if difference > 0 else "losses")
            tally[key].append(_where(record))
            if other > 0:
                tally["relative"].append(mine["utility"] / other - 1)
        out[name] = tally
    return out


def _cell(row: dict) -> str:
    if not row["ran"]:
        return "error"
    low, high = row["ratio"]
    ratio = "-" if low is None else (f"{low:.3f}" if high is not None and high - low < 5e-4
                                     else f"[{low:.3f}, {'-' if high is None else f'{high:.3f}'}]")
    return f"{row['utility']:.1f} ({ratio})"


def trace_lines(records: list[dict]) -> list[str]:
    """summary.md's trace section: one table of cases, one of utility (OPT/ALG) per scheduler, fairness and
    the reading against RRH."""
    if not records:
        return []
    names = list(dict.fromkeys(n for r in records for n in r["schedulers"]))
    lines = ["", "## Real arrivals (Philly traces)", "",
             "Each case is a packaged VC (`primaldual trace list`), whole or its busiest window (most GPU-hours of "
             "its own arrivals), at one-hour slots. OPT: column generation on windows, the standalone bound and "
             "the pooled LP relaxation on whole VCs (no ILP); at a restart cost the bound is the start-cost "
             "relaxation's.", "",
             "| case | restart cost | jobs | slots | GPUs | OPT interval | width | bound by | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        opt = r["opt"]
        high = "-" if opt["high"] is None else f"{opt['high']:.1f}"
        width = "-" if opt["width"] is None else f"{opt['width']:.2%}"
        lines.append(f"| {r['case']} | {r['restart_cost']:g} | {r['jobs']} | {r['slots']} | {r['gpus']} | "
                     f"[{opt['low']:.1f}, {high}] | {width} | {opt['high_method']} | {r['seconds']:.0f} |")
    lines += ["", "Total utility per scheduler (OPT/ALG, an interval where OPT is not proven):", "",
              "| case | restart cost | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for r in records:
        cells = " | ".join(_cell(r["schedulers"][n]) if n in r["schedulers"] else "-" for n in names)
        lines.append(f"| {r['case']} | {r['restart_cost']:g} | {cells} |")
    lines += ["", "Fairness: Jain's index of the completed jobs' slowdowns (JCT / standalone JCT; 1: all equal) "
              "and the median slowdown:", "", "| case | restart cost | " + " | ".join(names) + " |",
              "|---" * (len(names) + 2) + "|"]
    for r in records:
        cells = []
        for n in names:
            row = r["schedulers"].get(n)
            if not row or not row["ran"] or not row["slowdown"]:
                cells.append("-")
                continue
            jain = "-" if row["jain_slowdown"] is None else f"{row['jain_slowdown']:.3f}"
            cells.append(f"{jain} / {np.median(row['slowdown']):.2f}")
        lines.append(f"| {r['case']} | {r['restart_cost']:g} | " + " | ".join(cells) + " |")
    for reference, title in (("rrh", "RRH"), ("best-baseline", "the best baseline of each case")):
        lines += ["", f"Against {title} (ties within a relative 1e-6):", ""]
        for name, tally in versus_rrh(records, reference).items():
            relative = tally["relative"]
            spread = (f"; utility / reference - 1 from {min(relative):+.2%} to {max(relative):+.2%}, "
                      f"median {np.median(relative):+.2%}") if relative else ""
            lines.append(f"- `{name}`: beats it on {len(tally['wins'])}, ties on {len(tally['ties'])}, loses on "
                         f"{len(tally['losses'])} of {sum(len(tally[k]) for k in ('wins', 'ties', 'losses'))} cases"
                         + spread + ".")
    return lines


def trace_samples(records: list[dict]) -> list[TraceSamples]:
    """Per restart cost (ascending): every scheduler's completed jobs' JCTs and slowdowns, pooled over the cases
    run at that cost (a scheduler that did not run on a case adds nothing from it)."""
    out = []
    for cost in sorted({r["restart_cost"] for r in records}):
        chosen = [r for r in records if r["restart_cost"] == cost]
        names = list(dict.fromkeys(n for r in chosen for n in r["schedulers"]))

        def pooled(name: str, key: str) -> np.ndarray:
            parts = [np.asarray(r["schedulers"][name].get(key) or [], dtype=float)
                     for r in chosen if name in r["schedulers"]]
            return np.concatenate(parts) if parts else np.zeros(0)

        out.append(TraceSamples(float(cost), len(chosen), {n: pooled(n, "jct") for n in names},
                                {n: pooled(n, "slowdown") for n in names}))
    return out


def trace_figures(records: list[dict], folder: Path) -> dict[Path, str]:
    """Per restart cost, the CDFs of JCT and of slowdown per scheduler, pooled over the cases
    (:mod:`primaldual.views.trace_figures`), each as PNG, PDF and the CSV of its numbers; PNG path -> caption."""
    out = {}
    for samples in trace_samples(records):
        data = trace_cdf_data(samples)
        out[save_figure(data, Path(folder) / stem(samples.restart_cost), draw_trace_cdf)] = data.meta["caption"]
    return out
