"""The "A beats B" verdicts of ``primaldual reproduce``: mechanical and conservative.

A scheduler A *beats* a baseline B at one knob value when, over the seeds (the same instances for both), A's
mean advantage ``mean(U_A - U_B) / mean(U_B)`` exceeds :data:`BEATS_MARGIN` **and** the 95% Student-t interval
of the paired differences excludes 0 (:func:`primaldual.sweep.statistics.paired_advantage`). B beats A by the
mirror rule; anything else is a tie. One seed never gives an interval, so one seed is never a win.

A knob value where every scheduler earns the same on every seed (an uncontended cluster) says nothing about
who schedules better; it is counted, not judged. The claim "A earns the most" is then

- **REPRODUCED** where A beats every baseline at every contended value (and there is one),
- **NOT REPRODUCED** where some baseline beats A at some value,
- **TIE** otherwise: no loss, but some baseline within the margin or the interval.

Cost: O(values x baselines x seeds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primaldual.sweep.records import Record, typed
from primaldual.sweep.statistics import MeanInterval, paired_advantage

#: The smallest advantage called a win: 1% of the baseline's mean utility. Source: this artifact's choice, set
#: below every advantage the claim is about (the paper reports none, docs/papers.md) and above the 1e-9
#: rounding of two equal schedules; it is the tolerance of every "beats" claim, never wider than the effect.
BEATS_MARGIN = 0.01


@dataclass(frozen=True)
class Comparison:
    """A against one baseline at one knob value: the advantage with its interval, and win / tie / loss."""

    baseline: str
    value: float
    advantage: MeanInterval
    result: str


def judge(advantage: MeanInterval, margin: float = BEATS_MARGIN) -> str:
    """``"win"``, ``"loss"`` or ``"tie"`` by the rule of the module docstring."""
    if advantage.mean > margin and advantage.excludes_zero():
        return "win"
    if advantage.mean < -margin and advantage.excludes_zero():
        return "loss"
    return "tie"


def paired_utilities(records: list[Record | dict], knob: str, names: tuple[str, ...]) -> dict[float, dict]:
    """``{knob value: {scheduler: [utility per seed]}}`` over the records that ran every one of ``names``
    (so the lists are paired by instance)."""
    out: dict[float, dict[str, list[float]]] = {}
    for record in typed(records):
        value = record.spec.get(knob)
        if value is None:
            value = record.instance.get(knob)
        if value is None or not all(name in record.schedulers for name in names):
            continue
        row = out.setdefault(value, {name: [] for name in names})
        for name in names:
            row[name].append(record.schedulers[name].utility)
    return dict(sorted(out.items()))


def _uncontended(row: dict[str, list[float]]) -> bool:
    """Every scheduler earns the same on every seed (to rounding)."""
    columns = list(row.values())
    return all(all(abs(x - y) <= 1e-9 * max(1.0, abs(y)) for x, y in zip(column, columns[0])) for column in columns)


def compare_all(records, knob: str, claimant: str, baselines: tuple[str, ...],
                margin: float = BEATS_MARGIN) -> tuple[list[Comparison], int, int]:
    """Every (baseline, contended value) comparison of ``claimant``; with the numbers of contended and
    uncontended values."""
    present = tuple(name for name in baselines if any(name in Record.of(r).schedulers for r in records))
    table = paired_utilities(records, knob, (claimant, *present))
    comparisons, uncontended = [], 0
    for value, row in table.items():
        if _uncontended(row):
            uncontended += 1
            continue
        for name in present:
            advantage = paired_advantage(row[claimant], row[name])
            comparisons.append(Comparison(name, value, advantage, judge(advantage, margin)))
    return comparisons, len(table) - uncontended, uncontended


def _percent(value: float) -> str:
    return "inf" if math.isinf(value) else f"{100 * value:+.1f}%"


def describe(comparison: Comparison, knob: str) -> str:
    """``"+3.2% [95% CI +1.0%, +5.4%] over rrh at jobs = 300, 3 seeds"``."""
    a = comparison.advantage
    return (f"{_percent(a.mean)} [95% CI {_percent(a.low)}, {_percent(a.high)}] over {comparison.baseline} at "
            f"{knob} = {comparison.value:g}, {a.n} seed{'s' if a.n != 1 else ''}")


def claim_verdict(comparisons: list[Comparison]) -> str:
    """``"REPRODUCED"``, ``"NOT REPRODUCED"`` or ``"TIE"`` from the comparisons (none: TIE, nothing to judge)."""
    if any(c.result == "loss" for c in comparisons):
        return "NOT REPRODUCED"
    if comparisons and all(c.result == "win" for c in comparisons):
        return "REPRODUCED"
    return "TIE"


def measured_text(comparisons: list[Comparison], contended: int, uncontended: int, knob: str) -> str:
    """The measured column: wins/ties/losses, the uncontended values, and the least favourable comparison."""
    counts = {kind: sum(c.result == kind for c in comparisons) for kind in ("win", "tie", "loss")}
    text = (f"wins {counts['win']}, ties {counts['tie']}, losses {counts['loss']} over {contended} contended "
            f"value(s)" + (f"; {uncontended} uncontended (every scheduler equal, not judged)" if uncontended else ""))
    if comparisons:
        worst = min(comparisons, key=lambda c: c.advantage.mean)
        text += f"; least advantage {describe(worst, knob)}"
    return text


__all__ = ["BEATS_MARGIN", "Comparison", "claim_verdict", "compare_all", "describe", "judge", "measured_text",
           "paired_utilities"]
