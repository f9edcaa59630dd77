"""Run an offline solve in a spawned child under a wall-clock and a memory limit.

The whole solve (building the model, translating it, solving it; or every round of column generation) runs
in the child, so ``time_limit`` bounds all of it: the parent's deadline starts when the child is started,
and the child is killed ``grace`` seconds after ``time_limit`` if it has not answered. The child is told the
absolute deadline (``time.time()`` seconds) and hands the solver only the time that is left after building.
A killed solve loses nothing it reported: the parent keeps the last :class:`~primaldual.offline.outcome.Built`,
:class:`~primaldual.offline.outcome.Incumbent` and :class:`~primaldual.offline.outcome.BoundImproved`
events, and the certificate re-verifies that incumbent like any other schedule.

Memory: the child caps its own address space with ``resource.setrlimit(RLIMIT_AS)`` before it imports any
solver code; an allocation past the cap raises ``MemoryError`` (numpy, Pyomo, and highspy, whose pybind11
layer turns ``std::bad_alloc`` into ``MemoryError``), which the child reports as such. A child that dies
without a word while a cap was set is reported as possibly out of memory.

The child calls :func:`primaldual.backends.processes.exit_with_parent` first, so it never outlives the command that
started it (Ctrl-C, SIGTERM or SIGKILL of the parent).

The pipe carries the progress events of :mod:`primaldual.offline.outcome` while the work runs, then one
final message: the work's :class:`~primaldual.offline.outcome.RawSolve` or :class:`_Failed` (an error or a
memory failure). The parent folds them into a :class:`~primaldual.offline.outcome.ChildOutcome`. Cost: one
process start per solve (a fresh interpreter that imports the solver stack before the cap), and one pickled
event per improvement.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import dataclass, replace

from primaldual.backends.processes import sigterm_held
from primaldual.offline.outcome import (
    BoundImproved, Built, ChildOutcome, Incumbent, Phase, ProgressLine, RawSolve, Solving)

#: The exit code of a child that was asked to start a solve of its own while Python was still starting it: the
#: caller's script re-ran its top-level code in the child (the spawn start method imports the main module).
MAIN_GUARD_EXIT = 87


class MissingMainGuard(RuntimeError):
    """``solve_offline`` was called at the top level of a script without ``if __name__ == "__main__":``."""

    def __init__(self):
        super().__init__(
            "solve_offline runs the solver in a spawned process, which re-runs the top-level code of your script; "
            "put the script's code under `if __name__ == \"__main__\":` (see 'Safe importing of main module' in "
            "the multiprocessing documentation)")


#: Share of the machine's physical memory the solver child may use by default.
DEFAULT_MEMORY_SHARE = 0.5

#: Seconds between two progress lines while a build or solve runs (none before the first such interval).
PROGRESS_SECONDS = 5.0

#: How long a child that has answered may take to exit by itself before it is killed.
EXIT_SECONDS = 5.0


def machine_memory_bytes() -> int | None:
    """Physical memory of this machine in bytes (None where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def default_memory_limit() -> int | None:
    """:data:`DEFAULT_MEMORY_SHARE` of the machine's memory, in bytes: the solver child's default cap."""
    total = machine_memory_bytes()
    return None if total is None else int(total * DEFAULT_MEMORY_SHARE)


def _cap_memory(limit: int | None) -> None:
    if limit is None:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))


@dataclass(frozen=True)
class _Failed:
    """The child's last message when the work raised: the message, and whether it was out of memory."""

    message: str
    memory: bool


def _send(connection, message) -> None:
    try:
        connection.send(message)
    except Exception:  # under the memory cap even reporting may fail: the parent then sees the pipe close
        pass


def _child(connection, target, args, memory_limit, prepare, parent) -> None:  # runs in the spawned process
    from primaldual.backends.processes import exit_with_parent

    exit_with_parent(parent)  # the pid that started it: a parent gone before this line is noticed too
    try:
        if prepare is not None:
            prepare(*args)  # imports and solver probes, before the cap: they must not fail for lack of memory
        _cap_memory(memory_limit)
        answer = target(connection.send, *args)
        connection.send(answer)
    except MemoryError as error:
        _send(connection, _Failed(f"MemoryError: {error}", memory=True))
    except RuntimeError as error:
        # Under an address-space cap a new thread's stack is the first allocation to fail (HiGHS's threads).
        memory = memory_limit is not None and "can't start new thread" in str(error)
        _send(connection, _Failed(f"RuntimeError: {error}", memory=memory))
    except BaseException as error:  # report anything, even KeyboardInterrupt, rather than die silently
        _send(connection, _Failed(f"{type(error).__name__}: {error}", memory=False))
    finally:
        connection.close()


def _phase_line(seen: ChildOutcome, elapsed: float) -> str:
    parts = [f"{seen.phase}: {elapsed:.0f} s"]
    if seen.built is not None:
        parts.append(f"{seen.built.n_variables} variables, {seen.built.n_constraints} constraints")
    incumbent = seen.incumbent
    if incumbent is not None and incumbent.objective is not None:
        parts.append(f"incumbent {incumbent.objective:.6g}")
    bound = seen.bound.bound if seen.bound is not None else (None if incumbent is None else incumbent.bound)
    if bound is not None:
        parts.append(f"bound {bound:.6g}")
    return "; ".join(parts)


