"""Issue 53, items 5, 7 and 8: a refused run is exit 2 with one line on stderr and creates nothing.

Each case runs the command in an empty folder with its outputs under a folder that does not exist yet (so a
folder made by the output check would show too) and checks the folder is still empty afterwards.
"""

from __future__ import annotations

import pytest

from primaldual.cli import main


def _refused(capsys, tmp_path, monkeypatch, argv, *words):
    """Run ``argv`` in the empty ``tmp_path``; assert exit 2, one line naming ``words``, nothing created."""
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, (word, err)
    assert list(tmp_path.iterdir()) == [], "a refused run created files"
    return err


RATIO = ["ratio", "--preset", "tiny", "--instances", "2", "--out", "new/r.jsonl", "--no-opt"]


@pytest.mark.parametrize("argv, words", [
    (RATIO + ["--schedulers", "oasis-lr", "--param", "oasis-lr.replan=maybe"], ("replan", "maybe")),
    (RATIO + ["--schedulers", "fifo,drf", "--param", "fifo.workers=-3"], ("workers", "-3")),
    (RATIO + ["--schedulers", "fifo,nosuch"], ("--schedulers", "nosuch")),
    (RATIO + ["--workers", "0"], ("--workers",)),
    (RATIO + ["--address", "tcp://h:1"], ("--address",)),
])
def test_a_refused_ratio_run_writes_nothing(capsys, tmp_path, monkeypatch, argv, words):
    _refused(capsys, tmp_path, monkeypatch, argv, *words)


@pytest.mark.parametrize("argv", [
    RATIO,
    ["run", "--preset", "tiny", "--scheduler", "oasis", "-o", "new/s.json"],
    ["solve", "missing.json", "-o", "new/s.json"],
    ["generate", "--preset", "tiny", "-o", "new/i.json"],
    ["reproduce", "--quick", "--out", "new/repro"],
])
def test_a_bad_kernel_is_refused_before_any_file(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.setenv("PRIMALDUAL_KERNEL", "fastest")
    _refused(capsys, tmp_path, monkeypatch, argv, "PRIMALDUAL_KERNEL", "fastest")


@pytest.mark.parametrize("argv, key", [
    (["run", "--preset", "tiny", "--scheduler", "fifo", "--param", "workers=2", "--param", "workers=3",
      "-o", "new/s.json"], "workers"),
    (["compare", "--preset", "tiny", "--schedulers", "fifo,drf", "--param", "drf.workers=2",
      "--param", "drf.workers=4"], "drf.workers"),
    (RATIO + ["--schedulers", "fifo", "--param", "fifo.workers=1", "--param", "fifo.workers=1"], "fifo.workers"),
])
def test_a_repeated_param_key_is_refused(capsys, tmp_path, monkeypatch, argv, key):
    err = _refused(capsys, tmp_path, monkeypatch, argv, key, "twice")
    assert "--param" in err


def test_a_refused_run_creates_no_output_folder(capsys, tmp_path, monkeypatch):
    _refused(capsys, tmp_path, monkeypatch,
             ["run", "--preset", "tiny", "--scheduler", "fifo", "--param", "workers=0", "-o", "new/s.json"],
             "workers")
    _refused(capsys, tmp_path, monkeypatch, ["generate", "--preset", "nosuch", "-o", "new/i.json"], "nosuch")
    _refused(capsys, tmp_path, monkeypatch,
             ["trace", "import", "philly:0/23dbec", "--utility", "nosuch", "-o", "new/vc.json"], "--utility")
    _refused(capsys, tmp_path, monkeypatch, ["solve", "missing.json", "-o", "new/s.json"], "missing.json")


@pytest.mark.parametrize("argv, words", [
    (["bench", "trace", "--vcs", ""], ("--vcs",)),
    (["bench", "trace", "--vcs", " , "], ("--vcs",)),
    (["bench", "trace", "--vcs", "foo"], ("--vcs", "foo")),
    (["bench", "trace", "--schedulers", "rrh,bogus"], ("--schedulers", "bogus")),
    (["bench", "offline", "--sizes", ""], ("--sizes",)),
    (["bench", "offline", "--seeds", "abc"], ("--seeds", "--against-raw")),
    (["bench", "offline", "--against-raw", "--quick"], ("--quick",)),
    (["bench", "solvers", "--only", "restart", "--restart-cost", "0"], ("--restart-cost", "--only restart")),
    (["bench", "oasis", "--quality", "--quick"], ("--quick", "--quality")),
    (["bench", "oasis", "--repetitions", "3"], ("--repetitions", "--compare-lr")),
    (["bench", "oasis", "--compare-lr", "--count", "3"], ("--count", "--quality")),
    (["bench", "oasis", "--quality", "--jobs", "30"], ("--jobs",)),
])
def test_bench_refuses_empty_lists_and_flags_it_would_ignore(capsys, tmp_path, monkeypatch, argv, words):
    _refused(capsys, tmp_path, monkeypatch, argv, *words)


@pytest.mark.parametrize("argv", [
    ["run", "--preset", "tiny", "--scheduler", "oasis-p", "--param", "replan=true", "-o", "new/s.json"],
    ["run", "--preset", "tiny", "--scheduler", "oasis-lr", "--param", "replan=true", "--param", "lookahead=false"],
    ["compare", "--preset", "tiny", "--schedulers", "oasis-p,fifo", "--param", "oasis-p.replan=true"],
    RATIO + ["--schedulers", "oasis-lr", "--param", "oasis-lr.replan=true", "--param", "oasis-lr.lookahead=false"],
])
def test_replan_without_the_lookahead_is_refused(capsys, tmp_path, monkeypatch, argv):
    """Issue 53, item 6: the re-plan is a policy of the lookahead; without it, replan=true would do nothing."""
    _refused(capsys, tmp_path, monkeypatch, argv, "replan", "lookahead")


def test_replan_over_its_size_limit_is_said_before_the_run(capsys):
    assert main(["run", "--preset", "paper", "--jobs", "4", "--scheduler", "oasis-lr", "--param", "replan=true"]) == 0
    err = capsys.readouterr().err
    assert "replan=true does nothing on this instance" in err and "5,000" in err
    assert main(["run", "--preset", "tiny", "--scheduler", "oasis-lr", "--param", "replan=true"]) == 0
    assert "replan" not in capsys.readouterr().err
