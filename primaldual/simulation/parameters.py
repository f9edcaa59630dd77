"""What a scheduler's parameters are: for each, its valid values and one line of meaning, as ``primaldual
schedulers`` prints them.

A scheduler class declares ``PARAMETER_SPECS = {name: ParameterSpec(valid, meaning)}`` beside its ``__init__``;
the type and the default come from the ``__init__`` signature
(:func:`primaldual.simulation.scheduler.scheduler_info`), so they cannot drift from the code. A class without a
spec for a parameter (a third-party scheduler, say) shows its type and default with the docstring's words. The
checks themselves stay in each ``__init__``: this is their description, which a test holds complete for every
built-in scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass

from primaldual.simulation.placement import PLACEMENTS


@dataclass(frozen=True)
class ParameterSpec:
    """``valid``: the values the scheduler accepts (``true or false``, ``a number in [0, 1]``, ...); ``meaning``: what
    the parameter does, in one line."""

    valid: str
    meaning: str


#: Set a parameter on the command line with one of these (``NAME`` the scheduler, ``KEY`` the parameter).
HOW_TO_SET = ("--param NAME.KEY=VALUE (compare, ratio; or [param.NAME] KEY = VALUE in an experiment file), "
              "--param KEY=VALUE (run --scheduler NAME); VALUE is JSON (true, 0.5, null, \"text\") or plain text")

BOOLEAN = "true or false"
PLACEMENT = ParameterSpec(f"one of {', '.join(PLACEMENTS)}",
                          "which servers a job's workers and PSs go to (primaldual.simulation.placement)")
SKIP_UNFINISHABLE = ParameterSpec(BOOLEAN, "pass over a job that can no longer finish by the horizon at its "
                                           "width instead of starting it")

__all__ = ["BOOLEAN", "HOW_TO_SET", "PLACEMENT", "SKIP_UNFINISHABLE", "ParameterSpec"]
