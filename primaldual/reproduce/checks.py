"""The checks of ``primaldual reproduce`` on sweep records: each an :class:`Outcome` (one line of summary.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primaldual.reproduce.experiments import BASELINES, CLAIMANT, SCHEDULERS
from primaldual.sweep.records import Record, typed
from primaldual.sweep.summary import summarize, utility_table


@dataclass(frozen=True)
class Outcome:
    """One line of ``summary.md``.

    ``kind`` is ``"expectation"`` (what this artifact was measured to achieve: PASS/FAIL), ``"paper"`` (a
    claim of the paper, shown as REPRODUCED / TIE / NOT REPRODUCED with the measured number, never hidden) or
    ``"variant"`` (the same claim made for a variant of this artifact, on its own line). ``tie``: neither side
    of an "A beats B" claim is ahead by more than the margin with an interval that excludes 0
    (:mod:`primaldual.reproduce.claims`).
    ``inconclusive``: the check did not pass, but only because a solve hit its time limit (the machine was too
    slow for the budget), so it says nothing about the science: "INCONCLUSIVE (time limit)", not FAIL.
    """

    result: str
    expected: str
    measured: str
    passed: bool
    why: str = ""
    kind: str = "expectation"
    inconclusive: bool = False
    tie: bool = False

    @property
    def claim(self) -> bool:
        """A claim (of the papers, or made for a variant), not an expectation of the artifact."""
        return self.kind in ("paper", "variant")

    @property
    def verdict(self) -> str:
        if self.claim:
            return "REPRODUCED" if self.passed else ("TIE" if self.tie else "NOT REPRODUCED")
        if self.passed:
            return "PASS"
        return "INCONCLUSIVE (time limit)" if self.inconclusive else "FAIL"

    @property
    def failed(self) -> bool:
        """A real failure of an expectation (not a paper claim, not a time-limited inconclusive check)."""
        return self.kind == "expectation" and not self.passed and not self.inconclusive

    def to_dict(self) -> dict:
        return {"result": self.result, "expected": self.expected, "measured": self.measured, "passed": self.passed,
                "why": self.why, "kind": self.kind, "inconclusive": self.inconclusive, "tie": self.tie,
                "verdict": self.verdict}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def by_label(records: list[dict]) -> dict[str, list[dict]]:
    """The records (as written) grouped by their spec's label, in file order."""
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(Record.of(record).label, []).append(record)
    return out


def time_limited(record: Record | dict) -> bool:
    """Whether the record's OPT solve was stopped by the clock (its numbers depend on the machine's speed)."""
    return Record.of(record).time_limited


#: Limits on the mean OPT/OASiS (upper end of its certified interval) on the quick settings: each leaves a
#: margin above the mean those settings measure (summary.md reports the measured means beside them).
MEAN_RATIO_LIMIT = {"tiny": 1.35, "small": 1.35}


def feasibility_check(label: str, records: list[Record | dict]) -> Outcome:
    records = typed(records)
    feasible = sum(1 for r in records for e in r.schedulers.values() if e.feasible)
    total = sum(len(r.schedulers) for r in records)
    with_opt = [r for r in records if r.opt.get("computed")]
    opt_feasible = sum(1 for r in with_opt if r.opt.get("verified", True))
    return Outcome(
        f"feasibility ({label})", "every online and offline schedule passes the independent verifier",
        f"{feasible}/{total} online" + (f", {opt_feasible}/{len(with_opt)} offline" if with_opt else ""),
        feasible == total and opt_feasible == len(with_opt),
    )


def _opt_check(preset: str, records: list[Record], solved: int) -> Outcome:
    n = len(records)
    limit = records[0].spec["time_limit"]
    slow = sum(r.time_limited for r in records)
    return Outcome(
        f"OPT on {preset}", "the ILP proves optimality on every instance",
        f"{solved}/{n} optimal" + (f", {slow} stopped by the time limit" if slow else ""), solved == n,
        f"{preset} instances solve in seconds (" + (f"time limit {limit:g} s" if limit else "no time limit") + ")",
        inconclusive=solved + slow == n,
    )


