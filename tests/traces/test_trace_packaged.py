"""The shipped VCs: each imports and round-trips; the command line imports, runs, verifies and lists."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import instance_to_dict, load_instance, save_instance
from primaldual.traces import SEEDS, import_trace, list_packaged, packaged_vcs
from primaldual.traces.packaged import _data

PACKAGED = [f"philly:{seed}/{vc}" for seed in SEEDS for vc in packaged_vcs(seed)]


def test_both_seeds_ship_fifteen_vcs_with_the_licence_and_readme():
    assert [len(packaged_vcs(seed)) for seed in SEEDS] == [15, 15]
    assert "MIT License" in _data().joinpath("LICENSE").read_text(encoding="utf-8")
    assert "c4fa400" in _data().joinpath("README.md").read_text(encoding="utf-8")


@pytest.mark.fast_tier(6)
@pytest.mark.parametrize("name", PACKAGED)
def test_every_packaged_vc_imports_and_round_trips(tmp_path, name):
    instance = import_trace(name)
    counts = instance.meta["trace"]["counts"]
    assert counts["read"] == counts["in_window"] and instance.n_jobs == counts["kept"] > 0
    assert counts["kept"] + counts["dropped_outlasting"] + counts["dropped_oversize"] + \
        counts["dropped_too_large"] == counts["read"]
    save_instance(instance, tmp_path / "i.json")
    again = load_instance(tmp_path / "i.json")
    assert instance_to_dict(again) == instance_to_dict(instance)


def test_a_seed_flag_picks_the_seed_of_a_name_without_one_and_must_agree_with_one():
    from primaldual.traces import TraceOptions

    one = import_trace("philly:1/23dbec")
    assert instance_to_dict(import_trace("philly:23dbec", TraceOptions(seed=1))) == instance_to_dict(one)
    with pytest.raises(InputError, match="--seed"):
        import_trace("philly:1/23dbec", TraceOptions(seed=0))
    with pytest.raises(InputError, match="no VC"):
        import_trace("philly:0/nothere")


def test_trace_list_lists_every_packaged_vc(capsys):
    assert main(["trace", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["vcs"]
    assert [row["source"] for row in rows] == PACKAGED
    assert sum(row["jobs"] for row in rows if row["seed"] == 0) == 15264  # the lines of seed 0's files
    assert rows == list_packaged()


@pytest.mark.parametrize("scheduler", ["rrh", "fifo", "oasis"])
def test_a_schedule_on_an_imported_window_verifies(tmp_path, capsys, scheduler):
    instance, schedule = tmp_path / "i.json", tmp_path / "s.json"
    assert main(["trace", "import", "philly:0/b436b2", "--window", "72:48", "--tail-hours", "24",
                 "-o", str(instance), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["jobs"] >= 5 and summary["window_hours"] == [72.0, 48.0] and summary["horizon"] == 72
    assert main(["run", str(instance), "--scheduler", scheduler, "--json", "-o", str(schedule)]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] >= 1
    assert main(["verify", str(instance), str(schedule)]) == 0


def test_the_notes_go_to_stderr(tmp_path, capsys):
    assert main(["trace", "import", "philly:0/b436b2", "--window", "72:48", "-o", str(tmp_path / "i.json")]) == 0
    err = capsys.readouterr().err
    assert "arrive outside the window" in err and "cannot finish by the horizon" in err


def test_a_missing_source_or_bad_window_is_exit_2(tmp_path, capsys):
    assert main(["trace", "import", str(tmp_path / "none.trace"), "-o", str(tmp_path / "i.json")]) == 2
    assert main(["trace", "import", "philly:0/b436b2", "--window", "72", "-o", str(tmp_path / "i.json")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "no such file" in err[0] and "--window" in err[1]
