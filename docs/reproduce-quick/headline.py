"""The README's headline table, rendered from this folder's ``summary.json`` (``primaldual reproduce --quick``).

``python docs/reproduce-quick/headline.py`` prints the table; ``--write README.md`` puts it between the README's
headline markers. ``tests/test_readme.py`` checks that the README shows exactly what :func:`render` gives.
Standard library only, so the check needs no solver and no import of the package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUMMARY = HERE / "summary.json"
BEGIN = "<!-- headline table: rendered by docs/reproduce-quick/headline.py from summary.json; tests/test_readme.py checks it -->"
END = "<!-- end of headline table -->"
#: The column order of reproduce's own table (primaldual/reproduce/experiments.py, SCHEDULERS).
SCHEDULERS = ["oasis", "oasis-lr", "oasis-p", "greedy", "fifo", "drf", "rrh", "rrh-full-reward",
              "rrh-nonpreemptive", "dorm", "tiresias", "srtf", "optimus", "themis"]
SETS = {"ratio-tiny": "`tiny`", "ratio-small": "`small`", "ratio-small-20": "20-job `small`"}


def _split(label: str) -> tuple[str, float]:
    head, sep, cost = label.rpartition("-restart-")
    return (head, float(cost)) if sep else (label, 0.0)


def _cell(row: dict | None) -> str:
    """Mean OPT/ALG, with the certified interval of the mean where it is not a point (as summary.md writes it)."""
    if not row or row.get("mean") is None:
        return "-"
    text = f"{row['mean']:.3f}"
    low, high = row.get("mean_interval") or (None, None)
    if low is not None and high is not None and high - low > 5e-4:
        text += f" [{low:.3f}, {high:.3f}]"
    if row.get("unbounded"):
        text += f" (ALG = 0 on {row['unbounded']})"
    return text


def render(summary: dict) -> str:
    """One row per set and restart cost (cost 0 first), one column per scheduler: the mean OPT/ALG."""
    ratios = summary["ratios"]
    present = {name for entry in ratios.values() for name in entry["schedulers"]}
    names = [n for n in SCHEDULERS if n in present] + sorted(present - set(SCHEDULERS))
    labels = sorted(ratios, key=lambda label: (_split(label)[1], list(SETS).index(_split(label)[0])
                                               if _split(label)[0] in SETS else len(SETS), label))
    lines = ["| set | restart cost | OPT proven | " + " | ".join(names) + " |", "|---" * (len(names) + 3) + "|"]
    for label in labels:
        entry = ratios[label]
        base, cost = _split(label)
        proven = f"{entry['opt_status'].get('optimal', 0)} of {entry['instances']}"
        if cost > 0:  # the start-cost relaxation's optimum is proven: a bound on OPT, not OPT
            proven = f"bound on {entry['opt_status'].get('optimal', 0)} of {entry['instances']}"
        cells = " | ".join(_cell(entry["schedulers"].get(n)) for n in names)
        lines.append(f"| {entry['instances']} {SETS.get(base, base)} | {cost:g} | {proven} | {cells} |")
    return "\n".join(lines)


def table_in(readme: str) -> str:
    """The text between the README's headline markers."""
    start = readme.index(BEGIN) + len(BEGIN)
    return readme[start:readme.index(END, start)].strip("\n")


def main(argv: list[str]) -> int:
    table = render(json.loads(SUMMARY.read_text(encoding="utf-8")))
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        readme = path.read_text(encoding="utf-8")
        old = table_in(readme)
        path.write_text(readme.replace(BEGIN + "\n" + old + "\n" + END, BEGIN + "\n" + table + "\n" + END),
                        encoding="utf-8")
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