def _certificate_check(preset: str, records: list[Record], oasis: dict) -> Outcome:
    n, bad = len(records), 0
    for record in records:
        certificate = record.opt_interval.upper_candidates.get("oasis_certificate")
        if certificate is not None and certificate < record.opt_interval.low - 1e-6 * max(1.0, certificate):
            bad += 1
    return Outcome(
        f"OASiS certificate on {preset}",
        "OASiS's dual objective D >= the best known OPT on every instance (weak duality), tolerance 1e-6",
        f"{n - bad}/{n} hold; mean D/OASiS bound {_fmt(oasis.get('certificate_mean'))}", bad == 0,
        "the final prices with recomputed payoffs are dual feasible (proofs/oasis.md)",
    )


def _two_alpha_check(preset: str, records: list[Record], oasis: dict) -> Outcome | None:
    with_alpha = [(r, r.certificate("oasis")["two_alpha"]) for r in records if r.certificate("oasis").get("two_alpha")]
    if not with_alpha:
        return None
    worst = (oasis.get("worst_interval") or [None, None])[1]
    over = [r for r, two_alpha in with_alpha
            if r.ratios["oasis"].upper is None or r.ratios["oasis"].upper > two_alpha]
    alphas = [two_alpha for _, two_alpha in with_alpha]
    return Outcome(
        f"2 alpha bound on {preset}", "worst OPT/OASiS <= 2 alpha on every instance (the competitive ratio)",
        f"worst {_fmt(worst)}; 2 alpha between {min(alphas):.3g} and {max(alphas):.3g}",
        worst is not None and not over, "a worst-case guarantee; random instances sit far below it",
        inconclusive=bool(over) and all(r.time_limited for r in over),
    )


def ratio_checks(records: list[Record | dict], name: str | None = None) -> list[Outcome]:
    """The checks of one ratio set (``name``: how summary.md calls it, default the preset's name)."""
    if not records:
        return []
    records = typed(records)
    preset = name or records[0].spec["preset"]
    summary = summarize(records)
    oasis = summary["schedulers"].get("oasis", {})
    outcomes = [
        _opt_check(preset, records, summary["opt_status"].get("optimal", 0)),
        _certificate_check(preset, records, oasis),
        feasibility_check(preset, records),
    ]
    outcomes += _mean_check(preset, records, oasis)
    two_alpha = _two_alpha_check(preset, records, oasis)
    return outcomes + ([two_alpha] if two_alpha else [])


def _mean_check(preset: str, records: list[Record], oasis: dict) -> list[Outcome]:
    """The mean OPT/OASiS against its measured limit; none for a set without one (20-job small: summary.md's
    table gives its numbers, there is no earlier measurement to hold them to)."""
    if preset not in MEAN_RATIO_LIMIT:
        return []
    limit = MEAN_RATIO_LIMIT[preset]
    interval = oasis.get("mean_interval") or [None, None]
    point_within = oasis.get("mean") is not None and oasis["mean"] <= limit and oasis.get("unbounded", 0) == 0
    return [Outcome(
        f"mean OPT/OASiS on {preset}", f"<= {limit:g} (upper end of the certified interval of the mean)",
        f"{_fmt(oasis.get('mean'))} (interval {_fmt(interval[0])}-{_fmt(interval[1])}), "
        f"worst {_fmt(oasis.get('worst'))}, ALG = 0 on {oasis.get('unbounded', 0)}",
        interval[1] is not None and interval[1] <= limit and oasis.get("unbounded", 0) == 0,
        # The point is within the limit and only the width of time-limited intervals pushes the upper end over.
        inconclusive=point_within and any(r.time_limited for r in records),
    )]


def restart_checks(records: list[Record | dict], name: str) -> list[Outcome]:
    """A ratio set run with restart costs: every schedule verifies, and OPT's upper end (the exact restart
    model's where it proved OPT, else the start-cost relaxation's, Lemma R) stays above every utility net of
    restarts."""
    if not records:
        return []
    records = typed(records)
    below = sum(1 for r in records for e in r.schedulers.values() if e.utility > r.opt_interval.high * (1 + 1e-6))
    total = sum(len(r.schedulers) for r in records)
    return [feasibility_check(name, records), Outcome(
        f"OPT's upper end bounds {name}",
        "every utility net of restarts <= the upper end of the OPT interval (the exact restart model's where "
        "proven, else the start-cost relaxation's: V_i + 1 worker-slots per job)",
        f"{total - below}/{total} hold", below == 0,
        "every schedule under a restart cost is one of the restart model's, and a job completed under a restart "
        "cost received at least V_i + 1 worker-slots (Lemma R), so it is also one of the relaxation's",
    )]


