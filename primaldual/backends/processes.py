"""Child processes that end with their parent.

A spawned solver child or sweep worker must not outlive the command that started it: not after Ctrl-C,
not after SIGTERM, not after SIGKILL of the parent (which runs no Python code at all, so the child has to
notice by itself), and its death must leave nothing registered with the resource tracker it shares with the
command. :func:`exit_with_parent` is the initializer every child of the package calls first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

#: How often the watchdog looks at its parent; the bound on how long an orphan can live.
WATCH_SECONDS = 0.5


def _ask_kernel_for_death_signal() -> None:
    # Linux only: the kernel sends SIGKILL when the parent thread that created us dies. Cheap and immediate,
    # but tied to a thread, so the watchdog below stays as the portable, thread-independent check.
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _watch(parent: int) -> None:
    event = threading.Event()
    while not event.wait(WATCH_SECONDS):
        if os.getppid() != parent:
            os._exit(1)  # reparented: the parent is gone, and nobody will read what we compute


def exit_with_parent(parent: int | None = None) -> None:
    """Make this process exit soon after its parent does, however the parent ended.

    ``parent`` is the pid of the process that started this one (default: ``os.getppid()`` now). A daemon
    thread polls every :data:`WATCH_SECONDS`; on Linux the kernel's parent-death signal is also requested.
    """
    parent = os.getppid() if parent is None else parent
    if threading.current_thread() is threading.main_thread():
        # A child ends on SIGTERM (a pool's terminate()), even if forked from a command whose SIGTERM handler
        # (terminate_like_interrupt) would otherwise make it raise KeyboardInterrupt mid-task.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _ask_kernel_for_death_signal()
    import_pyomo_lock_unregistered()
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="exit-with-parent", daemon=True).start()


def import_pyomo_lock_unregistered() -> None:
    """Import ``pyomo.common.dependencies`` under ``fork``, so the lock it makes at import is no named semaphore.

    Pyomo makes ``capture_output_lock`` a ``multiprocessing.Lock()`` at import. Under ``spawn`` that is a named
    POSIX semaphore registered with the resource tracker the child shares with the command, and a child that dies
    without its exit handlers (the watchdog's ``os._exit``, SIGKILL, a pool torn down by SIGTERM) leaves it
    registered: the tracker then reports leaked semaphores on the command's stderr. Under ``fork`` it is unlinked at
    creation (``SemLock``'s ``unlink_now``) and never registered; it still locks within this process, all Pyomo
    uses it for. The previous start method is restored at once; a process that already imported the module is
    left as it is. Cost: the import of ``pyomo.common``, which every solver child makes anyway.
    """
    if "pyomo.common.dependencies" in sys.modules:
        return
    import multiprocessing

    previous = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("fork", force=True)
    try:
        import pyomo.common.dependencies  # noqa: F401  (made here for its import-time lock)
    except ImportError:  # pragma: no cover - Pyomo is a dependency
        pass
    finally:
        multiprocessing.set_start_method(previous, force=True)


@contextlib.contextmanager
def sigterm_held():
    """Hold a SIGTERM that arrives inside the block and act on it at the end of the block.

    For starting a spawned child: between creating it and writing its start-up data to it, a parent that dies
    (a pool worker's SIGTERM is the default, immediate exit) leaves the child reading an empty pipe, and
    Python's ``spawn_main`` prints an ``EOFError`` traceback to the stderr it shares with the command, before
    any code of ours runs in it. Held, the signal takes effect right after the child has all it needs (it then
    ends with its parent, :func:`exit_with_parent`). The handler is a Python one, so it holds the signal
    whichever thread the kernel delivers it to. Outside the main thread, where no handler can be set, the block
    runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        if caught:
            os.kill(os.getpid(), signal.SIGTERM)  # now, as it would have been: the previous handler or the exit


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: every ``except KeyboardInterrupt``/``finally`` cleanup runs."""


def terminate_like_interrupt():
    """Handle SIGTERM as Ctrl-C in the main process, so the same cleanup (``finally``, executors) runs.

    Raises :class:`Terminated` (a ``KeyboardInterrupt``) so that the command line can say which signal ended
    it. Returns the previous handler (None when not called from the main thread, where Python cannot set one),
    for a caller that restores it.
    """

    def handler(signum, frame):
        raise Terminated

    if threading.current_thread() is threading.main_thread():
        return signal.signal(signal.SIGTERM, handler)
    return None


def reap_resource_tracker(wait: float = 2.0) -> None:
    """End multiprocessing's resource tracker with this process and reap it, so it is not left behind.

    The tracker is a helper process Python starts with the first spawned pool; it exits when the process that
    started it closes its pipe, which normally happens only as that process dies, so the tracker outlives it
    as an orphan (a zombie under an init that does not reap). Called as a command ends: first the finalizers
    interpreter exit would run anyway (they unlink this process's semaphores and tell the tracker, so it has
    no "leaked semaphore" to warn about), then the pipe is closed and the tracker waited for, at most ``wait``
    seconds. Only for the command's own process: a library caller's pools stay usable.
    """
    import time

    tracker_module = sys.modules.get("multiprocessing.resource_tracker")
    tracker = getattr(tracker_module, "_resource_tracker", None)
    pid, fd = getattr(tracker, "_pid", None), getattr(tracker, "_fd", None)
    if pid is None or fd is None:
        return
    from multiprocessing import util

    util._run_finalizers(0)
    with contextlib.suppress(OSError):
        os.close(fd)
    tracker._fd = None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                time.sleep(0.02)
                continue
        tracker._pid = None
        return
