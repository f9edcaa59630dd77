"""One command that regenerates the headline results and says, for each, whether it reproduced.

``primaldual reproduce [--quick] --out DIR`` runs, through the resumable sweep machinery:

1. empirical competitive ratios OPT/ALG of OASiS and every baseline on ``tiny`` instances (OPT proven by the
   ILP) and on ``small`` instances (OPT with a time limit, bracketed by a certified interval);
2. total utility against the number of jobs (and, outside ``--quick``, against the cluster's capacity) on the
   ``paper``-style preset, the figure the paper's evaluation is built around (oasis.md section 6.1);
3. the LB-BSP benchmark (``primaldual.lbbsp.bench.run_benchmark``): iteration-time speedups over BSP.

It writes the figures, the raw records (``results.jsonl``, resumable: a rerun only computes what is missing),
``lbbsp.json`` and ``summary.md`` with two tables:

- **expectations of this artifact** (PASS/FAIL): what this implementation was measured to achieve, each with a
  tolerance (certificates bound OPT, every schedule passes the verifier, OPT is proven on tiny/small, the mean
  OPT/OASiS stays under a limit, LB-BSP beats BSP and the oracle bounds it). ``primaldual reproduce`` exits 1
  if one fails;
- **claims of the papers** (REPRODUCED / NOT REPRODUCED): checked as stated and shown whatever the verdict,
  with the measured number; the papers' own evaluation numbers are mostly not available (oasis.md
  section 6.2), so none is quoted beyond what the digests record.

``--quick`` runs the 300-job point without Dorm, which re-solves a MILP at every event and takes minutes there.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from primaldual.sweep import DEFAULT_SCHEDULERS, Spec, ratio_specs, summarize, sweep

BASELINES = tuple(name for name in DEFAULT_SCHEDULERS if name not in ("oasis", "greedy"))


@dataclass(frozen=True)
class Settings:
    """How much to run. ``QUICK`` fits in ten minutes on two cores; ``FULL`` is the complete artifact."""

    name: str
    tiny_instances: int
    small_instances: int
    small_time_limit: float
    paper_jobs: tuple[int, ...]
    paper_seeds: tuple[int, ...]
    #: Larger job counts run without Dorm, whose MILP per event takes minutes at this size.
    paper_jobs_without_dorm: tuple[int, ...]
    capacity_jobs: int
    capacity_scales: tuple[float, ...]
    capacity_seeds: tuple[int, ...]
    lbbsp_seeds: tuple[int, ...]
    lbbsp_quick: bool


QUICK = Settings(
    name="quick",
    tiny_instances=40,
    small_instances=16,
    small_time_limit=30.0,
    paper_jobs=(50, 100, 150, 200),
    paper_seeds=(0,),
    paper_jobs_without_dorm=(300,),
    capacity_jobs=100,
    capacity_scales=(),
    capacity_seeds=(),
    lbbsp_seeds=(0, 1, 2),
    lbbsp_quick=False,
)
FULL = Settings(
    name="full",
    tiny_instances=200,
    small_instances=50,
    small_time_limit=120.0,
    paper_jobs=(50, 100, 150, 200, 250, 300, 400),
    paper_seeds=(0, 1, 2),
    paper_jobs_without_dorm=(),
    capacity_jobs=300,
    capacity_scales=(0.5, 0.75, 1.0, 1.5, 2.0),
    capacity_seeds=(0, 1, 2),
    lbbsp_seeds=(0, 1, 2, 3, 4),
    lbbsp_quick=False,
)

#: Seeds of the ratio sweeps start here, so that they do not share instances with the unit tests' seeds.
TINY_SEED = 1000
SMALL_SEED = 2000


def experiment_specs(settings: Settings) -> list[Spec]:
    """Every sweep spec of the reproduction, labelled by experiment."""
    # tiny instances solve in milliseconds: no time limit, so no watchdog process per solve.
    specs = ratio_specs("tiny", settings.tiny_instances, TINY_SEED, label="ratio-tiny", time_limit=None)
    specs += ratio_specs(
        "small", settings.small_instances, SMALL_SEED, label="ratio-small", time_limit=settings.small_time_limit
    )
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, opt=False, label="utility-vs-jobs")
        for jobs in settings.paper_jobs
        for seed in settings.paper_seeds
    ]
    without_dorm = tuple(name for name in DEFAULT_SCHEDULERS if name != "dorm")
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, opt=False, label="utility-vs-jobs", schedulers=without_dorm)
        for jobs in settings.paper_jobs_without_dorm
        for seed in settings.paper_seeds
    ]
    specs += [
        Spec(preset="paper", jobs=settings.capacity_jobs, capacity_scale=scale, seed=seed, opt=False,
             label="utility-vs-capacity")
        for scale in settings.capacity_scales
        for seed in settings.capacity_seeds
    ]
    return specs


# ---------------------------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Outcome:
    """One line of ``summary.md``.

    ``kind`` is ``"expectation"`` (what this artifact was measured to achieve: PASS/FAIL) or ``"paper"`` (a
    claim of the paper, shown as REPRODUCED / NOT REPRODUCED with the measured number, never hidden).
    """

    result: str
    expected: str
    measured: str
    passed: bool
    why: str = ""
    kind: str = "expectation"

    @property
    def verdict(self) -> str:
        if self.kind == "paper":
            return "REPRODUCED" if self.passed else "NOT REPRODUCED"
        return "PASS" if self.passed else "FAIL"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _by_label(records: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(record["spec"]["label"], []).append(record)
    return out


#: Limits on the mean OPT/OASiS (upper end of its certified interval). Measured on the quick settings with the
#: code of 29 Nov 2026: tiny 1.218 (worst 2.907), small 1.210 (worst 1.504, the contended preset with 2 GPUs
#: per worker server); each limit leaves a margin.
MEAN_RATIO_LIMIT = {"tiny": 1.35, "small": 1.35}


def feasibility_check(label: str, records: list[dict]) -> Outcome:
    feasible = sum(1 for r in records for e in r["schedulers"].values() if e["feasible"])
    total = sum(len(r["schedulers"]) for r in records)
    with_opt = [r for r in records if r["opt"].get("computed")]
    opt_feasible = sum(1 for r in with_opt if r["opt"].get("schedule_feasible", True))
    return Outcome(
        f"feasibility ({label})", "every online and offline schedule passes the independent verifier",
        f"{feasible}/{total} online" + (f", {opt_feasible}/{len(with_opt)} offline" if with_opt else ""),
        feasible == total and opt_feasible == len(with_opt),
    )


def ratio_checks(records: list[dict]) -> list[Outcome]:
    if not records:
        return []
    preset = records[0]["spec"]["preset"]
    summary = summarize(records)
    oasis = summary["schedulers"].get("oasis", {})
    n = len(records)
    outcomes = []
    solved = summary["opt_status"].get("optimal", 0)
    outcomes.append(Outcome(
        f"OPT on {preset}", "the ILP proves optimality on every instance",
        f"{solved}/{n} optimal", solved == n,
        f"{preset} instances solve in seconds ("
        + (f"time limit {records[0]['spec']['time_limit']:g} s" if records[0]["spec"]["time_limit"] else "no time limit")
        + ")",
    ))
    bad_certificates, two_alphas = 0, []
    for record in records:
        certificate = record["opt"]["upper_candidates"].get("oasis_certificate")
        if certificate is not None and certificate < record["opt"]["lower"] - 1e-6 * max(1.0, certificate):
            bad_certificates += 1
        report = record["schedulers"].get("oasis", {}).get("report", {}).get("certificate", {})
        if report.get("two_alpha") is not None:
            two_alphas.append(report["two_alpha"])
    outcomes.append(Outcome(
        f"OASiS certificate on {preset}",
        "OASiS's dual objective D >= the best known OPT on every instance (weak duality), tolerance 1e-6",
        f"{n - bad_certificates}/{n} hold; mean D/OASiS {_fmt(oasis.get('certificate_mean'))}", bad_certificates == 0,
        "the final prices with recomputed payoffs are dual feasible (oasis.md section 5.2)",
    ))
    outcomes.append(feasibility_check(preset, records))
    limit = MEAN_RATIO_LIMIT.get(preset, 1.5)
    interval = oasis.get("mean_interval") or [None, None]
    outcomes.append(Outcome(
        f"mean OPT/OASiS on {preset}", f"<= {limit:g} (upper end of the certified interval of the mean)",
        f"{_fmt(oasis.get('mean'))} (interval {_fmt(interval[0])}-{_fmt(interval[1])}), "
        f"worst {_fmt(oasis.get('worst'))}, ALG = 0 on {oasis.get('unbounded', 0)}",
        interval[1] is not None and interval[1] <= limit and oasis.get("unbounded", 0) == 0,
    ))
    worst = (oasis.get("worst_interval") or [None, None])[1]
    if two_alphas:
        outcomes.append(Outcome(
            f"2 alpha bound on {preset}", "worst OPT/OASiS <= 2 alpha on every instance (the competitive ratio)",
            f"worst {_fmt(worst)}; 2 alpha between {min(two_alphas):.3g} and {max(two_alphas):.3g}",
            worst is not None and all(
                r["ratios"]["oasis"]["upper"] is not None
                and r["ratios"]["oasis"]["upper"] <= r["schedulers"]["oasis"]["report"]["certificate"]["two_alpha"]
                for r in records if r["schedulers"]["oasis"]["report"].get("certificate", {}).get("two_alpha")
            ),
            "a worst-case guarantee; random instances sit far below it",
        ))
    return outcomes


def _relative(records: list[dict], knob: str):
    """Per knob value: OASiS's mean utility and each baseline's (means over seeds)."""
    from primaldual.plots import utility_table

    table = utility_table(records, knob)
    rows = []
    for value in sorted(table.get("oasis", {})):
        oasis = float(np.mean(table["oasis"][value]))
        others = {name: float(np.mean(table[name][value])) for name in BASELINES if value in table.get(name, {})}
        rows.append((value, oasis, others))
    return rows


def paper_checks(records: list[dict], knob: str) -> list[Outcome]:
    """Utility curves on the paper preset: feasibility, weak duality at scale, and the paper's claim."""
    if not records:
        return []
    rows = _relative(records, knob)
    worst, where = math.inf, None
    for value, oasis, others in rows:
        for name, other in others.items():
            ratio = oasis / other if other > 0 else math.inf
            if ratio < worst:
                worst, where = ratio, (name, value)
    from primaldual.plots import KNOBS

    place = "" if where is None else f" ({where[0]} at {knob} = {where[1]:g})"
    measured = f"smallest OASiS / baseline utility {worst:.3f}{place}"
    # Weak duality: OASiS's dual objective D >= OPT >= the utility of every schedule of the instance.
    dominated, total, slack = 0, 0, math.inf
    for record in records:
        certificate = record["schedulers"].get("oasis", {}).get("report", {}).get("certificate", {})
        bound = certificate.get("dual_objective")
        if bound is None:
            continue
        for entry in record["schedulers"].values():
            total += 1
            if entry["utility"] <= bound * (1 + 1e-9):
                dominated += 1
            if entry["utility"] > 0:
                slack = min(slack, bound / entry["utility"])
    return [
        feasibility_check(f"paper, {knob}", records),
        Outcome(
            f"OASiS certificate at scale ({knob}, paper)",
            "OASiS's dual objective D >= the total utility of every scheduler on every instance (weak duality)",
            f"{dominated}/{total} hold; smallest D / utility {slack:.3f}", total > 0 and dominated == total,
            "no ILP at this scale, but D bounds OPT and so every schedule",
        ),
        Outcome(
            f"paper: OASiS best ({knob})",
            f"OASiS total utility >= every baseline ({', '.join(BASELINES)}) at every {KNOBS.get(knob, knob)}",
            measured, worst >= 1.0 - 1e-9,
            "the paper's headline (oasis.md section 6.1, [reported]); this artifact's preset, price constants and "
            "baselines are [design] reconstructions, so a miss is a finding about them (see the table below)",
            kind="paper",
        ),
    ]


