"""The README's Python examples run as written (each in a fresh interpreter, under a __main__ guard)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(tmp_path, index):
    block = BLOCKS[index]
    # A registered scheduler is exercised through the simulator, as the README says it can be.
    exercise = (
        "\n    from primaldual.core.generate import generate\n    from primaldual.simulation.simulator import simulate\n"
        "    from primaldual.core.verify import verify\n    instance = generate('small', seed=1)\n"
        "    result = simulate(instance, 'one-worker')\n    assert verify(instance, result.schedule).feasible\n"
        if "register_scheduler" in block else ""
    )
    script = tmp_path / "example.py"
    script.write_text("def main():\n" + textwrap.indent(block, "    ") + exercise
                      + "\n\nif __name__ == '__main__':\n    main()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
