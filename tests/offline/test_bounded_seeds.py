"""Issue 53, item 1: a solve's time limit holds for its online seeds too, and the result accounts for them."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from primaldual import SolveOptions, generate
from primaldual.evaluation.bounded import (EXIT_SECONDS, IN_PROCESS_CELLS, SEED_SHARE, _here, _in_child, bounded_seeds,
                                          solve_within)
from primaldual.evaluation.seeds import SEED_SCHEDULERS, online_seeds, to_seeds

CG = SolveOptions(time_limit=60, method="cg")


@pytest.fixture(scope="module")
def small():
    return generate("small", seed=5301)


def test_with_time_for_them_every_seed_runs_and_they_are_the_untimed_seeds(small):
    seeds, account = bounded_seeds(small, CG)
    assert account.skipped == () and account.where == "here, between seeds" and account.budget == SEED_SHARE * 60
    untimed = [(s.name, s.utility, s.certified_bound) for s in online_seeds(small)]
    assert [(s.name, s.utility, s.certified_bound) for s in seeds] == untimed
    assert set(account.ran) == set(SEED_SCHEDULERS)
    computed, where = _in_child(small, SEED_SCHEDULERS, 60.0)  # the path of instances over IN_PROCESS_CELLS
    assert where == "child" and [(s.name, s.utility, s.certified_bound) for s in to_seeds(small, {}, computed)] == untimed


def test_seeds_that_do_not_fit_in_a_child_are_skipped_and_named(small):
    # 0.1 s: no spawned interpreter imports the package that fast, so the child sends no seed before its kill.
    clock = time.monotonic()
    computed, _ = _in_child(small, SEED_SCHEDULERS, 0.1)
    assert computed == {} and time.monotonic() - clock < 0.1 + EXIT_SECONDS
    paper = generate("paper", seed=5303, jobs=60)
    assert paper.n_jobs * paper.horizon * paper.cluster.n_worker_servers > IN_PROCESS_CELLS
    seeds, account = bounded_seeds(paper, CG.replace(time_limit=0.25))
    assert seeds == () and account.where == "child" and account.skipped == SEED_SCHEDULERS
    assert "skipped fifo, rrh" in account.describe()


def test_here_no_seed_starts_past_the_budget(small):
    computed, where = _here(small, SEED_SCHEDULERS, 0.0)
    assert computed == {} and "between seeds" in where
    computed, _ = _here(small, ("fifo",), 60.0)
    assert list(computed) == ["fifo"] and computed["fifo"][1].feasible


def test_the_solve_gets_what_the_seeds_left_and_says_what_they_did(small):
    clock = time.monotonic()
    result = solve_within(small, CG.replace(time_limit=0.05))
    account = result.details["online_seeds"]
    assert account["skipped"] and "skipped" in result.message
    assert time.monotonic() - clock < 20  # the 0.5 s limit, the solve child's 5 s grace, two process starts
    assert result.schedule is None or result.objective >= 0


def test_without_a_limit_the_seeds_run_here_and_only_their_time_is_added(small):
    seeds, account = bounded_seeds(small, CG.replace(time_limit=None))
    assert account.where == "here" and account.skipped == () and account.budget is None
    assert [s.name for s in seeds] == list(account.ran)


@pytest.mark.slow
def test_solve_with_a_five_second_limit_on_paper_ends_within_fifteen_seconds(tmp_path):
    instance = tmp_path / "p.json"
    command = [sys.executable, "-m", "primaldual"]
    subprocess.run([*command, "generate", "--preset", "paper", "--seed", "5302", "-o", str(instance)], check=True,
                   capture_output=True)
    clock = time.monotonic()
    done = subprocess.run([*command, "solve", str(instance), "--time-limit", "5", "--json"], capture_output=True,
                          text=True, timeout=120)
    wall = time.monotonic() - clock
    assert done.returncode in (0, 1), done.stderr
    assert wall < 15, wall
