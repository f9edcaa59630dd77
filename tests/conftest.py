"""Shared test settings: hypothesis is derandomised so every run checks the same examples on any machine.

Two tiers of examples (issue 53, item 3). The fast tier (``pytest``, which deselects ``slow``) runs every
property test with :data:`FAST_SHARE` of its examples (at least :data:`FAST_FLOOR`, never more than it asks
for): the same properties, fewer draws, so the tier stays within 5 minutes on any 2-core machine. The slow tier
(``pytest -m slow``, which CI runs after the fast one) runs every property test as well, marked ``slow`` here,
with the full ``max_examples`` each declares; so every example a test asks for is checked in CI. A run that
selects both (``-m "slow or not slow"``, or no ``-m``) runs the full counts once.

Likewise a test parametrized over instances (seeds, VCs) that carries ``@pytest.mark.fast_tier(n)`` runs its
first ``n`` parameter sets in the fast tier and the others, marked ``slow`` here, in the slow tier: the same
check on fewer instances in the fast tier, on all of them in CI.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "primaldual",
    derandomize=True,
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("primaldual")

#: Share of a property test's examples the fast tier runs, and the fewest it runs.
FAST_SHARE = 0.25
FAST_FLOOR = 3


def fast_examples(full: int) -> int:
    """The fast tier's example count for a test that asks for ``full``."""
    return min(full, max(FAST_FLOOR, math.ceil(FAST_SHARE * full)))


def _selects(markexpr: str, markers: set[str]) -> bool:
    """Whether ``-m markexpr`` selects a test carrying exactly ``markers``."""
    if not markexpr:
        return True
    from _pytest.mark.expression import Expression  # pytest's own parser of -m, so the answer is pytest's

    return Expression.compile(markexpr).evaluate(lambda name, **kwargs: not kwargs and name in markers)


def _property_test(item):
    function = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
    return function if getattr(function, "is_hypothesis_test", False) else None


def _tier_instances(items) -> None:
    """Mark ``slow`` the parameter sets of a ``fast_tier(n)`` test after its first ``n`` (in collection order)."""
    seen: dict[tuple, int] = {}
    for item in items:
        marker = item.get_closest_marker("fast_tier")
        if marker is None:
            continue
        key = (item.path, item.cls, getattr(item, "originalname", item.name))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > marker.args[0]:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)  # before pytest's -m deselection, which must see the slow marks added here
def pytest_collection_modifyitems(config, items):
    _tier_instances(items)
    markexpr = config.option.markexpr
    full = _selects(markexpr, {"slow"})
    also_in_slow_tier = full and not _selects(markexpr, set())
    for item in items:
        function = _property_test(item)
        if function is None or item.get_closest_marker("slow"):
            continue
        if also_in_slow_tier:
            item.add_marker(pytest.mark.slow)
        elif not full and not getattr(function, "_fast_tier", False):
            declared = function._hypothesis_internal_use_settings
            function._hypothesis_internal_use_settings = settings(
                declared, max_examples=fast_examples(declared.max_examples))
            function._fast_tier = True  # once per function: its parametrized items share it


@pytest.fixture
def example():
    """A loader of ``examples/NAME.py`` as a module (the scripts are not part of the package)."""
    def load(name: str):
        path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load
