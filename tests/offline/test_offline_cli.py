"""``primaldual solve`` and ``primaldual bench offline``, run in-process; exit codes 0 / 1 / 2."""

import contextlib
import io
import json

import pytest

import primaldual.offline.pyomo_ilp as pyomo_ilp
import primaldual.offline.solve as offline
from offline_helpers import run
from primaldual.core.files import load_instance, load_schedule, save_instance, save_schedule
from primaldual.core.generate import generate
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.backends.solvers import solver_available
from primaldual.core.verify import verify


@pytest.fixture()
def instance_file(tmp_path):
    path = tmp_path / "instance.json"
    save_instance(generate("small", 1), path)
    return path


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """``solve INSTANCE -o opt.json --json`` once for the module: its output is checked below and is the start
    of the test of ``--start`` (capsys is per test, so stdout is caught here)."""
    from primaldual.cli import main

    folder = tmp_path_factory.mktemp("solved")
    instance_file, output = folder / "instance.json", folder / "opt.json"
    save_instance(generate("small", 1), instance_file)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["solve", str(instance_file), "-o", str(output), "--json"])
    return instance_file, output, code, buffer.getvalue()


def test_solve_writes_a_verified_optimal_schedule(capsys, solved):
    instance_file, output, code, out = solved
    assert code == 0
    data = json.loads(out)
    for key in ("status", "objective", "bound", "gap", "solver", "build_seconds", "solve_seconds"):
        assert key in data
    assert data["status"] == "optimal" and data["solver"] == "highs" and data["output"] == str(output)
    instance = load_instance(instance_file)
    report = verify(instance, load_schedule(output, instance))
    assert report.feasible and report.utility == pytest.approx(data["objective"])
    # And the verify command agrees.
    code, out, _ = run(capsys, "verify", instance_file, output)
    assert code == 0 and out.startswith("feasible")


def test_solve_text_output(capsys, instance_file):
    code, out, _ = run(capsys, "solve", instance_file, "--solver", "highs", "--time-limit", "60", "--threads", "1")
    assert code == 0
    assert out.startswith("status optimal; incumbent ") and "admitted" in out


@pytest.mark.parametrize("flags", [["--relax"], ["--pooled"], ["--relax", "--formulation", "weak"]])
def test_relaxations_print_a_bound(capsys, instance_file, flags):
    code, out, _ = run(capsys, "solve", instance_file, *flags, "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "optimal" and data["admitted"] is None
    assert data["bound"] >= data["objective"]


def test_start_and_gap_flags(capsys, solved):
    instance_file, output, solved_code, _ = solved  # the start: the optimum written by the solve above
    assert solved_code == 0
    code, out, _ = run(capsys, "solve", instance_file, "--start", output, "--gap", "0.5", "--json")
    data = json.loads(out)
    assert code == 0 and data["start_objective"] is not None
    assert data["objective"] >= data["start_objective"]


def test_list_solvers_needs_no_instance(capsys):
    code, out, _ = run(capsys, "solve", "--list-solvers", "--json")
    data = json.loads(out)
    assert code == 0 and "highs" in data["available"]
    assert {row["name"] for row in data["solvers"]} >= {"highs", "cbc", "glpk", "scip", "gurobi", "cplex"}
    code, out, _ = run(capsys, "solve", "--list-solvers")
    assert code == 0 and "highs" in out and "available" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve"], "INSTANCE: an instance file is required"),
        (["solve", "{instance}", "--solver", "nope"], "unknown solver 'nope'"),
        (["solve", "missing.json"], "instance file not found"),
        (["solve", "{instance}", "--time-limit", "0"], "--time-limit"),
        (["solve", "{instance}", "--gap", "2"], "--gap"),
        (["solve", "{instance}", "--relax", "-o", "{tmp}/x.json"], "-o: --relax and --pooled give a bound"),
        (["solve", "{instance}", "-o", "{tmp}"], "-o: "),  # a folder where a file is expected
        (["solve", "{instance}", "--write-mps", "{tmp}/model.txt"], "must end in .mps or .lp"),
        (["solve", "{instance}", "--start", "{tmp}/bad_start.json"], "--start: the schedule is infeasible"),
        (["bench", "offline", "--sizes", "huge"], "--sizes: unknown size huge"),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, tmp_path, instance_file, argv, message):
    instance = load_instance(instance_file)
    bad = Schedule({0: JobSchedule([[5] * instance.cluster.n_worker_servers] * instance.horizon,
                                   [[0] * instance.cluster.n_ps_servers] * instance.horizon)})
    save_schedule(bad, tmp_path / "bad_start.json", instance)  # of this instance, and infeasible
    argv = [a.format(instance=instance_file, tmp=tmp_path) for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_unavailable_solver_exits_2(capsys, instance_file):
    absent = next((name for name in ("scip", "gurobi", "cplex") if not solver_available(name)), None)
    if absent is None:
        pytest.skip("scip, gurobi and cplex are all installed here")
    code, _, err = run(capsys, "solve", instance_file, "--solver", absent)
    assert code == 2 and "not available on this machine" in err


def test_solver_finding_nothing_exits_1(capsys, tmp_path, instance_file, monkeypatch):
    # No grace past a 1 ms limit: the solver process is killed before it answers.
    monkeypatch.setattr(offline, "default_grace", lambda time_limit: 0.0)
    output = tmp_path / "none.json"
    code, out, _ = run(capsys, "solve", instance_file, "--time-limit", "0.001", "-o", output, "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "killed"
    assert data["output"] is None and not output.exists()


def test_write_mps_exports_without_solving(capsys, tmp_path, instance_file, monkeypatch):
    monkeypatch.setattr(pyomo_ilp, "solve_model", lambda *a, **k: pytest.fail("--write-mps must not solve"))
    for name in ("model.mps", "model.lp"):
        path = tmp_path / name
        code, out, _ = run(capsys, "solve", instance_file, "--write-mps", path, "--json")
        data = json.loads(out)
        assert code == 0 and path.exists() and data["written"] == str(path) and data["n_variables"] > 0
    assert "OBJSENSE" in (tmp_path / "model.mps").read_text()


@pytest.mark.slow  # the offline benchmark end to end (3.5 s)
def test_bench_offline(capsys):
    # One size keeps the test short: each solve with a budget runs in its own process.
    code, out, err = run(capsys, "bench", "offline", "--sizes", "tiny", "--budget", "30", "--seed", "2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [row["size"] for row in data["rows"]] == ["tiny"]
    assert data["largest_proven_optimal"] == "tiny" and data["budget_seconds"] == 30
    for row in data["rows"]:
        assert row["status"] == "optimal" and row["variables"] > 0 and row["constraints"] > 0
        assert row["solve_over_build"] == pytest.approx(row["solve_seconds"] / row["build_seconds"])
        # Every relaxation bounds the optimum; the strong LP is at least as tight as the weak one.
        for key in ("lp_weak_over_ilp", "lp_strong_over_ilp", "pooled_over_ilp"):
            assert row[key] >= 1 - 1e-7
        assert row["lp_strong_over_ilp"] <= row["lp_weak_over_ilp"] + 1e-7


@pytest.mark.slow  # 7 s of raw-solver runs; test_bench_offline covers the command in the fast tier
def test_bench_offline_against_raw_prints_only_json(tmp_path):
    # Plain highspy runs in a spawned process whose stdout is the command's: HiGHS's banner once broke --json.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "primaldual", "bench", "offline", "--against-raw", "--seeds", "1",
                           "--budget", "2", "--json", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [row["instance"] for row in data["rows"]] == ["J30-T24-S8/s1"]
