"""``primaldual ratio`` and ``primaldual plot``: output, resumption through the CLI, and exit codes."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.sweep.records import read_records
from primaldual.sweep import deterministic_part, ratio_specs, sweep

RATIO = ["ratio", "--preset", "tiny", "--instances", "3", "--seed", "5", "--schedulers", "oasis,fifo",
         "--workers", "1", "--no-progress"]


@pytest.fixture(scope="module")
def ratio_run(tmp_path_factory):
    """The module's one real ratio process, with a pool of two workers (test_ratio_leaks_no_semaphores reads
    its stderr); the other tests call ``main`` in this process where they can, as starting one costs a second."""
    from .conftest import run_cli

    out = tmp_path_factory.mktemp("ratio") / "r.jsonl"
    pooled = ["2" if a == "1" else a for a in RATIO]  # --workers 2
    done = run_cli(*pooled, "--out", str(out), "--json")
    return out, done


def test_ratio_json_summary(ratio_run):
    out, done = ratio_run
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["computed"] == 3 and data["skipped"] == 0 and data["instances"] == 3
    assert set(data["schedulers"]) == {"oasis", "fifo"}
    assert data["opt_status"] == {"optimal": 3}
    records = list(read_records(out).values())
    assert sorted(r["spec"]["seed"] for r in records) == [5, 6, 7]
    oasis = data["schedulers"]["oasis"]
    points = [r["ratios"]["oasis"]["point"] for r in records if r["ratios"]["oasis"]["point"] is not None]
    assert oasis["mean"] == pytest.approx(sum(points) / len(points))
    assert oasis["worst"] == pytest.approx(max(points))


# Slow: the library sweep of the same three instances again (2-2.5 s). The fast tier checks ratio's figures
# against the command's summary (above) and a one-instance ratio record against compare's (test_pipeline.py).
@pytest.mark.slow
def test_ratio_records_equal_the_library_sweep(ratio_run, tmp_path):
    out, _ = ratio_run
    # --method defaults to auto on the command line (Spec's own default stays ilp, so old keys stay valid)
    specs = ratio_specs("tiny", 3, seed=5, schedulers=("oasis", "fifo"), time_limit=60.0, method="auto")
    library = sweep(specs, tmp_path / "lib.jsonl", workers=1, progress=False)
    assert {r["key"]: deterministic_part(r) for r in library.records} == {
        k: deterministic_part(r) for k, r in read_records(out).items()
    }


def test_ratio_text_table_and_rerun_skips(ratio_run, cli):
    out, _ = ratio_run
    before = out.read_bytes()
    done = cli(*RATIO, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "0 computed, 3 already there" in done.stdout
    assert "mean OPT/ALG" in done.stdout and "oasis" in done.stdout and "fifo" in done.stdout
    assert out.read_bytes() == before


def test_ratio_malformed_results_file_exit_2_with_line(ratio_run, capsys, tmp_path):
    out, _ = ratio_run
    lines = out.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{oops", lines[2]]) + "\n")
    assert main([*RATIO, "--out", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 2: not valid JSON" in err and "Traceback" not in err


@pytest.mark.parametrize("flags, message", [
    (["--schedulers", "oasis,nope"], "unknown scheduler 'nope'"),
    (["--preset", "huge"], "preset: must be one of"),
    (["--instances", "0"], "--instances: must be an integer in 1..100000, got 0"),
    (["--address", "tcp://127.0.0.1:1"], "--address: only meaningful with --executor dask"),
    (["--time-limit", "-1"], "--time-limit: must be a number in (0, 1e6], got -1.0"),
])
def test_ratio_bad_input_exit_2(capsys, tmp_path, flags, message):
    args = [a for a in RATIO if a not in ("--schedulers", "oasis,fifo")] + flags + ["--out", str(tmp_path / "x.jsonl")]
    assert main(args) == 2  # in-process: the same handler and exit code as the console script
    err = capsys.readouterr().err
    assert message in err and err.startswith("primaldual ratio: error:")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.slow  # starts a dask scheduler and workers; test_sweep.py runs a local dask cluster in the fast tier
def test_ratio_on_a_dask_cluster_by_address(ratio_run, cli, tmp_path):
    distributed = pytest.importorskip("distributed")
    out, _ = ratio_run
    cluster = distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None, host="127.0.0.1",
    )
    try:
        args = [a for a in RATIO if a not in ("--workers", "1")]
        done = cli(*args, "--executor", "dask", "--address", cluster.scheduler_address,
                   "--out", str(tmp_path / "d.jsonl"), "--json")
    finally:
        cluster.close()
    assert done.returncode == 0, done.stderr
    assert {k: deterministic_part(r) for k, r in read_records(tmp_path / "d.jsonl").items()} == {
        k: deterministic_part(r) for k, r in read_records(out).items()
    }


def test_plot_writes_png_figures(ratio_run, capsys, tmp_path):
    out, _ = ratio_run
    assert main(["plot", str(out), "--out", str(tmp_path / "figs"), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["figures"]
    assert figures and all(f.endswith(".png") for f in figures)
    for figure in figures:
        with open(figure, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # a ratio sweep over a knob, then its figures (4 s); test_plot_writes_png_figures stays fast
def test_plot_utility_curves_when_a_knob_varies(tmp_path):
    from primaldual.views.sweep_figures import plot_records
    from primaldual.sweep import Spec

    specs = [Spec(preset="small", jobs=jobs, schedulers=("fifo", "drf"), opt=False) for jobs in (4, 8)]
    records = sweep(specs, tmp_path / "u.jsonl", workers=1, progress=False).records
    written = plot_records(records, tmp_path / "figs")
    # Records carry per-job outcomes, so the distribution figures come with the utility curve.
    names = [p.name for p in written]
    assert "small-utility-vs-jobs.png" in names and not any("ratio" in name for name in names)
    assert {"small-jct-cdf.png", "small-fairness.png"} <= set(names)


def test_plot_exit_codes(capsys, tmp_path):
    assert main(["plot", str(tmp_path / "none.jsonl")]) == 2
    assert "no such results file" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["plot", str(empty)]) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a"}\n[]\n{"key": "b"}\n')
    assert main(["plot", str(bad)]) == 2
    assert "bad.jsonl: line 2: a record must be a JSON object" in capsys.readouterr().err


def test_ratio_jobs_flag_sets_the_instance_size_and_no_opt_uses_bounds(capsys, tmp_path):
    out = tmp_path / "j.jsonl"
    assert main(["ratio", "--preset", "small", "--jobs", "4", "--instances", "2", "--schedulers", "oasis,fifo",
                 "--no-opt", "--workers", "1", "--no-progress", "--out", str(out), "--json"]) == 0
    records = list(read_records(out).values())
    assert [r["instance"]["jobs"] for r in records] == [4, 4]
    assert all(r["opt"]["computed"] is False and "oasis_certificate" in r["opt_interval"]["upper_candidates"] for r in records)
    assert json.loads(capsys.readouterr().out)["opt_status"] == {"not computed": 2}


def test_ratio_leaks_no_semaphores(ratio_run):
    # Pool workers and their solver children share the parent's resource tracker, which warns at shutdown
    # about any semaphore a process registered (pyomo makes one at import) and never released.
    _, done = ratio_run  # a real process with a pool of two workers
    assert done.returncode == 0, done.stderr
    assert "leaked semaphore" not in done.stderr, done.stderr


@pytest.mark.parametrize("argv, message", [
    (["ratio", "--preset", "tiny", "--instances", "1", "--out", "{dir}"], "--out: '{dir}' is a folder, expected a file name"),
    (["reproduce", "--quick", "--out", "{file}"], "--out: '{file}' is a file, expected a folder"),
])
def test_output_paths_are_checked_before_any_work(tmp_path, capsys, argv, message):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    file.write_text("")
    names = {"dir": str(folder), "file": str(file)}
    assert main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message.format(**names) in err and "Traceback" not in err
    assert list(folder.iterdir()) == [] and file.read_text() == ""
