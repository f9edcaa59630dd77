"""``figures.md``: the headline figures of a reproduction, each mapped to the papers' figure or table it
corresponds to (where one does), with the command that makes it, its seeds, the expected result, the tolerance
and this run's verdicts.

The papers' figure numbers are not available (docs/papers.md, /shared/papers: the digests record what a figure
shows, not its number), so a figure is named by what it shows and where that is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from primaldual.core.output import write_text
from primaldual.core.plural import counted
from primaldual.reproduce.checks import Outcome
from primaldual.reproduce.experiments import (
    SECTIONS, SMALL20_SEED, SMALL_SEED, TINY_SEED, Settings,
)
from primaldual.reproduce.trace_report import BOUND_SLACK, WIDTH_TARGET
from primaldual.views.trace_figures import stem as trace_stem


@dataclass(frozen=True)
class Headline:
    """One headline figure: the file stem under ``figures/``, what it shows, the paper's counterpart, the seeds,
    the expected result, the tolerance, and the prefixes of the verdict lines that judge it."""

    stem: str
    shows: str
    paper: str
    seeds: str
    expected: str
    tolerance: str
    verdicts: tuple[str, ...]


def headlines(settings: Settings) -> list[Headline]:
    """The headline figures of a reproduction at ``settings`` (restart cost 0: the papers' model)."""
    jobs = ", ".join(f"{j:g}" for j in settings.paper_jobs)
    scales = ", ".join(f"{s:g}" for s in settings.capacity_scales)

    def seeds(first: int, count: int) -> str:
        span = f"seed {first}" if count == 1 else f"seeds {first}-{first + count - 1}"
        return f"{span} ({counted(count, 'instance')})"

    beats = ("oasis (and, on its own line, oasis-lr) beats every baseline at every contended point",
             "advantage > 1% of the baseline's utility with the paired 95% t interval over seeds excluding 0 "
             "(primaldual/reproduce/claims.py); otherwise TIE or NOT REPRODUCED")
    return [
        Headline("ratio-tiny-tiny-ratios", "OPT/ALG per scheduler on tiny instances, OPT proven by the ILP",
                 "none: the OASiS paper reports no empirical OPT/ALG; its competitive ratio 2 alpha (Theorem, "
                 "proofs/oasis.md) is drawn over OASiS", seeds(TINY_SEED, settings.tiny_instances),
                 "mean OPT/OASiS <= 1.35, every ratio <= 2 alpha", "the limit 1.35 leaves a margin above the mean "
                 "measured on the quick settings (docs/reproduce-quick/summary.md); the bound is exact", ("mean OPT/OASiS on tiny", "2 alpha bound on tiny")),
        Headline("ratio-small-small-ratios", "OPT/ALG per scheduler on small (10-job) instances",
                 "none (as above)", seeds(SMALL_SEED, settings.small_instances),
                 "mean OPT/OASiS <= 1.35, every ratio <= 2 alpha", "as above",
                 ("mean OPT/OASiS on small", "2 alpha bound on small")),
        Headline("ratio-small-20-small-ratios", "OPT/ALG on 20-job small instances (OPT bracketed by a certified "
                 "interval where the time limit stops the ILP)", "none (as above)",
                 seeds(SMALL20_SEED, settings.small20_instances), "every ratio <= 2 alpha", "the bound is exact",
                 ("2 alpha bound on small-20",)),
        Headline("utility-vs-jobs-paper-utility-vs-jobs", f"total utility against the number of jobs ({jobs}) on "
                 "the paper preset", "OASiS paper, its headline figure: total utility as the number of jobs "
                 "varies, T = 300 slots, OASiS best [reported] (docs/papers.md; figure number not available)",
                 f"seeds {', '.join(map(str, settings.paper_seeds))} per number of jobs", *beats,
                 ("paper: oasis best (jobs)", "variant: oasis-lr best (jobs)")),
        Headline("utility-vs-capacity-paper-utility-vs-capacity_scale",
                 f"total utility against the cluster's capacity (x {scales}) at {settings.capacity_jobs} jobs",
                 "OASiS paper: its advantage grows when resources are scarce [reported] (no figure of its own "
                 "known)", f"seeds {', '.join(map(str, settings.capacity_seeds))} per capacity", *beats,
                 ("paper: oasis best (capacity_scale)", "variant: oasis-lr best (capacity_scale)")),
        Headline("lbbsp-iteration-time", "LB-BSP, BSP and the oracle: mean iteration time and speedup",
                 "LB-BSP paper (SoCC'20): up to +54% on the GPU cluster, +38.7% on the CPU cluster [reported] "
                 "(docs/papers.md)", f"seeds {', '.join(map(str, settings.lbbsp_seeds))}",
                 "the simulated gain over BSP equals the paper's", "+-25% of the paper's gain, and the 95% t "
                 "interval of the gain excludes 0 (primaldual/reproduce/lbbsp.py)", ("paper: LB-BSP gain",)),
        _trace_headline(settings),
    ]


def _trace_headline(settings: Settings) -> Headline:
    """The trace section's CDF figure at restart cost 0; judged by the trace checks (its curves are a reading)."""
    cases = [] if settings.traces is None else [c.name for c in settings.traces.windows + settings.traces.whole]
    return Headline(
        trace_stem(0.0), "JCT and slowdown CDFs per scheduler on real arrivals (Philly VCs), jobs pooled over the "
        "trace cases", "none: this artifact's extension; the OASiS paper's own traces are not available "
        "(docs/papers.md); the arrivals are Gavel's Philly-derived traces (docs/traces.md)", "no random seeds (the packaged traces and the conversion draw no "
        "random numbers; philly:0 is Gavel's trace seed 0); cases " + (", ".join(cases) or "-"),
        "every schedule verifies, OPT's bound >= every scheduler's utility, OPT's interval on the windows at "
        f"most {WIDTH_TARGET:.0%} of its bound wide", f"bound: relative slack {BOUND_SLACK:g}; width: "
        f"{WIDTH_TARGET:.0%}, INCONCLUSIVE where the time limit stopped the solve "
        "(primaldual/reproduce/trace_report.py)",
        ("feasibility (traces)", "OPT bound on traces", "OPT interval on trace windows"))


def _verdicts(headline: Headline, outcomes: list[Outcome]) -> str:
    # A name, or a name with its scenario ("paper: LB-BSP gain (cpu)"); "on small" must not take "on small-20".
    found = [o for o in outcomes if any(o.result == v or o.result.startswith(v + " (") for v in headline.verdicts)]
    return "; ".join(f"{o.result}: **{o.verdict}**" for o in found) or "-"


def write_index(out: Path, settings: Settings, outcomes: list[Outcome], figures: list[Path],
                sections: tuple[str, ...] = tuple(SECTIONS)) -> list[Path]:
    """Write ``out/figures.md`` for the headline figures that this run drew (of its ``sections``); returns
    their PNG paths."""
    command = "primaldual reproduce" + (" --quick" if settings.name == "quick" else "") + f" --out {out.name}"
    if tuple(sections) != tuple(SECTIONS):
        command += " --sections " + ",".join(sections)
    drawn = {path.stem: path for path in figures}
    lines = ["# Headline figures", "",
             f"Made by `{command}` (settings **{settings.name}**). Each figure is a PNG with a PDF and the CSV of "
             "exactly the plotted numbers beside it; `primaldual plot --from-csv figures/STEM.csv` redraws it "
             "from the CSV alone (`--out F.pdf|.png|.svg` for one format).", "",
             f"Sections run: {', '.join(sections)} (of {', '.join(SECTIONS)}).", ""]
    written = []
    for headline in headlines(settings):
        path = drawn.get(headline.stem)
        if path is None:
            continue
        written.append(path)
        relative = path.relative_to(out)
        lines += [
            f"## {headline.shows}", "",
            f"![{headline.stem}]({relative})", "",
            f"- files: [{relative.with_suffix('.pdf')}]({relative.with_suffix('.pdf')}), "
            f"[{relative.with_suffix('.csv')}]({relative.with_suffix('.csv')})",
            f"- the papers: {headline.paper}",
            f"- command: `{command}`; redraw: `primaldual plot --from-csv {relative.with_suffix('.csv')}`",
            f"- seeds: {headline.seeds}",
            f"- expected: {headline.expected}",
            f"- tolerance: {headline.tolerance}",
            f"- this run: {_verdicts(headline, outcomes)}", "",
        ]
    write_text(out / "figures.md", "\n".join(lines), "--out")
    return written


__all__ = ["Headline", "headlines", "write_index"]