def relative_utilities(records: list[Record | dict], knob: str, claimant: str = CLAIMANT):
    """Per knob value: the claimant's mean utility and each other scheduler's (means over seeds)."""
    table = utility_table(records, knob)
    rows = []
    for value in sorted(table.get(claimant, {})):
        mine = float(np.mean(table[claimant][value]))
        others = {name: float(np.mean(table[name][value])) for name in SCHEDULERS
                  if name != claimant and value in table.get(name, {})}
        rows.append((value, mine, others))
    return rows


def _dual_check(records: list[Record], knob: str, suffix: str) -> Outcome:
    """Weak duality: OASiS's dual objective D >= OPT >= the utility of every schedule of the instance."""
    dominated, total, slack = 0, 0, math.inf
    for record in records:
        bound = record.certificate("oasis").get("dual_objective")
        if bound is None:
            continue
        for entry in record.schedulers.values():
            total += 1
            if entry.utility <= bound * (1 + 1e-9):
                dominated += 1
            if entry.utility > 0:
                slack = min(slack, bound / entry.utility)
    return Outcome(
        f"OASiS certificate at scale ({knob}, paper{suffix})",
        "OASiS's dual objective D >= the total utility of every scheduler on every instance (weak duality)",
        f"{dominated}/{total} hold; smallest D / utility {slack:.3f}", total > 0 and dominated == total,
        "no ILP at this scale, but D bounds OPT and so every schedule",
    )


def best_claim(records: list[Record], knob: str, claimant: str, suffix: str = "") -> Outcome:
    """"``claimant`` earns the most total utility" against every baseline, by the rule of
    :mod:`primaldual.reproduce.claims`; ``kind="paper"`` for ``oasis`` (the paper's claim), else ``"variant"``."""
    from primaldual.reproduce.claims import BEATS_MARGIN, claim_verdict, compare_all, measured_text
    from primaldual.views.sweep_figures import KNOBS

    comparisons, contended, uncontended = compare_all(records, knob, claimant, BASELINES)
    verdict = claim_verdict(comparisons)
    paper = claimant == "oasis"
    present = [name for name in BASELINES if any(name in record.schedulers for record in records)]
    return Outcome(
        f"{'paper' if paper else 'variant'}: {claimant} best ({knob}{suffix})",
        f"{claimant} beats every baseline run ({', '.join(present)}) at every contended {KNOBS.get(knob, knob)}: "
        f"mean advantage > {100 * BEATS_MARGIN:g}% of the baseline's utility and its 95% t interval over seeds "
        "(paired) excludes 0; tolerance: the margin (primaldual/reproduce/claims.py)",
        measured_text(comparisons, contended, uncontended, knob), verdict == "REPRODUCED",
        ("the paper's headline (docs/papers.md: OASiS earns the most utility, more so when resources are scarce); "
         "the preset, price constants and baselines are [design] reconstructions, so a miss is a finding about "
         "them") if paper else
        f"not a claim of the paper: the same rule for {claimant}, the variant this artifact puts forward",
        kind="paper" if paper else "variant", tie=verdict == "TIE",
    )


def paper_checks(records: list[Record | dict], knob: str, suffix: str = "") -> list[Outcome]:
    """Utility curves on the paper preset: feasibility, weak duality at scale, the paper's claim for ``oasis``
    and, on its own line, for :data:`~primaldual.reproduce.experiments.CLAIMANT` (``suffix``: e.g.
    ", restart 0.1", added to the names)."""
    if not records:
        return []
    records = typed(records)
    return [feasibility_check(f"paper, {knob}{suffix}", records), _dual_check(records, knob, suffix),
            best_claim(records, knob, "oasis", suffix), best_claim(records, knob, CLAIMANT, suffix)]
