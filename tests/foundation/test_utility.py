import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step, utility_from_dict, utility_to_dict

positive = st.floats(min_value=0.0, max_value=1e3, allow_nan=False)
utilities = st.one_of(
    st.builds(Sigmoid, positive, st.floats(0.0, 20.0), st.floats(-50.0, 50.0)),
    st.builds(LinearDecay, positive, st.floats(0.01, 500.0)),
    st.builds(Step, positive, st.floats(0.0, 500.0)),
    st.builds(Constant, positive),
)


@given(utilities, st.lists(st.floats(0.0, 1000.0), min_size=2, max_size=30))
def test_every_utility_is_non_increasing_in_duration(utility, durations):
    durations = np.sort(np.array(durations))
    values = utility(durations)
    assert values.shape == durations.shape
    assert np.all(np.diff(values) <= 1e-12)
    assert np.all(values >= 0)


@given(utilities)
def test_utilities_round_trip_through_json(utility):
    again = utility_from_dict(json.loads(json.dumps(utility_to_dict(utility))))
    assert again == utility


@given(utilities, st.floats(0.0, 1000.0))
def test_vectorised_equals_scalar(utility, duration):
    assert float(utility(np.array([duration]))[0]) == pytest.approx(float(utility(duration)), rel=1e-12, abs=1e-300)


def test_sigmoid_values_by_hand():
    f = Sigmoid(gamma1=10.0, gamma2=2.0, gamma3=3.0)
    assert f(3.0) == pytest.approx(5.0)
    assert f(0.0) == pytest.approx(10.0 / (1.0 + np.exp(-6.0)))
    assert f(1e6) == 0.0  # no overflow warning for steep, late completions


def test_step_and_linear_by_hand():
    assert Step(4.0, 2.0)(np.array([0, 2, 3])).tolist() == [4.0, 4.0, 0.0]
    assert LinearDecay(4.0, 4.0)(np.array([0, 2, 4, 8])).tolist() == [4.0, 2.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"kind": "cubic"}, "utility.kind: must be one of"),
        ({"kind": "sigmoid", "gamma1": 1, "gamma2": 1}, "utility.gamma3: missing"),
        ({"kind": "sigmoid", "gamma1": -1, "gamma2": 1, "gamma3": 1}, "utility.gamma1: must be a number in [0, 1e12], got -1"),
        ({"kind": "linear", "value": 1, "deadline": 0}, "utility.deadline: must be a number in (0, 1e9], got 0"),
        ({"kind": "step", "value": "a lot", "deadline": 1}, "utility.value: must be a number in [0, 1e12], got 'a lot'"),
        ({"kind": "constant", "value": 1, "extra": 2}, "utility.extra: unknown field"),
    ],
)
def test_bad_utilities_name_the_field(data, message):
    with pytest.raises(InputError) as error:
        utility_from_dict(data)
    assert message in str(error.value)
