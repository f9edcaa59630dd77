"""The README keeps its promises: every line of its command-line tour runs as written, in order, in a fresh
folder, with exit 0; its Python examples run as written (each saved to a file and run as a script) and
name the bound the CLI prints; its main-job table is the command's output, runtimes aside; its headline table is the one rendered from the committed ``reproduce --quick`` summary, every
relative link points to a file that exists, and it stays a front door of at most 200 lines."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
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


def _run_script(folder: Path, text: str) -> subprocess.CompletedProcess:
    script = folder / "example.py"
    script.write_text(text)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=folder, timeout=600)


# The first block in the fast tier; the others (two time-limited solves behind the __main__ guard, about 2 s
# each, and the registration block) in the slow tier. The fast tier still runs a guarded script's solve
# (tests/offline/test_main_guard.py) and the registration block (the test below).
@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(tmp_path, index):
    """Each block exactly as a reader copies it, saved to a file and run as a script: no wrapper, no guard
    added (a block that needs the __main__ guard for a child process must show it, issue 53)."""
    done = _run_script(tmp_path, BLOCKS[index])
    assert done.returncode == 0, done.stderr


def test_a_scheduler_registered_as_the_readme_shows_runs_in_the_simulator(tmp_path):
    # The block as written, then what the README says the registration is for: a run through the simulator.
    block = next(block for block in BLOCKS if "register_scheduler" in block)
    use = ("\nfrom primaldual import simulate, verify\nresult = simulate(instance, 'one-worker')\n"
           "assert verify(instance, result.schedule).feasible and result.utility > 0\n")
    done = _run_script(tmp_path, block + use)
    assert done.returncode == 0, done.stderr


#: The main job's command, as the README gives it, and the pattern of a row's runtime column (machine-dependent).
MAIN_JOB = ["compare", "--preset", "small", "--seed", "3", "--opt"]
RUNTIME = re.compile(r" +\d+\.\d{3}( +NOT VERIFIED)?$")


def _without_runtimes(text: str) -> list[str]:
    return [RUNTIME.sub("", line.rstrip()) for line in text.strip().splitlines()]


def main_job_output_in_readme() -> str:
    """The output block right after the README's main-job command."""
    section = README.split("## The two commands", 1)[1]
    command, after = section.split("```bash\n", 1)[1].split("```\n", 1)
    assert "primaldual " + " ".join(MAIN_JOB) in command
    return re.search(r"```\n(.*?)```", after, flags=re.S).group(1)


def test_the_main_job_table_is_the_commands_output(capsys):
    """Every line the README shows for the main job is what the command prints now, runtimes aside
    (regenerate with ``primaldual compare --preset small --seed 3 --opt``)."""
    from primaldual.cli import main

    assert main(MAIN_JOB) == 0
    assert _without_runtimes(main_job_output_in_readme()) == _without_runtimes(capsys.readouterr().out)


def test_the_main_job_comparison_can_fail():
    shown = main_job_output_in_readme()
    assert _without_runtimes(shown.replace(" 9 ", " 8 ", 1)) != _without_runtimes(shown)
    assert _without_runtimes(shown) != _without_runtimes(shown.rsplit("\n", 2)[0])


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
