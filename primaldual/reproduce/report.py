"""``summary.md`` and ``summary.json`` of a reproduction: the verdict tables, the mean OPT/ALG per set, the
utility tables and the figures with their captions."""

from __future__ import annotations

import json
from pathlib import Path

from primaldual.core.output import write_text
from primaldual.core.provenance import describe, provenance
from primaldual.reproduce.hetero_report import hetero_lines
from primaldual.reproduce.trace_report import trace_lines
from primaldual.reproduce.experiments import (
    BASELINES, CLAIMANT, RATIO_SETS, SCHEDULERS, SECTIONS, Settings, base_label,
)


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
             + trace_lines(reproduction.extra.get("traces", []))
             + hetero_lines(reproduction.extra.get("hetero", [])) + _figures(reproduction))
    path = reproduction.out / "summary.md"
    write_text(path, "\n".join(lines) + "\n", "--out")
    _write_json(reproduction, settings, summaries)
    return path


def _header(reproduction: Reproduction, settings: Settings) -> list[str]:
    """The title, the count of verdicts, the settings, schedulers and software versions."""
    from primaldual.sweep import versions

    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    passed = sum(o.passed for o in expectations)
    inconclusive = sum(o.inconclusive and not o.passed for o in expectations)
    extra = reproduction.extra
    return [
        "# primaldual: reproduction summary",
        "",
        f"**{passed}/{len(expectations)} expectations PASS**"
        + (f" ({inconclusive} INCONCLUSIVE: a solve hit its time limit on this machine; rerun to recompute)"
           if inconclusive else "") + "; the papers' claims: " + _verdict_counts(reproduction, "paper")
        + "; the same claims for this artifact's variant: " + _verdict_counts(reproduction, "variant") + ".",
        "",
        _settings_line(reproduction, settings),
        _sections_line(extra.get("sections", list(SECTIONS))),
        "Schedulers: " + ", ".join(SCHEDULERS) + " (`rrh-full-reward`: RRH with the source's full reward, "
        "risk_weight 0.8; `rrh-nonpreemptive`: RRH that never preempts a started job; `rrh`: present value, "
        "preemptive, the reading most favourable to RRH; primaldual/baselines/rrh.py).",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".",
        "Provenance: " + describe(provenance()) + ".",
    ]


def _settings_line(reproduction: Reproduction, settings: Settings) -> str:
    """The settings, the sweep's record counts and the wall time of each section, of the sections that ran."""
    extra = reproduction.extra
    sections = extra.get("sections", list(SECTIONS))
    swept = "ratios" in sections or "paper" in sections
    parts = [("sweeps", "sweep_seconds")] if swept else []
    parts += [(name, f"{key}_seconds") for name, key in (("LB-BSP", "lbbsp"), ("traces", "traces"),
                                                         ("heterogeneous", "hetero")) if key in sections]
    records = (f"{reproduction.records} sweep records ({reproduction.computed} computed in this run, the rest "
               "reused from `results.jsonl`); ") if swept else ""
    times = ", ".join(f"{name} {extra.get(key, 0):.0f} s" for name, key in parts)
    return f"Settings: **{settings.name}**. {records}wall time {reproduction.seconds:.0f} s ({times})."


def _sections_line(sections: list[str]) -> str:
    """Which sections ran: a run of a subset (``--sections``) reports only those, and says so."""
    skipped = [name for name in SECTIONS if name not in sections]
    return f"Sections run: **{', '.join(sections)}**" + (
        f"; not run, so not reported here: {', '.join(skipped)}." if skipped else " (all).")


def _verdict_counts(reproduction: Reproduction, kind: str) -> str:
    """``"2 REPRODUCED, 1 TIE, 3 NOT REPRODUCED of 6"`` over the claims of ``kind``."""
    claims = [o for o in reproduction.outcomes if o.kind == kind]
    counts = [(verdict, sum(o.verdict == verdict for o in claims)) for verdict in ("REPRODUCED", "TIE",
                                                                                  "NOT REPRODUCED")]
    return ", ".join(f"{n} {verdict}" for verdict, n in counts) + f" of {len(claims)}"


