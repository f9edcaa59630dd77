"""Every captured output of the package, recomputed: a restructuring may not change one bit of them.

``outputs.json`` was written by ``capture.py`` on the commit before the architecture step (76e22c7's
behaviour); every scheduler's utility, schedule and report, the offline optimum and ``compare --opt``'s
summary must stay exactly what they were. Re-capture only for a change that is meant to alter results, and
say so in the commit.
"""

import json
import subprocess
import sys

import pytest

from capture import FIELD, OUTPUTS, READINGS, SCHEDULERS, compare_outputs, scheduler_outputs, solve_outputs

EXPECTED = json.loads(OUTPUTS.read_text())

#: Runs whose result depends on the machine's speed, not only on the code: Dorm gives HiGHS a wall-clock limit
#: per decision (``DormScheduler(time_limit=2.0)``), and on ``paper`` some decisions reach it, so a loaded machine
#: stops them at other incumbents (seen on 76e22c7 itself: utility 3695.19 instead of 3715.98 at restart cost
#: 0.1 with five other processes running). They are still run and must verify; their numbers are not compared.
MACHINE_DEPENDENT = ("paper/424246/None/dorm/",)


def test_the_capture_covers_every_built_in_scheduler():
    # In a fresh process: other tests register schedulers of their own in this one.
    code = "from primaldual.simulation.scheduler import available_schedulers as a; print(' '.join(a()))"
    names = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert sorted(names) == sorted(SCHEDULERS + READINGS + FIELD)


@pytest.mark.slow
def test_every_scheduler_run_is_unchanged():
    got = scheduler_outputs()
    assert got.keys() == EXPECTED["schedulers"].keys()
    changed = [key for key in got if got[key] != EXPECTED["schedulers"][key]
               and not key.startswith(MACHINE_DEPENDENT)]
    assert changed == []


def test_offline_optima_are_unchanged():
    assert solve_outputs() == EXPECTED["solve"]


@pytest.mark.slow
def test_compare_summaries_are_unchanged():
    assert compare_outputs() == EXPECTED["compare"]
