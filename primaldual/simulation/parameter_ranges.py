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
from primaldual.core.numerals import read_integer, read_number
from primaldual.core.ranges import BOOLEAN, Boolean, Choice, FlagRange, PythonOnly, Text, integer, number, problem

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
    "las": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
    "gavel-las": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
    "gavel-ftf": {"placement": PLACEMENTS, "skip_unfinishable": BOOLEAN},
}


#: Parameters that act only through a switch (issue 65): ``KEY: SWITCH`` where KEY does something only while
#: SWITCH is true. OASiS-LR's lookahead compares the rollouts (``rollout_slots``, within ``lookahead_budget``)
#: and the re-plan (``replan``, itself run over ``replan_horizon`` slots in ``replan_iterations``).
_LR_NEEDS = {"lookahead_budget": "lookahead", "rollout_slots": "lookahead", "replan": "lookahead",
             "replan_horizon": "replan", "replan_iterations": "replan"}
NEEDS: dict[str, dict[str, str]] = {"oasis-lr": _LR_NEEDS, "oasis-p": _LR_NEEDS}
#: A switch's value when not given (``lookahead=None`` is the scheduler's own: on for OASiS-LR, off for the
#: provable OASiS-P; ``tests/hardening/test_idle_parameters.py`` compares these with the classes).
SWITCH_DEFAULTS: dict[str, dict[str, bool]] = {"oasis-lr": {"lookahead": True, "replan": False},
                                               "oasis-p": {"lookahead": False, "replan": False}}


def check_parameters(name: str, parameters: dict) -> dict:
    """Refuse the first parameter of scheduler ``name`` outside its range (``scheduler NAME: KEY: must be
    RANGE, got VALUE``) or unable to act (:data:`NEEDS`). Returns the parameters with an integral float of an
    integer parameter (``2.0``, ``1e6``, which the range takes) as its int, so that every scheduler class gets
    the same value whatever its own check. Unknown keys are the caller's check (they list the keys the
    scheduler takes)."""
    table = PARAMETERS.get(name, {})
    out = dict(parameters)
    for key, value in parameters.items():
        kind = table.get(key)
        found = problem(key, kind, value) if kind is not None else None
        if found:
            raise InputError(f"scheduler {name}: {found}")
        if isinstance(kind, FlagRange) and kind.domain.integer and isinstance(value, float):
            out[key] = int(value)
    _refuse_idle(name, out)
    return out


def _refuse_idle(name: str, parameters: dict) -> None:
    """Refuse a parameter of :data:`NEEDS` given while its switch is off: it would be echoed as set and do
    nothing. A switch given as false (``replan=false``) says nothing and passes."""
    for key, switch in NEEDS.get(name, {}).items():
        if key not in parameters or parameters[key] is False:
            continue
        given = parameters.get(switch)
        on = SWITCH_DEFAULTS[name][switch] if given is None else given
        if not on:
            how = "given false" if given is not None else "off by default"
            raise InputError(f"scheduler {name}: {key}: acts only with {switch}=true, and {switch} is {how} for "
                             f"{name}; set {switch}=true or drop {key}")


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
    ``0.5``, ``true``, ``null``), else a number as every flag reads one (``+1``, ``.5``: JSON has no ``+``;
    :mod:`primaldual.core.numerals`), else the string; refused when longer than :data:`MAX_VALUE_TEXT` characters or
    nested deeper than :data:`MAX_VALUE_DEPTH` (no parameter is a structure that deep)."""
    if len(text) > MAX_VALUE_TEXT:
        raise InputError(f"{where}: a value of at most {MAX_VALUE_TEXT} characters, got {len(text):,}")
    if _depth(text) > MAX_VALUE_DEPTH:
        raise InputError(f"{where}: a value nested at most {MAX_VALUE_DEPTH} deep, got {text[:40]!r}...")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    number = read_integer(text)
    number = read_number(text) if number is None else number
    return text if number is None else number
