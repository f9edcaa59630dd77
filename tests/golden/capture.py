"""What the package computes, captured so that a restructuring can be checked bit for bit.

``capture(cases)`` runs every registered scheduler on each case's instance at each restart cost and records
the utility, a digest of the schedule file and a digest of the scheduler's report; ``solve`` cases record the
offline optimum; ``compare`` cases record ``compare --opt``'s summary without its timings. Run as a script it
writes ``outputs.json`` beside this file (``python tests/golden/capture.py``); ``test_golden.py`` recomputes it
and compares every value.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
OUTPUTS = HERE / "outputs.json"

#: (preset, seed, jobs or None). Seeds 424242+ are used nowhere else in the project.
SCHEDULER_CASES = [("tiny", 424242, None), ("tiny", 424243, None), ("small", 424244, None),
                   ("small", 424245, 20), ("paper", 424246, None)]
RESTART_COSTS = (0.0, 0.1)
#: Every built-in scheduler (a test checks the list is complete); tests that register their own come and go.
SCHEDULERS = ("oasis", "greedy", "fifo", "drf", "rrh", "dorm", "oasis-lr", "oasis-p")
#: The two other readings of RRH (built-in names too): their runs are captured, compare's summary keeps the eight.
READINGS = ("rrh-full-reward", "rrh-nonpreemptive")
#: The field's baselines (issue 52, built-in names too): their runs are captured (added in one recapture of these
#: keys only); compare's summary keeps the eight, so its records did not change when they were added.
FIELD = ("tiresias", "srtf", "optimus", "themis")
SOLVE_CASES = [("tiny", 424247, None), ("small", 424248, None)]
COMPARE_CASES = [("tiny", 424249, None), ("small", 424250, None)]


def digest(value) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if not (k.endswith("seconds") or k in ("timings", "time_limited", "message"))}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _instance(preset, seed, jobs):
    from primaldual.core.generate import generate
    return generate(preset, seed=seed) if jobs is None else generate(preset, seed=seed, jobs=jobs)


def scheduler_outputs(names=SCHEDULERS + READINGS + FIELD) -> dict:
    from primaldual.core.files import schedule_to_dict
    from primaldual.core.jsonable import jsonable
    from primaldual.simulation.simulator import simulate

    out = {}
    for preset, seed, jobs in SCHEDULER_CASES:
        instance = _instance(preset, seed, jobs)
        for name in names:
            for cost in RESTART_COSTS:
                result = simulate(instance, name, restart_cost=cost)
                out[f"{preset}/{seed}/{jobs}/{name}/{cost}"] = {
                    "utility": repr(float(result.utility)),
                    "schedule": digest(schedule_to_dict(result.schedule)),
                    "report": digest(_without_timings(jsonable(result.report))),
                    "promises": None if result.promises is None else dict(result.promises),
                }
    return out


def solve_outputs() -> dict:
    """Each optimum's status, value and the independent verifier's verdict on its schedule.

    Not a digest of the schedule: an instance can have several optimal schedules, and which one HiGHS returns
    depends on the machine (small/424248 gave another one of value 131.27507641685995 on an AMD EPYC, issue 53).
    The value, the status and a schedule that ``verify`` finds feasible and worth that value are what an optimum is.
    """
    from primaldual.core.verify import verify
    from primaldual.evaluation.seeds import solve_seeds
    from primaldual.offline.options import EXACT
    from primaldual.offline.solve import solve_offline

    out = {}
    for preset, seed, jobs in SOLVE_CASES:
        instance = _instance(preset, seed, jobs)
        result = solve_offline(instance, EXACT, seeds=solve_seeds(instance, EXACT))
        report = verify(instance, result.schedule)
        out[f"{preset}/{seed}/{jobs}"] = {
            "status": str(result.status), "objective": repr(float(result.objective)),
            "feasible": report.feasible, "verified_utility": repr(float(report.utility))}
    return out


def compare_outputs() -> dict:
    from primaldual.evaluation.compare import compare

    out = {}
    for preset, seed, jobs in COMPARE_CASES:
        comparison = compare(_instance(preset, seed, jobs), list(SCHEDULERS), opt=True, time_limit=None)
        out[f"{preset}/{seed}/{jobs}"] = _without_timings(comparison.summary)
    return out


def capture() -> dict:
    return {"schedulers": scheduler_outputs(), "solve": solve_outputs(), "compare": compare_outputs()}


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else None
    data = capture()
    OUTPUTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUTPUTS}: {len(data['schedulers'])} scheduler runs")
