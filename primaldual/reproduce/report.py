"""``summary.md`` and ``summary.json`` of a reproduction: the verdict tables, the mean OPT/ALG per set, the
utility tables and the figures with their captions."""

from __future__ import annotations

import json
from pathlib import Path

from primaldual.reproduce.trace_report import trace_lines
from primaldual.reproduce.experiments import BASELINES, CLAIMANT, RATIO_SETS, SCHEDULERS, Settings, base_label


def _cell(row: dict | None) -> str:
    """Mean OPT/ALG, with the certified interval of the mean where it is not a point."""
    if not row or row.get("mean") is None:
        return "-"
    text = f"{row['mean']:.3f}"
    low, high = row.get("mean_interval") or (None, None)
    if low is not None and high is not None and high - low > 5e-4:
        text += f" [{low:.3f}, {high:.3f}]"
    if row.get("unbounded"):
        text += f" (ALG = 0 on {row['unbounded']})"
    return text


def ratio_table(summaries: dict[str, dict]) -> list[str]:
    """One row per ratio set and restart cost: the mean OPT/ALG of each scheduler."""
    names = [n for n in SCHEDULERS if any(n in s["schedulers"] for s in summaries.values())]
    lines = ["| set | restart cost | instances | OPT proven | " + " | ".join(names) + " |",
             "|---" * (len(names) + 4) + "|"]
    for label, summary in summaries.items():
        base, cost = base_label(label)
        proven = summary["opt_status"].get("optimal", 0)
        if summary.get("relaxed"):  # the relaxation's optimum is a bound on OPT with restart costs, not OPT
            proven = f"0 (bound proven on {proven})"
        cells = " | ".join(_cell(summary["schedulers"].get(n)) for n in names)
        lines.append(f"| {RATIO_SETS.get(base, base)} | {cost:g} | {summary['instances']} | {proven} | {cells} |")
    return lines


def write_summary(reproduction: Reproduction, settings: Settings) -> Path:
    """Write ``summary.md`` (verdicts, mean OPT/ALG per set, utility tables, figures) and ``summary.json``."""
    summaries = reproduction.extra.get("summaries", {})
    lines = (_header(reproduction, settings) + _verdicts(reproduction) + _ratio_sections(summaries)
             + _utility_sections(reproduction.extra.get("utility", {}))
             + trace_lines(reproduction.extra.get("traces", [])) + _figures(reproduction))
    path = reproduction.out / "summary.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _write_json(reproduction, settings, summaries)
    return path


def _header(reproduction: Reproduction, settings: Settings) -> list[str]:
    """The title, the count of verdicts, the settings, schedulers and software versions."""
    from primaldual.sweep import versions

    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    claims = [o for o in reproduction.outcomes if o.kind == "paper"]
    passed = sum(o.passed for o in expectations)
    inconclusive = sum(o.inconclusive and not o.passed for o in expectations)
    extra = reproduction.extra
    return [
        "# primaldual: reproduction summary",
        "",
        f"**{passed}/{len(expectations)} expectations PASS**"
        + (f" ({inconclusive} INCONCLUSIVE: a solve hit its time limit on this machine; rerun to recompute)"
           if inconclusive else "") + "; "
        f"{sum(o.passed for o in claims)}/{len(claims)} of the papers' claims reproduced.",
        "",
        f"Settings: **{settings.name}**. {reproduction.records} sweep records ({reproduction.computed} computed in "
        f"this run, the rest reused from `results.jsonl`); wall time {reproduction.seconds:.0f} s "
        f"(sweeps {extra.get('sweep_seconds', 0):.0f} s, LB-BSP {extra.get('lbbsp_seconds', 0):.0f} s, "
        f"traces {extra.get('traces_seconds', 0):.0f} s).",
        "Schedulers: " + ", ".join(SCHEDULERS) + " (`rrh-full-reward`: RRH with the source's full reward, "
        "risk_weight 0.8; `rrh-nonpreemptive`: RRH that never preempts a started job; `rrh`: present value, "
        "preemptive, the reading most favourable to RRH; primaldual/baselines/rrh.py).",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".",
    ]


