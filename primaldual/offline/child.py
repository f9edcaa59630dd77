"""Run an offline solve in a spawned child under a wall-clock and a memory limit (issue 11, item 1).

The whole solve (building the model, translating it, solving it; or every round of column generation) runs
in the child, so ``time_limit`` bounds all of it: the parent's deadline starts when the child is started,
and the child is killed ``grace`` seconds after ``time_limit`` if it has not answered. The child is told the
absolute deadline (``time.time()`` seconds) and hands the solver only the time that is left after building.

Memory: the child caps its own address space with ``resource.setrlimit(RLIMIT_AS)`` before it imports any
solver code; an allocation past the cap raises ``MemoryError`` (numpy, Pyomo, and highspy, whose pybind11
layer turns ``std::bad_alloc`` into ``MemoryError``), which the child reports as ``"memory"``. A child that
dies without a word while a cap was set is reported as possibly out of memory.

The child calls :func:`primaldual.backends.processes.exit_with_parent` first, so it never outlives the command that
started it (Ctrl-C, SIGTERM or SIGKILL of the parent).

Messages from the child are ``(kind, data)`` pairs: ``"built"`` (model size and build seconds), ``"solving"``,
``"incumbent"`` (the best schedule so far and its bound), ``"bound"`` (a certified bound so far, for column
generation), ``"phase"`` (what the child does now, e.g. ``"seeding"``), ``"progress"`` (one line of text for
the user), ``"done"`` (the answer), ``"error"``, ``"memory"``.
"""

from __future__ import annotations

import multiprocessing
import os
import time

from primaldual.backends.processes import sigterm_held

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


def _child(connection, target, args, memory_limit, prepare, parent) -> None:  # runs in the spawned process
    from primaldual.backends.processes import exit_with_parent

    exit_with_parent(parent)  # the pid that started it: a parent gone before this line is noticed too
    try:
        if prepare is not None:
            prepare(*args)  # imports and solver probes, before the cap: they must not fail for lack of memory
        _cap_memory(memory_limit)
        raw = target(lambda kind, data: connection.send((kind, data)), *args)
        connection.send(("done", raw))
    except MemoryError as error:
        try:
            connection.send(("memory", f"MemoryError: {error}"))
        except Exception:
            pass
    except RuntimeError as error:
        # Under an address-space cap a new thread's stack is the first allocation to fail (HiGHS's threads).
        kind = "memory" if memory_limit is not None and "can't start new thread" in str(error) else "error"
        try:
            connection.send((kind, f"RuntimeError: {error}"))
        except Exception:
            pass
    except BaseException as error:  # report anything, even KeyboardInterrupt, rather than die silently
        try:
            connection.send(("error", f"{type(error).__name__}: {error}"))
        except Exception:
            pass
    finally:
        connection.close()


def _phase_line(phase: str, elapsed: float, state: dict) -> str:
    parts = [f"{phase}: {elapsed:.0f} s"]
    if state.get("built"):
        built = state["built"]
        parts.append(f"{built.get('n_variables', 0)} variables, {built.get('n_constraints', 0)} constraints")
    incumbent = state.get("incumbent") or {}
    if incumbent.get("objective") is not None:
        parts.append(f"incumbent {incumbent['objective']:.6g}")
    bound = (state.get("bound") or {}).get("bound", incumbent.get("bound"))
    if bound is not None:
        parts.append(f"bound {bound:.6g}")
    return "; ".join(parts)


def run_in_child(target, args: tuple, *, time_limit: float | None, grace: float, memory_limit: int | None,
                 progress=None, prepare=None) -> dict:
    """Run ``target(notify, *args)`` in a spawned child and return its answer, or what is known at the end.

    ``target`` must be a module-level function (it is pickled by name). Returns the child's ``"done"`` data
    with ``"built"``/``"incumbent"``/``"bound"`` merged in, or a dict with ``"killed"`` (past ``time_limit +
    grace``), ``"memory"`` (past ``memory_limit``) or ``"error"`` set and the last ``"built"``,
    ``"incumbent"`` and ``"bound"`` the child reported. ``progress(line)``, if given, receives a line of text
    every :data:`PROGRESS_SECONDS` while the child runs, and each ``"progress"`` message of the child.
    ``prepare(*args)``, if given (a module-level function), runs in the child before the memory cap is set.
    """
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, target, args, memory_limit, prepare, os.getpid()),
                              daemon=True)
    started = time.monotonic()
    deadline = None if time_limit is None else started + float(time_limit) + float(grace)
    with sigterm_held():  # a SIGTERM mid-start would leave the child a traceback on our stderr
        process.start()
    sender.close()
    state: dict = {"built": None, "incumbent": None, "bound": None}
    phase = "building the model"  # the phases' names complete "the time limit ran out while ..."
    next_line = started + PROGRESS_SECONDS
    answered = False
    try:
        while True:
            now = time.monotonic()
            wait = PROGRESS_SECONDS if progress is not None else None
            if deadline is not None:
                wait = max(0.0, deadline - now) if wait is None else max(0.0, min(wait, deadline - now))
            if not receiver.poll(wait):
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    process.kill()
                    process.join()
                    return {"killed": True, "phase": phase, "elapsed": now - started, **state}
                if progress is not None and now >= next_line:
                    progress(_phase_line(phase, now - started, state))
                    next_line = now + PROGRESS_SECONDS
                continue
            try:
                kind, data = receiver.recv()
                answered = kind in ("done", "memory", "error")
            except EOFError:
                process.join()
                return _died(process.exitcode, memory_limit, state)
            if kind == "built":
                state["built"] = data
                phase = "solving"
            elif kind == "solving":
                phase = "solving"
            elif kind == "phase":
                phase = str(data)
            elif kind == "incumbent":
                state["incumbent"] = data
            elif kind == "bound":
                state["bound"] = data
            elif kind == "progress":
                if progress is not None:
                    progress(str(data))
                    next_line = time.monotonic() + PROGRESS_SECONDS
            elif kind == "done":
                return {**state, **data, "elapsed": time.monotonic() - started}
            elif kind == "memory":
                return {"memory": data, "phase": phase, **state}
            else:
                return {"error": data, "phase": phase, **state}
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


def _died(exitcode, memory_limit, state) -> dict:
    if memory_limit is not None and exitcode != 1:
        # A native allocation failure can abort the process before Python sees a MemoryError, and under the
        # cap even reporting one may fail (the child then ends with code 0 and no answer). Exit code 1 is a
        # Python error outside the child's handler, e.g. the spawn bootstrap failing (see the hint below).
        return {"memory": f"the solver process died (exit code {exitcode}), most likely at the memory limit",
                **state}
    hint = "" if state.get("built") is not None else (
        "; it died before building the model: if you called solve_offline from a script, put the "
        "script's code under `if __name__ == '__main__':` (the spawn start method re-imports the "
        "main module in the child)")
    return {"error": f"the solver process died (exit code {exitcode}){hint}", **state}


def remaining(deadline: float | None, floor: float = 1e-3) -> float | None:
    """Seconds left until the absolute ``deadline`` (``time.time()``), at least ``floor``; None without one."""
    if deadline is None:
        return None
    return max(floor, deadline - time.time())


__all__ = ["DEFAULT_MEMORY_SHARE", "default_memory_limit", "machine_memory_bytes", "remaining", "run_in_child"]
