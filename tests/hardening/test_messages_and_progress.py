"""Issue 65, items 6 and 10: ``bench trace --no-progress`` prints no child run; it warns when its growth
exponents rest on too few sizes; a refused value of any length gives a line of bounded length that still names
what was refused and what to do."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import primaldual.evaluation.bench.trace as trace_bench
from primaldual.cli import MAX_ERROR_LINE, main

BENCH = ["bench", "trace", "--vcs", "925e2b", "--growth-vc", "925e2b", "--schedulers", "rrh,fifo"]


@pytest.fixture()
def fake_bench(monkeypatch):
    """``run_trace_bench`` replaced by one that reports one child run and returns a growth table of the given
    sizes (the real one runs child processes for seconds)."""
    def install(sizes):
        def fake(*args, **kwargs):
            progress = args[8]
            if progress is not None:
                progress(SimpleNamespace(n_jobs=4, horizon=4), SimpleNamespace(
                    error=None, scheduler="rrh", seconds=0.1, peak_mib=64.0))
            return SimpleNamespace(growth={"jobs": SimpleNamespace(sizes=sizes)})

        monkeypatch.setattr(trace_bench, "run_trace_bench", fake)
        monkeypatch.setattr(trace_bench, "format_trace_bench", lambda result: "table")
    return install


@pytest.mark.parametrize("flags, shown", [([], True), (["--no-progress"], False)])
def test_no_progress_prints_no_child_run(fake_bench, capsys, flags, shown):
    fake_bench([1, 2, 4])
    assert main([*BENCH, *flags]) == 0
    err = capsys.readouterr().err
    assert ("bench trace: 4 jobs x 4 slots, rrh: 0.1 s, 64 MiB" in err) == shown, err
    assert "warning" not in err


@pytest.mark.parametrize("sizes", [[0, 1, 2], [1, 1, 2], [3, 3, 3]])
def test_growth_on_too_few_sizes_is_said(fake_bench, capsys, sizes):
    fake_bench(sizes)
    assert main([*BENCH, "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning: the jobs exponents are fitted on" in err and str(sizes) in err, err


@pytest.mark.parametrize("argv, env, words", [
    (["generate", "--preset", "tiny", "-o", "x.json"], "k" * 100_000, "PRIMALDUAL_KERNEL: must be one of"),
    (["compare", "--preset", "tiny", "--schedulers", "f" * 9_000], None, "unknown scheduler"),
    (["run", "--preset", "tiny", "--scheduler", "fifo", "--param", "w" * 9_000 + "=1"], None, "unknown parameter"),
])
def test_a_long_refused_value_is_cut_in_the_message(tmp_path, monkeypatch, capsys, argv, env, words):
    monkeypatch.chdir(tmp_path)
    if env is not None:
        monkeypatch.setenv("PRIMALDUAL_KERNEL", env)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err[:300]
    assert len(err) <= MAX_ERROR_LINE + 100, len(err)
    assert list(tmp_path.iterdir()) == []
