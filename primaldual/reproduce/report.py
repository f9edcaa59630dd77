"""``summary.md`` of a reproduction: the verdict tables, the OPT/ALG tables, the utility tables and the figures."""

from __future__ import annotations

from pathlib import Path

from primaldual.reproduce.experiments import BASELINES, Settings


def write_summary(reproduction: Reproduction, settings: Settings) -> Path:
    from primaldual.sweep import format_summary, versions

    expectations = [o for o in reproduction.outcomes if o.kind == "expectation"]
    claims = [o for o in reproduction.outcomes if o.kind == "paper"]
    passed = sum(o.passed for o in expectations)
    inconclusive = sum(o.inconclusive and not o.passed for o in expectations)
    lines = [
        "# primaldual: reproduction summary",
        "",
        f"**{passed}/{len(expectations)} expectations PASS**"
        + (f" ({inconclusive} INCONCLUSIVE: a solve hit its time limit on this machine; rerun to recompute)"
           if inconclusive else "") + "; "
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
        "The papers' own numbers are mostly not available (docs/papers.md), and their setups",
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
