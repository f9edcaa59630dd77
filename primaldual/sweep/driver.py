"""The sweep driver: run every spec not yet in a results file, on any executor, and append each record."""

from __future__ import annotations

from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from primaldual.backends.processes import sigterm_held
from primaldual.core.errors import InputError
from primaldual.core.provenance import KEY as PROVENANCE, command_line, provenance
from primaldual.sweep.records import ResultsFile, read_records
from primaldual.sweep.executors import local_executor
from primaldual.sweep.spec import Spec, spec_key
from primaldual.sweep.task import outdated, run, scheduler_revisions


@dataclass
class SweepResult:
    """Records of the sweep's specs in spec order, and how many were computed now vs found in the file."""

    path: Path
    records: list[dict]
    computed: int
    skipped: int
    keys: list[str] = field(default_factory=list)


def _progress_bar(total: int, initial: int, enabled: bool, description: str):
    # Plain tqdm (text on stderr) also works in notebooks; tqdm.auto would need ipywidgets there.
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, disable=not enabled, unit="spec", desc=description, smoothing=0.1)


def _check_specs(specs: list) -> None:
    """Fail before starting any process if a spec is not a Spec or names an unknown scheduler."""
    from primaldual.simulation.scheduler import scheduler_class

    for n, spec in enumerate(specs):
        if not isinstance(spec, Spec):
            raise InputError(f"specs[{n}]: must be a Spec, got {type(spec).__name__}")
    for name in sorted({name for spec in specs for name in spec.schedulers}):
        scheduler_class(name)


def _pending(unique: dict[str, Spec], path: Path, redo: Callable[[dict], bool] | None):
    existing = read_records(path)
    # A record made by an earlier revision of one of its schedulers (a changed default, say) has the same key
    # as today's spec but not today's numbers.
    stale = [key for key, record in existing.items()
             if key in unique and (outdated(record, unique[key]) or (redo is not None and redo(record)))]
    if stale:
        ResultsFile(path).drop(stale)
        existing = {key: record for key, record in existing.items() if key not in stale}
    return existing, [(key, spec) for key, spec in unique.items() if key not in existing]


def _stop_workers(executor) -> None:
    """End a local pool's worker processes now: after an error or Ctrl-C/SIGTERM, a task that is running (a
    solve with a long time limit, say) must not keep the sweep, or its workers, alive."""
    terminate = getattr(executor, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(executor, "_processes", None) or {}).values())
    # The pool's own thread cancels the tasks that have not started (shutdown), and fails the running ones
    # when it sees their workers gone. Tasks cancelled from outside instead could not take that failure, and
    # Python < 3.14 prints the InvalidStateError from its thread: so the caller cancels nothing of its own.
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5.0)  # gone before the command exits, not left to their watchdogs
    if manager is not None:
        # The pool's thread drops the last reference to its queues as it ends, and their semaphores' cleanup
        # (unlink, then unregister with the resource tracker) runs in that thread then. Joined here, that
        # happens before the command ends the tracker (backends.processes.reap_resource_tracker); not
        # joined, a late unregister would start a second tracker, which prints a KeyError traceback while the
        # first warns of a "leaked semaphore" it can no longer find.
        manager.join(timeout=5.0)


def sweep(
    specs: Iterable[Spec],
    out: str | Path,
    executor: Executor | None = None,
    progress: bool = True,
    workers: int | None = None,
    on_record: Callable[[dict], None] | None = None,
    task: Callable[[Spec], dict] = run,
    redo: Callable[[dict], bool] | None = None,
) -> SweepResult:
    """Run every spec not yet in the results file ``out`` and append its record there as it finishes.

    ``executor`` is any :class:`concurrent.futures.Executor` (a Dask ``Client.get_executor()`` included);
    by default a :func:`~primaldual.sweep.executors.local_executor` of ``workers`` processes is started and
    shut down here. Specs whose key is already in ``out`` are not run again (a repeated spec runs once),
    unless ``redo(record)`` is true for their record (e.g. a time-limited solve) or one of its schedulers'
    ``revision`` has changed since it was made (each record written gets ``scheduler_revisions``): that record
    is removed from the file and computed again. ``on_record(record)`` is called after each record is on disk;
    an exception it raises stops the sweep (the records written so far stay). ``task`` replaces
    :func:`~primaldual.sweep.task.run` (a picklable top-level function). A task that raises stops the sweep
    with its error; the records already written stay, so a rerun after the fix resumes.

    A malformed line in ``out`` raises :class:`primaldual.sweep.records.ResultsFileError` before anything runs.
    """
    specs = list(specs)
    _check_specs(specs)
    unique: dict[str, Spec] = {spec_key(spec): spec for spec in specs}
    path = Path(out)
    existing, pending = _pending(unique, path, redo)
    skipped = len(unique) - len(pending)
    new: dict[str, dict] = {}
    own_executor = executor is None and bool(pending)
    if own_executor:
        with sigterm_held():  # its queues' semaphores are registered and given their cleanup in one piece
            executor = local_executor(workers)
    bar = _progress_bar(len(unique), skipped, progress, f"sweep -> {path.name}")
    futures = {}
    finished = False
    try:
        with ResultsFile(path) as results:
            # A local pool spawns its workers inside submit(); a SIGTERM between a spawn and the hand-over of
            # its start-up data would leave a worker that is in no table to stop, reading an empty pipe (an
            # EOFError traceback, an orphan): the signal waits until the submits are done.
            with sigterm_held():
                futures = {executor.submit(task, spec): key for key, spec in pending}
            for future in as_completed(futures):
                key = futures[future]
                record = future.result()
                if record.get("key") != key:
                    raise RuntimeError(f"task returned a record with key {record.get('key')!r} for spec {key}")
                # Stamped here, whatever the task: the sweep is what decides, on a resume, to reuse a record.
                record["scheduler_revisions"] = scheduler_revisions(unique[key])
                # The worker's machine and code (a Dask worker may run elsewhere), this sweep's command line.
                record[PROVENANCE] = {**provenance(), **record.get(PROVENANCE, {}), "command": command_line()}
                results.append(record)
                new[key] = record
                bar.update(1)
                if on_record is not None:
                    on_record(record)
        finished = True
    finally:
        if not own_executor:  # a pool of the caller's: its tasks of this sweep are cancelled (ours: see above)
            for future in futures:
                future.cancel()
        if not finished:
            bar.leave = False  # interrupted: the bar is cleared, so the command's own message is the one line
        bar.close()
        if own_executor and not finished:
            _stop_workers(executor)
        elif own_executor:
            executor.shutdown(wait=True, cancel_futures=True)
    merged = {**existing, **new}
    return SweepResult(path=path, records=[merged[key] for key in unique], computed=len(new), skipped=skipped,
                       keys=list(unique))


__all__ = ["SweepResult", "sweep"]
