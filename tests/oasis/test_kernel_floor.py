"""examples/kernel_floor.py, which measures what OASiS-LR's compiled parts cost by themselves (docs/measurements.md,
"What the targets would need"): it times every call of the parts it names and changes no decision."""

from __future__ import annotations

import pytest

from primaldual.core.files import save_instance
from primaldual.core.generate import generate
from primaldual.oasis.lr import price_cache, state

def _measure(tmp_path, capsys, example):
    path = tmp_path / "small.json"
    save_instance(generate("small", 5, jobs=10), path)
    plain = state.slot_functions, price_cache.PriceCache._refresh
    example("kernel_floor").main([str(path), "--reps", "1", "--restart-cost", "0.1"])
    # The run's code is restored, whatever the measurement did.
    assert (state.slot_functions, price_cache.PriceCache._refresh) == plain
    return capsys.readouterr().out.splitlines()


def _calls(rows, part):
    return int(next(row for row in rows if row.startswith(f"{part} |")).split(" | ")[1])


def test_every_part_is_timed_and_the_run_is_unchanged(tmp_path, capsys, example):
    """The script stops if the timed run earns other than the plain one; every offer and plan is counted."""
    rows = _measure(tmp_path, capsys, example)
    assert rows[0].startswith("RRH ") and rows[-1].startswith("floor: ")
    assert _calls(rows, "offer") > 0 and _calls(rows, "grow_plan") > 0


@pytest.mark.slow
def test_the_compiled_parts_are_timed_with_their_dispatch(tmp_path, capsys, monkeypatch, example):
    monkeypatch.setenv("PRIMALDUAL_KERNEL", "compiled")
    rows = _measure(tmp_path, capsys, example)
    assert _calls(rows, "offer") > 0 and _calls(rows, "price exponentials") > 0


def test_reps_below_one_are_refused(tmp_path, example, capsys):
    with pytest.raises(SystemExit) as stopped:
        example("kernel_floor").main([str(tmp_path / "none.json"), "--reps", "0"])
    assert stopped.value.code == 2 and "--reps must be at least 1, got 0" in capsys.readouterr().err


def test_a_bad_lookahead_budget_is_refused_naming_it(tmp_path, example, capsys):
    path = tmp_path / "small.json"
    save_instance(generate("small", 5, jobs=10), path)
    with pytest.raises(SystemExit) as stopped:
        example("kernel_floor").main([str(path), "--reps", "1", "--lookahead-budget", "-1"])
    assert stopped.value.code == 2 and "lookahead_budget" in capsys.readouterr().err
