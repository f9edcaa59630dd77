"""The README keeps its promises: every line of its command-line tour runs as written, in order, in a fresh
folder, with exit 0; its Python examples run as written (each in a fresh interpreter, under a __main__ guard) and
name the bound the CLI prints; its headline table is the one rendered from the committed ``reproduce --quick`` summary, every
relative link points to a file that exists, and it stays a front door of at most 200 lines."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def tour_lines() -> list[str]:
    """The lines of the bash block under "A short tour of the command line", as written."""
    section = README.split("## A short tour of the command line", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_every_line_of_the_command_line_tour_runs(tmp_path):
    lines = tour_lines()
    assert len(lines) >= 10 and all(line.startswith("primaldual ") for line in lines)
    # The primaldual of this interpreter's environment, as a user's shell would find it after the install line.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line in lines:
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=300)
        assert done.returncode == 0, f"README tour line failed (exit {done.returncode}): {line}\n{done.stderr}"


def test_the_python_tour_names_the_bound_the_cli_prints():
    # The CLI's "OPT/ALG <=" is the certificate's best_ratio_upper_bound (min(D, standalone) / ALG), not D / ALG.
    assert "best_ratio_upper_bound" in README and "certificate.ratio_upper_bound" not in README


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(tmp_path, index):
    block = BLOCKS[index]
    # A registered scheduler is exercised through the simulator, as the README says it can be.
    exercise = (
        "\n    from primaldual import generate, simulate, verify\n    instance = generate('small', seed=1)\n"
        "    result = simulate(instance, 'one-worker')\n    assert verify(instance, result.schedule).feasible\n"
        if "register_scheduler" in block else ""
    )
    script = tmp_path / "example.py"
    script.write_text("def main():\n" + textwrap.indent(block, "    ") + exercise
                      + "\n\nif __name__ == '__main__':\n    main()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr


def _headline():
    spec = importlib.util.spec_from_file_location("headline", ROOT / "docs" / "reproduce-quick" / "headline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_headline_table_is_rendered_from_the_committed_summary():
    headline = _headline()
    summary = json.loads(headline.SUMMARY.read_text(encoding="utf-8"))
    assert summary["format"] == "primaldual.reproduction" and summary["settings"] == "quick"
    assert headline.table_in(README) == headline.render(summary), (
        "the README's headline table is not the one summary.json gives: python docs/reproduce-quick/headline.py "
        "--write README.md")


def test_the_headline_renderer_can_fail():
    headline = _headline()
    summary = json.loads(headline.SUMMARY.read_text(encoding="utf-8"))
    label = next(iter(summary["ratios"]))
    name = next(iter(summary["ratios"][label]["schedulers"]))
    summary["ratios"][label]["schedulers"][name]["mean"] += 0.01
    assert headline.table_in(README) != headline.render(summary)


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_every_relative_link_of_the_readme_points_to_a_file():
    links = [target for target in LINK.findall(README) if not re.match(r"[a-z]+:", target)]
    assert links, "the README links no file"
    missing = [target for target in links if not (ROOT / target.split("#")[0]).is_file()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 200
