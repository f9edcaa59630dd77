"""An offline solve whose time limit holds for its online seeds too (issue 53, item 1).

``solve --time-limit T`` used to run every seeding scheduler (:data:`~primaldual.evaluation.seeds.SEED_SCHEDULERS`)
before the limit started: on a ``paper`` instance OASiS-LR alone took most of a minute, so ``T = 5`` ended after
55-200 s. :func:`solve_within` starts the clock before the seeds: they run, cheapest first, in one spawned child
that sends each verified seed as it finishes and is killed when the seeds' share of ``T``
(:data:`SEED_SHARE`) is spent; a seed that had not finished is skipped and named. The solve then gets what is
left of ``T`` (its own child still stops ``grace`` seconds past that, :func:`primaldual.offline.solve.default_grace`),
and the result says which seeds ran, which were skipped and how long they took (``details["online_seeds"]``).

Without a limit nothing changes: every seed runs here, as before, and only its time is reported. On a small
instance (:data:`IN_PROCESS_CELLS`), and in a daemonic process (a sweep's worker may not start one), the seeds
run here one after another and those not started before the seeds' share is spent are skipped: a running seed
is not interrupted there, and the account says so.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time
from dataclasses import dataclass
from typing import Mapping

from primaldual.core.instance import Instance
from primaldual.evaluation.seeds import compute_seed, seeds_to_run, solve_seeds, to_seeds
from primaldual.offline.options import SolveOptions

#: Share of the time limit the online seeds may take; the solve gets the rest (column generation's rounds and
#: the price-and-branch need most of it: a seed only gives a starting column set and incumbent).
SEED_SHARE = 0.4
#: The least time handed to the solve after the seeds (a floor on a computed remainder, never on a user's value:
#: the seeds stop at SEED_SHARE of the limit, so the remainder is below this only when the limit is tiny).
MIN_SOLVE_SECONDS = 0.1
#: How long a seeds child that was told to stop may take to exit before it is killed.
EXIT_SECONDS = 2.0
#: Up to this many cells (jobs x slots x worker servers) the seeds run here, checked between seeds: every seed
#: together takes about a second there (``small`` with 20 jobs, 1,600 cells: 0.6 s, OASiS-LR 0.5 s of it),
#: less than starting an interpreter for them would (1-2 s). Above it, a 60-job ``paper`` (600,000 cells) takes
#: 10 s, the 300-job one 62 s (OASiS-LR 56 s): there only a child that can be killed bounds them.
IN_PROCESS_CELLS = 20_000


@dataclass(frozen=True)
class SeedAccount:
    """Which online seeds a solve started from, which the time limit left out, and the seconds they took."""

    ran: tuple[str, ...]
    skipped: tuple[str, ...]
    seconds: float
    budget: float | None
    where: str  # "here" (no limit), "child" (killed at the budget) or "here, between seeds" (checked after each)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self) | {"ran": list(self.ran), "skipped": list(self.skipped)}

    def describe(self) -> str:
        text = f"online seeds {', '.join(self.ran) or 'none'} in {self.seconds:.1f} s"
        if self.skipped:
            text += (f"; skipped {', '.join(self.skipped)}: they would not fit in the seeds' "
                     f"{self.budget:.1f} s of the time limit")
        return text


def _stream_seeds(sender, instance: Instance, names: tuple[str, ...]) -> None:  # runs in the spawned child
    for name in names:
        sender.send((name, *compute_seed(instance, name)))


def _streaming(sender, work, args) -> None:  # runs in the spawned child
    from primaldual.backends.processes import exit_with_parent

    exit_with_parent()
    try:
        work(sender, *args)
    finally:
        sender.close()


def stream_in_child(work, args: tuple, expected: int, budget: float) -> dict:
    """Run ``work(sender, *args)`` (a module-level function that sends ``(key, *values)`` tuples, one per
    finished piece) in a spawned child killed after ``budget`` seconds; the pieces it sent by then, by key.
    Cost: one interpreter start; nothing is lost but the piece that was running when the budget ran out."""
    from primaldual.offline.child import MAIN_GUARD_EXIT, MissingMainGuard

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        os._exit(MAIN_GUARD_EXIT)  # a spawned child re-running a script's top level (see offline/child.py)
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_streaming, args=(sender, work, args), daemon=True)
    deadline = time.monotonic() + budget
    process.start()
    sender.close()
    got: dict = {}
    try:
        while len(got) < expected and receiver.poll(max(0.0, deadline - time.monotonic())):
            key, *values = receiver.recv()
            got[key] = tuple(values)
    except EOFError:
        pass  # the child ended (or died): what it sent is what there is
    finally:
        process.join(EXIT_SECONDS if len(got) == expected else 0)
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
    if process.exitcode == MAIN_GUARD_EXIT:
        raise MissingMainGuard()
    return got


def _in_child(instance: Instance, names: tuple[str, ...], budget: float) -> tuple[dict, str]:
    """The seeds of ``names`` computed in a spawned child killed after ``budget`` seconds: those it sent."""
    return stream_in_child(_stream_seeds, (instance, names), len(names), budget), "child"


def _here(instance: Instance, names: tuple[str, ...], budget: float) -> tuple[dict, str]:
    """The seeds of ``names`` computed here, none started once ``budget`` seconds have passed."""
    deadline = time.monotonic() + budget
    got: dict = {}
    for name in names:
        if time.monotonic() >= deadline:
            break
        got[name] = compute_seed(instance, name)
    return got, "here, between seeds"


def bounded_seeds(instance: Instance, options: SolveOptions, start=None,
                  ran: Mapping[str, object] | None = None) -> tuple[tuple, SeedAccount]:
    """The solve's online seeds within :data:`SEED_SHARE` of ``options.time_limit``, and their account."""
    clock = time.monotonic()
    if options.time_limit is None:
        seeds = solve_seeds(instance, options, start, ran)
        return seeds, SeedAccount(tuple(s.name for s in seeds), (), time.monotonic() - clock, None, "here")
    from primaldual.offline.methods import uses_seeds

    if not uses_seeds(instance, options, start):
        return (), SeedAccount((), (), 0.0, None, "here")
    ran = ran or {}
    budget = SEED_SHARE * options.time_limit
    names = seeds_to_run(ran, instance)
    cells = instance.n_jobs * instance.horizon * instance.cluster.n_worker_servers
    runner = _here if cells <= IN_PROCESS_CELLS or multiprocessing.current_process().daemon else _in_child
    computed, where = runner(instance, names, budget)
    seeds = to_seeds(instance, ran, computed)
    skipped = tuple(n for n in names if n not in computed)
    return seeds, SeedAccount(tuple(s.name for s in seeds), skipped, time.monotonic() - clock, budget, where)


def solve_within(instance: Instance, options: SolveOptions, *, start=None, ran: Mapping[str, object] | None = None,
                 progress=None):
    """:func:`~primaldual.offline.solve.solve_offline` with its online seeds, the seeds' time counted against
    ``options.time_limit``; the result's ``details["online_seeds"]`` is the :class:`SeedAccount`."""
    from primaldual.offline.solve import solve_offline

    started = time.monotonic()
    seeds, account = bounded_seeds(instance, options, start, ran)
    if options.time_limit is not None:
        left = options.time_limit - (time.monotonic() - started)
        options = options.replace(time_limit=max(MIN_SOLVE_SECONDS, left))
    result = solve_offline(instance, options, start=start, seeds=seeds, progress=progress)
    message = "; ".join(part for part in (result.message, account.describe() if account.skipped else "") if part)
    return dataclasses.replace(result, message=message,
                               details={**result.details, "online_seeds": account.to_dict()})


__all__ = ["IN_PROCESS_CELLS", "MIN_SOLVE_SECONDS", "SEED_SHARE", "SeedAccount", "bounded_seeds", "solve_within",
           "stream_in_child"]