# ---------------------------------------------------------------------------------------------- LB-BSP


def run_lbbsp(settings: Settings) -> dict[str, Any] | None:
    try:
        from primaldual.lbbsp.bench import run_benchmark
    except ImportError:  # pragma: no cover - part of the package
        return None
    return {str(seed): run_benchmark(seed=seed, quick=settings.lbbsp_quick) for seed in settings.lbbsp_seeds}


def lbbsp_checks(lbbsp: dict[str, Any]) -> list[Outcome]:
    outcomes = []
    scenarios = sorted({name for run in lbbsp.values() for name in run["scenarios"]})
    for name in scenarios:
        runs = [run["scenarios"][name] for run in lbbsp.values() if name in run["scenarios"]]
        speedups = [r["lbbsp_speedup"] for r in runs]
        oracle = [r["oracle_speedup"] for r in runs]
        paper = runs[0]["paper_improvement_percent"]
        mean_gain = 100.0 * (float(np.mean(speedups)) - 1.0)
        outcomes.append(Outcome(
            f"LB-BSP faster than BSP ({name})", "LB-BSP's speedup over BSP >= 1.10 on every seed",
            f"speedups {', '.join(f'{s:.3f}' for s in speedups)} ({runs[0]['lbbsp_method']})",
            min(speedups) >= 1.10,
        ))
        outcomes.append(Outcome(
            f"oracle bounds LB-BSP ({name})", "the oracle's speedup >= LB-BSP's on every seed (1% slack)",
            f"oracle {', '.join(f'{s:.3f}' for s in oracle)}",
            all(o >= s * 0.99 for o, s in zip(oracle, speedups)),
        ))
        outcomes.append(Outcome(
            f"paper: LB-BSP gain ({name})", f"{paper:g}% faster than BSP; same order: within 0.5x-2x of it",
            f"{mean_gain:.1f}% (mean over seeds, simulated)", 0.5 * paper <= mean_gain <= 2.0 * paper,
            "the paper measured real training on EC2; this is a simulation, so only the order is compared",
            kind="paper",
        ))
    return outcomes