def _fold(seen: ChildOutcome, event) -> ChildOutcome:
    """What the parent knows after one more progress event."""
    if isinstance(event, Built):
        return replace(seen, built=event, phase="solving")
    if isinstance(event, Solving):
        return replace(seen, phase="solving")
    if isinstance(event, Phase):
        return replace(seen, phase=event.name)
    if isinstance(event, Incumbent):
        return replace(seen, incumbent=event)
    if isinstance(event, BoundImproved):
        return replace(seen, bound=event)
    return seen


def run_in_child(target, args: tuple, *, time_limit: float | None, grace: float, memory_limit: int | None,
                 progress=None, prepare=None) -> ChildOutcome:
    """Run ``target(notify, *args)`` in a spawned child and return how it ended.

    ``target`` must be a module-level function (it is pickled by name) that returns a
    :class:`~primaldual.offline.outcome.RawSolve`; ``notify(event)`` sends a progress event to the parent.
    Returns a :class:`~primaldual.offline.outcome.ChildOutcome` with the answer, or
    with ``killed`` (past ``time_limit + grace``), ``memory`` (past ``memory_limit``) or ``error`` set; the
    last events the child sent are kept either way. ``progress(line)``, if given, receives a line of text
    every :data:`PROGRESS_SECONDS` while the child runs, and each
    :class:`~primaldual.offline.outcome.ProgressLine` of the child. ``prepare(*args)``, if given (a
    module-level function), runs in the child before the memory cap is set.
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # This process is a spawned child still importing the caller's main module, which called us again:
        # end it quietly with a code the parent turns into MissingMainGuard (instead of multiprocessing's
        # traceback on the shared stderr and a solve that reports status 'error').
        os._exit(MAIN_GUARD_EXIT)
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, target, args, memory_limit, prepare, os.getpid()),
                              daemon=True)
    started = time.monotonic()
    deadline = None if time_limit is None else started + float(time_limit) + float(grace)
    with sigterm_held():  # a SIGTERM mid-start would leave the child a traceback on our stderr
        process.start()
    sender.close()
    answered = False
    try:
        seen, answered = _listen(receiver, process, started, deadline, memory_limit, progress)
        return seen
    finally:
        if answered:
            # Let it exit by itself: its exit handlers unregister the semaphores it made (pyomo makes one at
            # import) from the resource tracker it shares with the sweep, which warns at shutdown about every
            # one a killed child left registered ("leaked semaphore objects").
            process.join(EXIT_SECONDS)
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()


def _listen(receiver, process, started: float, deadline: float | None, memory_limit, progress):
    """Receive the child's events until its last message, its death or the deadline; returns (what the
    parent knows, whether the child answered)."""
    # The phases' names complete "the time limit ran out while ...".
    seen = ChildOutcome(phase="building the model")
    next_line = started + PROGRESS_SECONDS
    while True:
        wait = PROGRESS_SECONDS if progress is not None else None
        if deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            wait = left if wait is None else min(wait, left)
        if not receiver.poll(wait):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                process.kill()
                process.join()
                return replace(seen, killed=True, elapsed=now - started), False
            if progress is not None and now >= next_line:
                progress(_phase_line(seen, now - started))
                next_line = now + PROGRESS_SECONDS
            continue
        try:
            message = receiver.recv()
        except EOFError:
            process.join()
            if process.exitcode == MAIN_GUARD_EXIT:
                raise MissingMainGuard() from None
            return _died(process.exitcode, memory_limit, seen, time.monotonic() - started), False
        elapsed = time.monotonic() - started
        if isinstance(message, RawSolve):
            return replace(seen, answer=message, elapsed=elapsed), True
        if isinstance(message, _Failed):
            failure = {"memory" if message.memory else "error": message.message}
            return replace(seen, elapsed=elapsed, **failure), True
        if isinstance(message, ProgressLine):
            if progress is not None:
                progress(message.line)
                next_line = time.monotonic() + PROGRESS_SECONDS
            continue
        seen = _fold(seen, message)


def _died(exitcode, memory_limit, seen: ChildOutcome, elapsed: float) -> ChildOutcome:
    if memory_limit is not None and exitcode != 1:
        # A native allocation failure can abort the process before Python sees a MemoryError, and under the
        # cap even reporting one may fail (the child then ends with code 0 and no answer). Exit code 1 is a
        # Python error outside the child's handler, e.g. the spawn bootstrap failing (see the hint below).
        return replace(seen, elapsed=elapsed,
                       memory=f"the solver process died (exit code {exitcode}), most likely at the memory limit")
    hint = "" if seen.built is not None else (
        "; it died before building the model: if you called solve_offline from a script, put the "
        "script's code under `if __name__ == '__main__':` (the spawn start method re-imports the "
        "main module in the child)")
    return replace(seen, elapsed=elapsed, error=f"the solver process died (exit code {exitcode}){hint}")


def remaining(deadline: float | None, floor: float = 1e-3) -> float | None:
    """Seconds left until the absolute ``deadline`` (``time.time()``), at least ``floor``; None without one."""
    if deadline is None:
        return None
    return max(floor, deadline - time.time())


__all__ = ["DEFAULT_MEMORY_SHARE", "MAIN_GUARD_EXIT", "MissingMainGuard", "default_memory_limit", "machine_memory_bytes", "remaining", "run_in_child"]