def _verdicts(reproduction: Reproduction) -> list[str]:
    """The table of the artifact's expectations, the table of the papers' claims, and the notes of both."""
    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    claims = [o for o in reproduction.outcomes if o.claim]
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
        "The claim that OASiS earns the most is checked for `oasis` (\"paper:\" lines) and, on its own line, for",
        f"`{CLAIMANT}`, the variant this artifact puts forward (\"variant:\" lines). \"A beats B\" is REPRODUCED only",
        "where A's mean advantage exceeds the stated margin and its 95% t interval over paired seeds excludes 0;",
        "within the margin or the interval it is a TIE; a significant loss is NOT REPRODUCED",
        "(primaldual/reproduce/claims.py). Every tolerance is stated in its line with its source.",
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
    """Per utility curve, every scheduler's total utility per knob value (OASiS and its variants first)."""
    lines: list[str] = []
    for label, rows in utility.items():
        names = [n for n in SCHEDULERS if n != CLAIMANT and any(n in others for _, _, others in rows)]
        knob = "jobs" if base_label(label)[0].endswith("jobs") else "capacity"
        lines += ["", f"## {label}: total utility (mean over seeds)", "",
                  f"| {knob} | {CLAIMANT} | " + " | ".join(names) + " | oasis / best baseline | "
                  f"{CLAIMANT} / best baseline |", "|---" * (len(names) + 4) + "|"]
        for value, mine, others in rows:
            best = max((others[n] for n in BASELINES if n in others), default=0.0)
            cells = " | ".join(f"{others[n]:.1f}" if n in others else "-" for n in names)
            relative = [f"{a / best:.3f}" if best > 0 and a is not None else "n/a" for a in (others.get("oasis"), mine)]
            lines.append(f"| {value:g} | {mine:.1f} | {cells} | {relative[0]} | {relative[1]} |")
    return lines


def _figures(reproduction: Reproduction) -> list[str]:
    """The headline figures embedded with their captions and files (figures.md maps them to the papers), then a
    link to every other figure."""
    captions = reproduction.extra.get("captions", {})
    headline = reproduction.extra.get("headline", [])
    out = reproduction.out
    lines: list[str] = []
    if headline:
        lines += ["", "## Headline figures", "",
                  "Each mapped to the papers' figure or table, with its command, seeds, expected result and "
                  "tolerance, in [figures.md](figures.md). Beside every PNG: the PDF and the CSV of exactly the "
                  "plotted numbers (`primaldual plot --from-csv FILE.csv` redraws it).", ""]
        for path in headline:
            relative = path.relative_to(out)
            lines += [f"![{path.stem}]({relative})", ""]
            if captions.get(str(path)):
                lines += [f"*{captions[str(path)]}*", ""]
            lines += [f"[PDF]({relative.with_suffix('.pdf')}) · [CSV]({relative.with_suffix('.csv')})", ""]
    rest = [path for path in reproduction.figures if path not in headline]
    if rest:
        lines += ["", "## Other figures", "", "Each with its PDF and CSV beside it.", ""]
        for path in rest:
            relative = path.relative_to(out)
            caption = captions.get(str(path), "")
            lines.append(f"- [{path.stem}]({relative}) ([PDF]({relative.with_suffix('.pdf')}), "
                         f"[CSV]({relative.with_suffix('.csv')}))" + (f": {caption}" if caption else ""))
    return lines


def _write_json(reproduction, settings: Settings, summaries: dict[str, dict]) -> Path:
    """``summary.json``: the same numbers for programs; ``distributions`` per set is
    :func:`primaldual.sweep.distributions.distribution_summary` of its records (via ``summarize``)."""
    extra = reproduction.extra
    data = {
        "format": "primaldual.reproduction", "version": 1, "settings": settings.name, "provenance": provenance(),
        "sections": extra.get("sections", list(SECTIONS)),
        "passed": reproduction.passed, "inconclusive": reproduction.inconclusive,
        "records": reproduction.records, "computed": reproduction.computed,
        "outcomes": [o.to_dict() for o in reproduction.outcomes],
        "ratios": {label: {"instances": s["instances"], "opt_status": s["opt_status"], "schedulers": s["schedulers"]}
                   for label, s in summaries.items()},
        "distributions": {label: s["distributions"] for label, s in summaries.items()},
        "utility": {label: [{"value": v, CLAIMANT: mine, **others} for v, mine, others in rows]
                    for label, rows in extra.get("utility", {}).items()},
        # per-job lists stay in traces.jsonl and hetero.jsonl
        **{key: [{**record, "schedulers": {name: {k: v for k, v in row.items() if k not in ("jct", "slowdown")}
                                           for name, row in record["schedulers"].items()}}
                 for record in extra.get(key, [])] for key in ("traces", "hetero") if key == "traces" or key in extra},
        "figures": [{"path": str(p.relative_to(reproduction.out)), "caption": extra.get("captions", {}).get(str(p), "")}
                    for p in reproduction.figures],
    }
    path = reproduction.out / "summary.json"
    from primaldual.core.jsonable import jsonable  # infinities (unbounded ratios) become null

    write_text(path, json.dumps(jsonable(data), indent=1, sort_keys=True) + "\n", "--out")
    return path