def _verdicts(reproduction: Reproduction) -> list[str]:
    """The table of the artifact's expectations, the table of the papers' claims, and the notes of both."""
    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    claims = [o for o in reproduction.outcomes if o.kind == "paper"]
    lines = [
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
        "The papers' own numbers are mostly not available (docs/papers.md), and their setups",
        "are reconstructed ([design]); each claim is checked as stated and the verdict is shown whatever it is.",
        f"The claim that OASiS earns the most is checked for `{CLAIMANT}`, the variant this artifact puts forward.",
        "",
        "| claim | as stated | measured | verdict |",
        "|---|---|---|---|",
    ]
    lines += [f"| {o.result} | {o.expected} | {o.measured} | {o.verdict} |" for o in claims]
    notes = [o for o in reproduction.outcomes if o.why]
    if notes:
        lines += ["", "Notes:", ""] + [f"- *{o.result}*: {o.why}." for o in notes]
    return lines


def _ratio_sections(summaries: dict[str, dict]) -> list[str]:
    """The mean OPT/ALG of every set side by side, then each set's full table."""
    from primaldual.sweep import format_summary

    lines: list[str] = []
    if summaries:
        lines += [
            "", "## Mean OPT/ALG per set", "",
            "Mean over instances of OPT/ALG (the point: the best verified utility over ALG); in brackets the",
            "certified interval of the mean where OPT was not proven. At restart cost > 0, OPT is the optimum",
            "with restart costs: its upper end is the start-cost relaxation's (every job needs one more",
            "worker-slot, proofs/oasis-lr.md Lemma R), its lower end the best online schedule, so the ratios",
            "there are intervals, never proven.", "",
        ] + ratio_table(summaries)
    for label, summary in summaries.items():
        lines += ["", f"## {label}: OPT/ALG per scheduler", "", "```", format_summary(summary), "```"]
    return lines


def _utility_sections(utility: dict[str, list]) -> list[str]:
    """Per utility curve, the claimant's and each baseline's total utility per knob value."""
    lines: list[str] = []
    for label, rows in utility.items():
        names = sorted({name for _, _, others in rows for name in others}, key=BASELINES.index)
        knob = "jobs" if base_label(label)[0].endswith("jobs") else "capacity"
        lines += ["", f"## {label}: total utility (mean over seeds)", "",
                  f"| {knob} | {CLAIMANT} | " + " | ".join(names) + f" | {CLAIMANT} / best baseline |",
                  "|---" * (len(names) + 3) + "|"]
        for value, mine, others in rows:
            best = max(others.values()) if others else 0.0
            relative = f"{mine / best:.3f}" if best > 0 else "n/a"
            cells = " | ".join(f"{others[n]:.1f}" if n in others else "-" for n in names)
            lines.append(f"| {value:g} | {mine:.1f} | {cells} | {relative} |")
    return lines


def _figures(reproduction: Reproduction) -> list[str]:
    """Every figure with its caption."""
    captions = reproduction.extra.get("captions", {})
    lines: list[str] = []
    if reproduction.figures:
        lines += ["", "## Figures", ""]
        for path in reproduction.figures:
            lines += [f"![{path.stem}]({path.relative_to(reproduction.out)})", ""]
            if captions.get(str(path)):
                lines += [f"*{captions[str(path)]}*", ""]
    return lines


def _write_json(reproduction, settings: Settings, summaries: dict[str, dict]) -> Path:
    """``summary.json``: the same numbers for programs; ``distributions`` per set is
    :func:`primaldual.sweep.distributions.distribution_summary` of its records (via ``summarize``)."""
    extra = reproduction.extra
    data = {
        "format": "primaldual.reproduction", "version": 1, "settings": settings.name,
        "passed": reproduction.passed, "inconclusive": reproduction.inconclusive,
        "records": reproduction.records, "computed": reproduction.computed,
        "outcomes": [o.to_dict() for o in reproduction.outcomes],
        "ratios": {label: {"instances": s["instances"], "opt_status": s["opt_status"], "schedulers": s["schedulers"]}
                   for label, s in summaries.items()},
        "distributions": {label: s["distributions"] for label, s in summaries.items()},
        "utility": {label: [{"value": v, CLAIMANT: mine, **others} for v, mine, others in rows]
                    for label, rows in extra.get("utility", {}).items()},
        # per-job lists stay in traces.jsonl
        "traces": [{**record, "schedulers": {name: {k: v for k, v in row.items() if k not in ("jct", "slowdown")}
                                             for name, row in record["schedulers"].items()}}
                   for record in extra.get("traces", [])],
        "figures": [{"path": str(p.relative_to(reproduction.out)), "caption": extra.get("captions", {}).get(str(p), "")}
                    for p in reproduction.figures],
    }
    path = reproduction.out / "summary.json"
    from primaldual.core.jsonable import jsonable  # infinities (unbounded ratios) become null

    path.write_text(json.dumps(jsonable(data), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
