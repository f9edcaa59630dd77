"""Every scheduler is registered where it is defined: a library user's fresh interpreter sees all of them."""

from __future__ import annotations

import json
import subprocess
import sys

ALL = ["oasis", "greedy", "fifo", "drf", "rrh", "dorm", "oasis-lr", "oasis-p", "rrh-full-reward",
       "rrh-nonpreemptive", "tiresias", "srtf", "optimus", "themis"]


def _fresh(code: str) -> str:
    # A fresh process: this one has imported primaldual.reproduce (and test schedulers) already.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_import_primaldual_lists_all_fourteen_schedulers():
    code = "import json, primaldual; print(json.dumps(primaldual.available_schedulers()))"
    assert json.loads(_fresh(code)) == ALL


def test_the_rrh_readings_run_from_python_without_the_reproduce_layer():
    code = ("import json, sys; from primaldual import generate, simulate; "
            "r = [simulate(generate('tiny', seed=1), n).scheduler for n in ('rrh-nonpreemptive', "
            "'rrh-full-reward')]; print(json.dumps([r, 'primaldual.reproduce' in sys.modules]))")
    names, reproduce_imported = json.loads(_fresh(code))
    assert names == ["rrh-nonpreemptive", "rrh-full-reward"]
    assert reproduce_imported is False
