"""One command that regenerates the headline results and says, for each, whether it reproduced.

``primaldual reproduce [--quick] --out DIR`` runs, through the resumable sweep machinery, every scheduler of
:data:`primaldual.reproduce.experiments.SCHEDULERS` (OASiS, OASiS-LR, OASiS-P, greedy, FIFO, DRF, RRH in three
readings, Dorm), each experiment at restart cost 0 and 0.1 (``--restart-cost``):

1. empirical competitive ratios OPT/ALG on ``tiny`` instances (OPT proven by the ILP), on ``small`` and on
   20-job ``small`` instances (OPT with a time limit, bracketed by a certified interval); at a restart cost
   OPT is the optimum with restart costs, bounded by the start-cost relaxation (:mod:`primaldual.evaluation.restart_bound`:
   every job needs one more worker-slot), solved in its place;
2. total utility against the number of jobs and against the cluster's capacity on the ``paper`` preset (seeds,
   error bars); outside ``--quick`` the jobs curve also gets OPT's certified interval from column generation
   (``method="cg"``), drawn as a band;
3. LB-BSP: the benchmark's speedups over BSP and the named expectations of :func:`primaldual.lbbsp.expectations`
   (real training outside ``--quick``).
4. real arrivals (:mod:`primaldual.reproduce.traces`): every scheduler on packaged Philly VCs, whole and their
   busiest windows, with OPT's interval (column generation on windows, standalone and pooled LP on whole VCs),
   JCT and slowdown CDFs and Jain's index of slowdowns (``traces.jsonl``, resumable; ``--quick``: one 12-hour
   window and two tiny VCs).
5. heterogeneous GPUs (:mod:`primaldual.reproduce.hetero_report`, issue 64): the same cases' code on the busiest
   weeks imported onto V100, P100 and K80 (``hetero.jsonl``; ``--quick``: one day): every scheduler that handles
   types and Gavel's policies against OPT's interval, and Gavel's comparison of mean JCT with and without awareness.

``sections`` (``--sections``) runs a subset of these, named ``ratios`` (1), ``paper`` (2), ``lbbsp`` (3),
``traces`` (4) and ``hetero`` (5) (:data:`~primaldual.reproduce.experiments.SECTIONS`): the full trace section alone takes about an
hour of the full run's many. summary.md, summary.json and figures.md then report only the sections that ran
and name them; the records of the others stay in ``results.jsonl`` and ``traces.jsonl`` for a later run.

It writes the figures (each a PNG, a PDF and the CSV of its numbers, :mod:`primaldual.views.figure_data`),
``figures.md`` (the headline figures mapped to the papers, :mod:`primaldual.reproduce.index`), the raw records (``results.jsonl``, resumable: a rerun only computes what is missing),
``lbbsp.json``, ``summary.json`` (outcomes, the OPT/ALG table, utility tables, per-job distributions) and
``summary.md`` (:mod:`primaldual.reproduce.report`). A record whose OPT solve was stopped by the time limit is
kept as such (``opt.time_limited``) but never reused as final: the next run computes it again, and a check
that fails only because of such a record says "INCONCLUSIVE (time limit)" instead of FAIL.

- **expectations of this artifact** (PASS/FAIL): what this implementation was measured to achieve, each with a
  tolerance. ``primaldual reproduce`` exits 1 if one fails;
- **claims of the papers** (REPRODUCED / TIE / NOT REPRODUCED, :mod:`primaldual.reproduce.claims`): checked
  as stated and shown whatever the verdict, with the measured number; the "best scheduler" claim is checked for
  ``oasis`` and, on its own line, for ``oasis-lr``.

``--quick`` runs Dorm, which re-solves a MILP at every event, on the ratio sets only, not on the paper preset.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from primaldual.reproduce.checks import (
    Outcome, by_label, feasibility_check, paper_checks, ratio_checks, relative_utilities, restart_checks,
    time_limited,
)
from primaldual.reproduce.experiments import (
    BASELINES, CLAIMANT, FULL, QUICK, RATIO_SETS, RESTART_COST, SCHEDULERS, SECTIONS, Settings, base_label,
    experiment_specs, run_task,
)
from primaldual.reproduce.figures import OPT_BAND_CAPTION, utility_with_opt_band
from primaldual.reproduce.lbbsp import expectation_checks, lbbsp_checks, lbbsp_figure, run_lbbsp
from primaldual.reproduce.index import write_index
from primaldual.reproduce.report import write_summary
from primaldual.sweep import summarize, sweep

#: How summary.md names each ratio set in its checks.
SET_NAMES = {"ratio-tiny": "tiny", "ratio-small": "small", "ratio-small-20": "small-20"}
KNOB_OF = {"utility-vs-jobs": "jobs", "utility-vs-capacity": "capacity_scale"}


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
        """No expectation failed (paper claims are reported, not required; an inconclusive check is no failure)."""
        return not any(outcome.failed for outcome in self.outcomes)

    @property
    def inconclusive(self) -> int:
        return sum(outcome.inconclusive and not outcome.passed for outcome in self.outcomes)


def reproduce(
    out: str | Path,
    quick: bool = True,
    executor=None,
    workers: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    settings: Settings | None = None,
    restart_cost: float = RESTART_COST,
    sections: Iterable[str] = tuple(SECTIONS),
) -> Reproduction:
    """Run the ``sections`` (default all of :data:`SECTIONS`) into ``out``; returns the outcomes (also written
    to ``out/summary.md``, which reports only those sections and names them).

    ``settings`` overrides ``quick`` (a smaller :class:`Settings` for tests); ``restart_cost``: the restart
    cost every experiment is also run at, beside 0 (0: only the paper's model). An unknown section is a
    ValueError, before anything runs.
    """
    started = time.perf_counter()
    sections = ordered_sections(sections)
    settings = settings or (QUICK if quick else FULL)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    figures: list[Path] = []
    captions: dict = {}
    swept = _sweep_section(settings, out, restart_cost, sections, (executor, workers, progress), log, figures,
                           captions, outcomes)
    clock = time.perf_counter()
    if "lbbsp" in sections:
        _lbbsp(settings, out, log, figures, captions, outcomes)
    lbbsp_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    trace_records = _traces(settings, out, restart_cost, log, figures, captions, outcomes) \
        if "traces" in sections else []
    traces_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    hetero_records = _hetero(settings, out, restart_cost, log, outcomes) if "hetero" in sections else []
    hetero_seconds = time.perf_counter() - clock
    headline = write_index(out, settings, outcomes, figures, sections)
    groups, labels = swept["groups"], swept["labels"]
    reproduction = Reproduction(
        out=out, outcomes=outcomes, figures=figures, seconds=time.perf_counter() - started,
        records=swept["records"], computed=swept["computed"],
        extra={
            "settings": settings.name, "sections": list(sections), "headline": headline,
            "sweep_seconds": swept["seconds"], "lbbsp_seconds": lbbsp_seconds,
            "traces_seconds": traces_seconds, "traces": trace_records,
            "hetero_seconds": hetero_seconds, "hetero": hetero_records,
            "captions": {str(path): text for path, text in captions.items()},
            "summaries": {label: summarize(groups[label]) for label in labels if base_label(label)[0] in SET_NAMES},
            "utility": {label: relative_utilities(groups[label], KNOB_OF[base_label(label)[0]])
                        for label in labels if base_label(label)[0] in KNOB_OF},
        },
    )
    write_summary(reproduction, settings)
    return reproduction


def ordered_sections(sections: Iterable[str]) -> tuple[str, ...]:
    """``sections`` in the order they run, each once; a ValueError naming the allowed ones if one is unknown
    or none is given (the command checks its flag first, for its own message)."""
    chosen = set(sections)
    unknown = sorted(chosen - set(SECTIONS))
    if unknown or not chosen:
        raise ValueError(f"sections must be among {', '.join(SECTIONS)}, got {sorted(chosen)}")
    return tuple(name for name in SECTIONS if name in chosen)


def _sweep_section(settings: Settings, out: Path, restart_cost: float, sections: tuple[str, ...], how: tuple,
                   log, figures: list, captions: dict, outcomes: list) -> dict:
    """The ratio sets and the paper preset (one resumable sweep into ``results.jsonl``), those of ``sections``:
    their figures and checks; returns the records grouped by label and the counts summary.md reports."""
    from primaldual.views.sweep_figures import caption_for, plot_records

    clock = time.perf_counter()
    executor, workers, progress = how
    specs = experiment_specs(settings, restart_cost, sections)
    if not specs:  # neither section chosen: results.jsonl is left as it is
        return {"groups": {}, "labels": [], "records": 0, "computed": 0, "seconds": 0.0}
    log(f"reproduce ({settings.name}): {len(specs)} sweep specs -> {out / 'results.jsonl'}")
    result = sweep(specs, out / "results.jsonl", executor=executor, workers=workers, progress=progress,
                   redo=time_limited, task=run_task, on_record=None if progress else spec_lines(len(specs), log))
    seconds = time.perf_counter() - clock
    groups = by_label(result.records)
    labels = sorted(groups, key=lambda label: (base_label(label)[1], _LABEL_ORDER.index(base_label(label)[0])))
    drawn = plot_records(result.records, out / "figures")
    figures += drawn
    captions.update({path: caption_for(path) for path in drawn})
    for label in labels:
        outcomes += _label_checks(label, groups[label], out, figures, captions)
    return {"groups": groups, "labels": labels, "records": len(result.records), "computed": result.computed,
            "seconds": seconds}


def _label_checks(label: str, records: list[dict], out: Path, figures: list, captions: dict) -> list[Outcome]:
    """The checks of one sweep experiment; on the jobs curve also OPT's band figure, where OPT was solved."""
    base, cost = base_label(label)
    where = f", restart {cost:g}" if cost else ""
    if base in SET_NAMES:
        return ratio_checks(records, SET_NAMES[base]) if not cost else restart_checks(records, SET_NAMES[base] + where)
    if base == "utility-vs-jobs":
        band = utility_with_opt_band(records, out / "figures" / f"{label}-paper-opt-band",
                                     f"total utility vs number of jobs (paper{where}), OPT's interval")
        if band is not None:
            figures.append(band)
            captions[band] = OPT_BAND_CAPTION
    return paper_checks(records, KNOB_OF[base], where)


def spec_lines(total: int, log) -> Callable[[dict], None]:
    """``on_record`` for the sweep when no progress bar shows (stderr is not a terminal, or ``--no-progress``):
    one line per finished spec, its set, seed and the time since the sweep started, so a long run is never
    silent (``reproduce --quick`` printed one line in 7 minutes, issue 53). Records already in the file are
    not run again and are not counted here."""
    clock, done = time.perf_counter(), [0]

    def line(record: dict) -> None:
        done[0] += 1
        spec = record.get("spec", {})
        log(f"reproduce: spec {done[0]} of at most {total} done ({spec.get('label') or spec.get('preset')}, seed "
            f"{spec.get('seed')}, restart cost {spec.get('restart_cost', 0):g}) after {time.perf_counter() - clock:.0f} s")

    return line


def _lbbsp(settings: Settings, out: Path, log, figures: list, captions: dict, outcomes: list) -> None:
    """The LB-BSP section: ``lbbsp.json``, its figure and checks, and the named expectations."""
    from primaldual.views.lbbsp_figures import CAPTION as LBBSP_CAPTION

    log("reproduce: LB-BSP benchmark and expectations")
    lbbsp = run_lbbsp(settings)
    if lbbsp:
        from primaldual.core.output import write_text

        write_text(out / "lbbsp.json", json.dumps(lbbsp, indent=2, sort_keys=True, default=str) + "\n", "--out")
        lbbsp_figures = lbbsp_figure(lbbsp, out / "figures")
        figures += lbbsp_figures
        captions.update({p: LBBSP_CAPTION for p in lbbsp_figures})
        outcomes += lbbsp_checks(lbbsp)
    if settings.lbbsp_expectations:
        outcomes += expectation_checks(settings.lbbsp_training)


def _traces(settings: Settings, out: Path, restart_cost: float, log, figures: list, captions: dict,
            outcomes: list) -> list[dict]:
    """The trace section (:mod:`primaldual.reproduce.traces`): its records, figures and checks."""
    if settings.traces is None:
        return []
    from primaldual.reproduce.trace_report import trace_checks, trace_figures
    from primaldual.reproduce.traces import run_traces

    log("reproduce: real arrivals (Philly traces)")
    costs = (0.0, restart_cost) if restart_cost else (0.0,)
    records = run_traces(settings.traces, out / "traces.jsonl", costs, log)
    drawn = trace_figures(records, out / "figures")
    figures += drawn
    captions.update(drawn)
    outcomes += trace_checks(records)
    return records


def _hetero(settings: Settings, out: Path, restart_cost: float, log, outcomes: list) -> list[dict]:
    """The heterogeneous section (:mod:`primaldual.reproduce.hetero_report`): the trace cases' code on
    ``settings.hetero``, into ``hetero.jsonl``; its records and checks."""
    if settings.hetero is None:
        return []
    from primaldual.reproduce.hetero_report import hetero_checks
    from primaldual.reproduce.traces import run_traces

    log("reproduce: heterogeneous GPUs (Philly weeks on V100, P100, K80)")
    costs = (0.0, restart_cost) if restart_cost else (0.0,)
    records = run_traces(settings.hetero, out / "hetero.jsonl", costs, log)
    outcomes += hetero_checks(records)
    return records


#: The order of the experiments in summary.md (restart cost 0 first).
_LABEL_ORDER = (*SET_NAMES, *KNOB_OF)


__all__ = [
    "BASELINES", "CLAIMANT", "FULL", "QUICK", "RATIO_SETS", "SCHEDULERS", "SECTIONS", "Outcome", "Reproduction", "Settings", "experiment_specs", "feasibility_check", "lbbsp_checks",
    "ordered_sections", "paper_checks", "ratio_checks", "reproduce", "restart_checks", "time_limited", "write_summary",
]
