"""What OASiS-LR's compiled parts cost by themselves, against RRH's whole run: the part of a run that compiling
the Python around them cannot remove.

Usage (from a checkout, with the package installed)::

    primaldual trace import philly:1/11cb48 --window 1968:168 -o week.json
    PRIMALDUAL_KERNEL=compiled python examples/kernel_floor.py week.json

**Method.** RRH and OASiS-LR are each run after a warm-up (imports and the compiled loops loaded), and the best
of ``--reps`` wall times kept. Then one more OASiS-LR run is instrumented: every call of the compiled offer,
plan and block cost (:mod:`primaldual.oasis.lr.reference`, the functions the run's ``JobTables.code`` holds) is
timed, each after a timed call of a compiled function that takes the same arguments and does nothing (numba's
dispatch, which loops compiled around these calls would not pay); so are the price cache's refreshes
(:class:`primaldual.oasis.lr.price_cache.PriceCache`) and, inside them, numpy's exponentials. The instrumented run
must earn the plain run's utility to the last bit (the script stops otherwise): timing changes no decision.

**Reading it.** A part's ``own`` time is its time less its dispatch: the offers' own arithmetic is the dual
subroutine's search and the block search, already compiled. The *floor* adds the compiled parts' own times and
the exponentials (which stay numpy's: numba's ``exp`` differs from numpy's in the last bit on some inputs). Making
the rest of the slot compiled loops (the twin as arrays) removes the Python between these parts, not these parts;
a run gets below the floor only by making fewer of these calls (as answering each offer once per key does) or
making them faster. Figures: ``docs/measurements.md``, "What the targets would need".
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time

import numba
import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.files import load_instance
from primaldual.oasis import prices
from primaldual.oasis.lr import price_cache, state
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

#: The compiled functions of a run's ``JobTables.code`` that are timed.
TIMED = ("offer", "grow_plan", "block_cost")


def _nothing_like(function):
    """A compiled function with ``function``'s parameters that does nothing (``function`` compiled by numba)."""
    parameters = ", ".join(inspect.signature(function.py_func).parameters)
    namespace = {}
    exec(f"def nothing({parameters}):\n    return 0\n", namespace)
    return numba.njit(cache=False)(namespace["nothing"])


class Clock:
    """Seconds and calls per part."""

    def __init__(self):
        self.seconds, self.calls = {}, {}

    def timed(self, part: str, function):
        self.seconds[part], self.calls[part] = 0.0, 0

        def call(*arguments, **keywords):
            start = time.perf_counter()
            result = function(*arguments, **keywords)
            self.seconds[part] += time.perf_counter() - start
            self.calls[part] += 1
            return result
        return call


class Exponentials:
    """numpy for :mod:`primaldual.oasis.prices`, with its ``exp`` timed: the prices' exponentials, which must stay
    numpy's."""

    def __init__(self, clock: Clock):
        self.exp = clock.timed("price exponentials", np.exp)

    def __getattr__(self, name):
        return getattr(np, name)


def instrumented(clock: Clock, code):
    """``code`` (a run's slot functions) with :data:`TIMED` timed, each call preceded by a timed call of a
    compiled function that takes the same arguments and does nothing: the call's dispatch."""
    functions = {name: getattr(code, name) for name in dir(code) if not name.startswith("__")}
    compiled = isinstance(code.offer, numba.core.registry.CPUDispatcher)
    for name in TIMED:
        nothing = _nothing_like(functions[name]) if compiled else (lambda *arguments: 0)
        functions[name] = _after(nothing, clock.timed(f"{name} dispatch", nothing), clock.timed(name, functions[name]))
    namespace = type(sys)("instrumented")
    namespace.__dict__.update(functions)
    return namespace


def _after(nothing, dispatch, function):
    """``function``, each call after a timed ``dispatch``; ``nothing`` compiled, untimed, at the first call."""
    compiled = []

    def call(*arguments):
        if not compiled:
            compiled.append(nothing(*arguments))
        dispatch(*arguments)
        return function(*arguments)
    return call


def best_time(instance, scheduler, restart_cost: float, reps: int) -> tuple[float, float]:
    """The best wall time of ``reps`` runs of ``scheduler()`` after one warm-up, and the run's utility."""
    run = simulate(instance, scheduler(), restart_cost=restart_cost)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        run = simulate(instance, scheduler(), restart_cost=restart_cost)
        best = min(best, time.perf_counter() - start)
    return best, run.metrics.utility


def measure(instance, restart_cost: float, reps: int, budget: int | None = None):
    """RRH's and OASiS-LR's best times, and the instrumented run's :class:`Clock`; OASiS-LR with
    ``lookahead_budget=budget`` unless None (0: no batch rolled out, the run's own offers and plans only)."""
    def oasis_lr():
        return make_scheduler("oasis-lr") if budget is None else make_scheduler("oasis-lr", lookahead_budget=budget)
    rrh, _ = best_time(instance, lambda: make_scheduler("rrh"), restart_cost, reps)
    lr, utility = best_time(instance, oasis_lr, restart_cost, reps)
    clock = Clock()
    plain_functions, plain_refresh = state.slot_functions, price_cache.PriceCache._refresh
    state.slot_functions = lambda of: instrumented(clock, plain_functions(of))
    price_cache.PriceCache._refresh = clock.timed("price refresh", plain_refresh)
    prices.np = Exponentials(clock)
    try:
        again = simulate(instance, oasis_lr(), restart_cost=restart_cost).metrics.utility
    finally:
        state.slot_functions, price_cache.PriceCache._refresh, prices.np = plain_functions, plain_refresh, np
    if again != utility:
        sys.exit(f"kernel_floor: the instrumented run earned {again!r}, the plain run {utility!r}")
    return rrh, lr, clock


def report(rrh: float, lr: float, clock: Clock) -> list[str]:
    """The table: each part's calls and seconds, and as a multiple of RRH's whole run."""
    rows = [f"RRH {rrh:.3f} s, OASiS-LR {lr:.3f} s ({lr / rrh:.1f}x RRH)",
            "part | calls | s | dispatch s | own s | own x RRH"]
    floor = 0.0
    for part in TIMED:
        own = clock.seconds[part] - clock.seconds[f"{part} dispatch"]
        floor += own
        rows.append(f"{part} | {clock.calls[part]} | {clock.seconds[part]:.3f} | "
                    f"{clock.seconds[f'{part} dispatch']:.3f} | {own:.3f} | {own / rrh:.2f}")
    refresh, exponentials = clock.seconds["price refresh"], clock.seconds["price exponentials"]
    rows.append(f"price refresh | {clock.calls['price refresh']} | {refresh:.3f} | | | {refresh / rrh:.2f}")
    rows.append(f"price exponentials | {clock.calls['price exponentials']} | {exponentials:.3f} | | {exponentials:.3f} | "
                f"{exponentials / rrh:.2f}")
    floor += exponentials
    rows.append(f"floor: the compiled parts' own time and the exponentials | | | | {floor:.3f} | {floor / rrh:.2f}")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance")
    parser.add_argument("--restart-cost", type=float, default=0.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lookahead-budget", type=int, default=None,
                        help="OASiS-LR's lookahead_budget (default: its own; 0: no batch rolled out)")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps must be at least 1, got {args.reps}")
    try:
        measured = measure(load_instance(args.instance), args.restart_cost, args.reps, args.lookahead_budget)
    except InputError as error:
        parser.error(str(error))
    print("\n".join(report(*measured)))


if __name__ == "__main__":
    main()
