"""A script that calls solve_offline without ``if __name__ == "__main__":`` gets an error saying what to add."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
from primaldual import generate, solve_offline
from primaldual.offline.options import SolveOptions
result = solve_offline(generate("tiny", seed=1), SolveOptions(time_limit=30))
print("status", result.status)
"""


def test_a_script_without_the_main_guard_is_told_what_to_add(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "status" not in done.stdout  # an exception, never a silent status='error'
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("primaldual.offline.child.MissingMainGuard: ")
    assert "if __name__ == \"__main__\":" in last
    # The child ends quietly: multiprocessing's bootstrap traceback does not reach the script's stderr.
    assert "bootstrapping phase" not in done.stderr and done.stderr.count("Traceback") == 1


def test_the_guarded_script_solves(tmp_path):
    guarded = "if __name__ == '__main__':\n" + "".join(f"    {line}\n" for line in SCRIPT.strip().splitlines())
    (tmp_path / "script.py").write_text(guarded)
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "status optimal" in done.stdout, done.stderr
