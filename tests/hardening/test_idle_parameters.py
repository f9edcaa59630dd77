"""Issue 65, item 8: one rule for scheduler parameters, in the range table (simulation/parameter_ranges.py)
and applied by every scheduler: a parameter that cannot act (its switch off) is refused like ``replan`` without
the lookahead always was; an integral float of an integer parameter (``2.0``, ``1e6``) is that integer for
every scheduler, and a refused value has one message format whether ``make_scheduler`` or the class refuses it;
``+1`` is a number as in every flag, and a key or value with spaces around it is refused."""

from __future__ import annotations

import pytest

from primaldual.baselines.dorm import DormScheduler
from primaldual.baselines.fifo import FifoScheduler
from primaldual.baselines.themis import ThemisScheduler
from primaldual.baselines.tiresias import TiresiasScheduler
from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.ranges import FlagRange
from primaldual.simulation.parameter_ranges import NEEDS, PARAMETERS, SWITCH_DEFAULTS
from primaldual.simulation.scheduler import make_scheduler


def _switched_on(name: str, key: str) -> dict:
    """The switches ``key`` needs, on (``replan_horizon`` needs replan, which needs the lookahead)."""
    on, needs = {}, NEEDS.get(name, {})
    while key in needs:
        key = needs[key]
        on[key] = True
    return on


@pytest.mark.parametrize("name", sorted(SWITCH_DEFAULTS))
def test_the_switch_defaults_are_the_schedulers_own(name):
    settings = make_scheduler(name).settings
    for switch, default in SWITCH_DEFAULTS[name].items():
        assert getattr(settings, switch) is default, (name, switch)


IDLE = [(name, key) for name, table in NEEDS.items() for key in table]


@pytest.mark.parametrize("name, key", IDLE, ids=[f"{n}.{k}" for n, k in IDLE])
def test_a_parameter_whose_switch_is_off_is_refused(name, key):
    value = True if key == "replan" else 3
    switch = NEEDS[name][key]
    make_scheduler(name, **_switched_on(name, key), **{key: value})  # it acts: taken
    others = {k: v for k, v in _switched_on(name, key).items() if k != switch}  # replan_horizon: lookahead on
    cases = [{switch: False}] + ([{}] if not SWITCH_DEFAULTS[name][switch] else [])  # given off, or off by default
    for given in cases:
        with pytest.raises(InputError) as refused:
            make_scheduler(name, **others, **given, **{key: value})
        assert str(refused.value).startswith(f"scheduler {name}: {key}: acts only with {switch}=true"), refused.value
    if key == "replan":
        make_scheduler(name, lookahead=False, replan=False)  # a switch said off says nothing: taken


@pytest.mark.parametrize("argv, words", [
    (["run", "--preset", "tiny", "--scheduler", "oasis-p", "--param", "rollout_slots=5"],
     "scheduler oasis-p: rollout_slots: acts only with lookahead=true, and lookahead is off by default"),
    (["compare", "--preset", "tiny", "--schedulers", "oasis-lr", "--param", "oasis-lr.lookahead=false",
      "--param", "oasis-lr.lookahead_budget=7"], "lookahead_budget: acts only with lookahead=true"),
    (["ratio", "--preset", "tiny", "--schedulers", "oasis-lr", "--param", "oasis-lr.replan_iterations=9",
      "--out", "r.jsonl"], "replan_iterations: acts only with replan=true"),
    (["run", "--preset", "tiny", "--scheduler", "tiresias", "--param", " threshold=1"],
     "--param: ' threshold' has spaces around it"),
    (["run", "--preset", "tiny", "--scheduler", "tiresias", "--param", "threshold=1 "],
     "--param: '1 ' has spaces around it"),
])
def test_every_command_refuses_in_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert list(tmp_path.iterdir()) == []


INTEGERS = [(name, key, kind) for name, table in PARAMETERS.items() for key, kind in table.items()
            if isinstance(kind, FlagRange) and kind.domain.integer]


@pytest.mark.parametrize("name, key, kind", INTEGERS, ids=[f"{n}.{k}" for n, k, _ in INTEGERS])
def test_an_integral_float_is_the_integer_for_every_scheduler(name, key, kind):
    low = max(int(kind.domain.low), 1)
    on = _switched_on(name, key)
    make_scheduler(name, **on, **{key: float(low)})
    with pytest.raises(InputError, match=f"^scheduler {name}: {key}: must be .*got {low + 0.5}$"):
        make_scheduler(name, **on, **{key: low + 0.5})


@pytest.mark.parametrize("cls, key, attribute", [(TiresiasScheduler, "starvation_limit", "starvation_limit"),
                                                 (ThemisScheduler, "lease", "lease"),
                                                 (FifoScheduler, "workers", "workers"),
                                                 (DormScheduler, "max_adjustments", "max_adjustments")])
def test_the_classes_agree_with_the_table_in_its_message(cls, key, attribute):
    made = cls(**{key: 2.0})
    assert getattr(made, attribute) == 2 and isinstance(getattr(made, attribute), int)
    for call in (lambda: cls(**{key: 2.5}), lambda: make_scheduler(cls.name, **{key: 2.5})):
        with pytest.raises(InputError, match=f"^scheduler {cls.name}: {key}: must be .*, got 2.5$"):
            call()


def test_a_plus_sign_is_a_number_as_in_every_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--preset", "tiny", "--scheduler", "tiresias", "--param", "threshold=+2", "--json"]) == 0
    assert '"threshold": 2' in capsys.readouterr().out