def lbbsp_figure(lbbsp: dict[str, Any], out_dir: Path) -> list[Path]:
    from primaldual.plots import use_agg

    use_agg()
    import matplotlib.pyplot as plt

    scenarios = sorted({name for run in lbbsp.values() for name in run["scenarios"]})
    if not scenarios:
        return []
    fig, axes = plt.subplots(1, len(scenarios), figsize=(6 * len(scenarios), 3.8), squeeze=False)
    for ax, name in zip(axes[0], scenarios):
        runs = [run["scenarios"][name] for run in lbbsp.values()]
        methods = list(runs[0]["mean_iteration_seconds"])
        means = [np.mean([r["mean_iteration_seconds"][m] for r in runs]) for m in methods]
        spread = [np.std([r["mean_iteration_seconds"][m] for r in runs]) for m in methods]
        bars = ax.bar(methods, means, yerr=spread, color=["0.6", "#1f77b4", "#2ca02c", "#d62728"][: len(methods)])
        for bar, method in zip(bars, methods):
            speedup = np.mean([r["speedup"][method] for r in runs])
            ax.annotate(f"x{speedup:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("mean iteration time (s, simulated)")
        ax.set_title(f"{name}: {runs[0]['workers']} workers, {len(runs)} seeds (label: speedup vs BSP)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "lbbsp-iteration-time.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


# ---------------------------------------------------------------------------------------------- driver


@dataclass
class Reproduction:
    out: Path
    outcomes: list[Outcome]
    figures: list[Path]
    seconds: float
    records: int
    computed: int
    extra: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every expectation of the artifact holds (paper claims are reported, not required)."""
        return all(outcome.passed for outcome in self.outcomes if outcome.kind == "expectation")


def reproduce(
    out: str | Path,
    quick: bool = True,
    executor=None,
    workers: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    settings: Settings | None = None,
) -> Reproduction:
    """Run everything into ``out``; returns the outcomes (also written to ``out/summary.md``).

    ``settings`` overrides ``quick`` (a smaller :class:`Settings` for tests).
    """
    from primaldual.plots import plot_records

    started = time.perf_counter()
    settings = settings or (QUICK if quick else FULL)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    specs = experiment_specs(settings)
    log(f"reproduce ({settings.name}): {len(specs)} sweep specs -> {out / 'results.jsonl'}")
    result = sweep(specs, out / "results.jsonl", executor=executor, workers=workers, progress=progress)
    sweep_seconds = time.perf_counter() - started
    groups = _by_label(result.records)
    figures = plot_records(result.records, out / "figures")
    outcomes = []
    outcomes += ratio_checks(groups.get("ratio-tiny", []))
    outcomes += ratio_checks(groups.get("ratio-small", []))
    outcomes += paper_checks(groups.get("utility-vs-jobs", []), "jobs")
    outcomes += paper_checks(groups.get("utility-vs-capacity", []), "capacity_scale")

    log("reproduce: LB-BSP benchmark")
    clock = time.perf_counter()
    lbbsp = run_lbbsp(settings)
    lbbsp_seconds = time.perf_counter() - clock
    if lbbsp:
        (out / "lbbsp.json").write_text(json.dumps(lbbsp, indent=2, sort_keys=True, default=str) + "\n")
        figures += lbbsp_figure(lbbsp, out / "figures")
        outcomes += lbbsp_checks(lbbsp)

    seconds = time.perf_counter() - started
    reproduction = Reproduction(
        out=out, outcomes=outcomes, figures=figures, seconds=seconds, records=len(result.records),
        computed=result.computed,
        extra={
            "settings": settings.name, "sweep_seconds": sweep_seconds, "lbbsp_seconds": lbbsp_seconds,
            "summaries": {label: summarize(group) for label, group in groups.items() if label.startswith("ratio")},
            "utility": {label: _relative(group, "jobs" if label.endswith("jobs") else "capacity_scale")
                        for label, group in groups.items() if label.startswith("utility")},
        },
    )
    write_summary(reproduction, settings)
    return reproduction


def write_summary(reproduction: Reproduction, settings: Settings) -> Path:
    from primaldual.sweep import format_summary, versions

    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    claims = [o for o in reproduction.outcomes if o.kind == "paper"]
    passed = sum(o.passed for o in expectations)
    lines = [
        "# primaldual: reproduction summary",
        "",
        f"**{passed}/{len(expectations)} expectations PASS**; "
        f"{sum(o.passed for o in claims)}/{len(claims)} of the papers' claims reproduced.",
        "",
        f"Settings: **{settings.name}**. {reproduction.records} sweep records ({reproduction.computed} computed in "
        f"this run, the rest reused from `results.jsonl`); wall time {reproduction.seconds:.0f} s "
        f"(sweeps {reproduction.extra.get('sweep_seconds', 0):.0f} s, LB-BSP {reproduction.extra.get('lbbsp_seconds', 0):.0f} s).",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".",
        "",
        "## Expectations of this artifact",
        "",
        "What this implementation was measured to achieve, each with a tolerance. A FAIL means the artifact",
        "does not reproduce itself on this machine.",
        "",
        "| result | expected | measured | verdict |",
        "|---|---|---|---|",
    ]
    lines += [f"| {o.result} | {o.expected} | {o.measured} | {o.verdict} |" for o in expectations]
    lines += [
        "",
        "## Claims of the papers",
        "",
        "The papers' own numbers are mostly not available (shared/papers/oasis.md section 6.2), and their setups",
        "are reconstructed ([design]); each claim is checked as stated and the verdict is shown whatever it is.",
        "",
        "| claim | as stated | measured | verdict |",
        "|---|---|---|---|",
    ]
    lines += [f"| {o.result} | {o.expected} | {o.measured} | {o.verdict} |" for o in claims]
    notes = [o for o in reproduction.outcomes if o.why]
    if notes:
        lines += ["", "Notes:", ""] + [f"- *{o.result}*: {o.why}." for o in notes]
    for label, summary in reproduction.extra.get("summaries", {}).items():
        lines += ["", f"## {label}: OPT/ALG per scheduler", "", "```", format_summary(summary), "```"]
    for label, rows in reproduction.extra.get("utility", {}).items():
        names = sorted({name for _, _, others in rows for name in others}, key=BASELINES.index)
        lines += ["", f"## {label}: total utility (mean over seeds)", "",
                  f"| {'jobs' if label.endswith('jobs') else 'capacity'} | oasis | " + " | ".join(names)
                  + " | OASiS / best baseline |",
                  "|---" * (len(names) + 3) + "|"]
        for value, oasis, others in rows:
            best = max(others.values()) if others else 0.0
            relative = f"{oasis / best:.3f}" if best > 0 else "n/a"
            cells = " | ".join(f"{others[n]:.1f}" if n in others else "-" for n in names)
            lines.append(f"| {value:g} | {oasis:.1f} | {cells} | {relative} |")
    if reproduction.figures:
        lines += ["", "## Figures", ""]
        lines += [f"![{p.stem}]({p.relative_to(reproduction.out)})" for p in reproduction.figures]
    path = reproduction.out / "summary.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


__all__ = [
    "FULL", "QUICK", "Outcome", "Reproduction", "Settings", "experiment_specs", "lbbsp_checks", "paper_checks",
    "ratio_checks", "reproduce",
]
