"""Progress on stderr for long work: shown on a terminal once the work outlasts a few seconds, never on stdout,
off with --no-progress or when stderr is not a terminal."""

from __future__ import annotations

import io
import time

import pytest

from primaldual.cli import build_parser
from primaldual.commands._progress import activity, progress_enabled


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_long_work_shows_its_elapsed_time_and_news_then_clears_the_line():
    stream = Terminal()
    with activity("solve", True, after=0.2, stream=stream) as news:
        news("incumbent 3, bound 4")
        time.sleep(1.5)
    shown = stream.getvalue()
    assert "\rsolve: 00:01, incumbent 3, bound 4" in shown
    assert shown.endswith("\r")  # the line is wiped at the end (leave=False)


def test_quick_or_disabled_work_shows_nothing():
    for enabled, seconds in ((True, 0.0), (False, 0.4)):
        stream = Terminal()
        with activity("solve", enabled, after=0.2, stream=stream) as news:
            news("x")
            time.sleep(seconds)
        assert stream.getvalue() == ""


#: Every command that can run past a few seconds (the rest: generate, verify, schedulers, trace list).
LONG = [["run", "--scheduler", "oasis", "--preset", "tiny"], ["solve", "i.json"], ["compare"], ["plot", "r.jsonl"],
        ["ratio"], ["reproduce", "--out", "d"], ["trace", "import", "philly:0/vc1", "-o", "x.json"],
        *[["lbbsp", name] for name in ("simulate", "aggregate", "cov", "train", "limits")],
        ["lbbsp", "replay", "--cov-job", "1"], ["lbbsp", "sweep", "--kind", "cov", "--seeds", "0"],
        *[["bench", name] for name in ("offline", "oasis", "lbbsp")]]


@pytest.mark.parametrize("argv", LONG, ids=lambda argv: " ".join(argv[:2]))
def test_every_long_command_takes_no_progress(argv, monkeypatch):
    parser = build_parser()
    args = parser.parse_args([*argv, "--no-progress"])
    assert args.no_progress is True
    monkeypatch.setattr("sys.stderr", Terminal())
    assert progress_enabled(args) is False
    assert progress_enabled(parser.parse_args(argv)) is True
