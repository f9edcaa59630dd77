"""The type and finite range of every built-in scheduler's parameters (docs/input-ranges.md, "Scheduler
parameters"), and the size and depth limits of a parameter written as text.

:data:`PARAMETERS` maps a scheduler name to each of its ``__init__`` parameters' kind
(:mod:`primaldual.core.ranges`): booleans are ``true``/``false`` only (never read by truthiness: ``[]`` is not
false), numbers bounded, names one of a list, objects (OASiS's ``constants``) settable from Python only.
:func:`check_parameters` runs in :func:`primaldual.simulation.scheduler.make_scheduler` before the class is
called, so every entry point (``run``, ``compare``, ``ratio``, experiment files, Python) gets the same message;
``tests/hardening/test_flag_ranges.py`` checks that every parameter of every built-in scheduler has a row.
A scheduler registered by a third party has no row and keeps its own checks.

:func:`parse_value` reads text as JSON only after checking its length (:data:`MAX_VALUE_TEXT`) and nesting
depth (:data:`MAX_VALUE_DEPTH`), so a 5000-digit number or ``[[[[...]]]]`` is refused by name instead of
failing inside the parser. Cost O(length of the text).
"""

from __future__ import annotations

import json

from primaldual.core.domains import MAX_JOBS, MAX_SERVERS
from primaldual.core.errors import InputError
from primaldual.core.ranges import BOOLEAN, Boolean, Choice, PythonOnly, Text, integer, number, problem

MAX_VALUE_TEXT = 1000
MAX_VALUE_DEPTH = 4

PLACEMENTS = Choice(("first_fit", "least_loaded"))
PRICE_RULES = ("density", "capacity", "budget", "share")
_SCALE = number(1e-9, 1e9)
_RRH = {"discount_rate": number(0, 1e6), "risk_weight": number(0, 1), "preemptive": BOOLEAN,
        "placement": PLACEMENTS, "skip_unfinishable": BOOLEAN}
_LR = {"delta": number(0, 0.99), "window": integer(1, 10 ** 6), "eta": _SCALE, "rule": Choice(PRICE_RULES),
       "learned_floor": BOOLEAN, "pending": BOOLEAN, "repack": Boolean(optional=True), "late": BOOLEAN,
       "discount_rate": number(0, 1e6), "reoffer_every": integer(1, 10 ** 6),
       "immediate_blocks": Boolean(optional=True),
       "order": Choice(("density", "urgency", "value", "work"), optional=True),
       "plan": Choice(("best", "fresh", "stable")), "lookahead": Boolean(optional=True),
       "lookahead_budget": integer(0, 10 ** 12), "rollout_slots": integer(1, 10 ** 6),
       "replan": BOOLEAN, "replan_horizon": integer(1, 10 ** 6),
       "replan_iterations": integer(1, 10 ** 9)}

PARAMETERS: dict[str, dict[str, object]] = {
    "oasis": {"price_scale": _SCALE, "eta": _SCALE, "rule": Choice(PRICE_RULES),
              "constants": PythonOnly("a primaldual.oasis.prices.PriceConstants",
                                      "from the command line choose the rule instead (rule=share|budget|...)")},
    "greedy": {},
    "fifo": {"workers": integer(1, MAX_SERVERS, optional=True), "placement": PLACEMENTS,
             "skip_unfinishable": BOOLEAN},
    "drf": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
    "rrh": _RRH,
    "dorm": {"fairness_threshold": number(0, 1e6, optional=True),
             "max_adjustments": integer(0, MAX_JOBS, optional=True), "solver": Text("a solver name", 200),
             "time_limit": number(0, 1e6, low_open=True), "mip_gap": number(0, 1, high_open=True, optional=True),
             "formulation": Choice(("auto", "per_server", "pooled")), "placement": PLACEMENTS,
             "skip_unfinishable": BOOLEAN},
    "oasis-lr": _LR,
    "oasis-p": _LR,
    "rrh-full-reward": _RRH,
    "rrh-nonpreemptive": _RRH,
    "tiresias": {"threshold": number(0, 1e6, low_open=True), "starvation_limit": integer(1, 10 ** 6, optional=True),
                 "placement": PLACEMENTS},
    "srtf": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
    "optimus": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
    "themis": {"fairness": number(0, 1, high_open=True), "lease": integer(1, 10 ** 6, optional=True),
               "placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
}


def check_parameters(name: str, parameters: dict) -> None:
    """Refuse the first parameter of scheduler ``name`` outside its range: ``scheduler NAME: KEY: must be
    RANGE, got VALUE``. Unknown keys are the caller's check (they list the keys the scheduler takes)."""
    table = PARAMETERS.get(name, {})
    for key, value in parameters.items():
        kind = table.get(key)
        found = problem(key, kind, value) if kind is not None else None
        if found:
            raise InputError(f"scheduler {name}: {found}")


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in ``text``, outside strings (an upper bound inside them)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_value(text: str, where: str = "--param"):
    """A scheduler parameter written as text (``--param``, experiment files): JSON where it parses (``2``,
    ``0.5``, ``true``, ``null``), else the string; refused when longer than :data:`MAX_VALUE_TEXT` characters or
    nested deeper than :data:`MAX_VALUE_DEPTH` (no parameter is a structure that deep)."""
    if len(text) > MAX_VALUE_TEXT:
        raise InputError(f"{where}: a value of at most {MAX_VALUE_TEXT} characters, got {len(text):,}")
    if _depth(text) > MAX_VALUE_DEPTH:
        raise InputError(f"{where}: a value nested at most {MAX_VALUE_DEPTH} deep, got {text[:40]!r}...")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
