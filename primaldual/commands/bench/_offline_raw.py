"""``primaldual bench offline --against-raw``: the package's ILP path against plain ``highspy`` on its own model.

Per instance, in the same run and one after the other (the order alternates between instances, so that a
change of the machine's load does not favour one side):

* **the package**: what ``primaldual solve I --time-limit B --json`` does (the online seeds, then
  :func:`primaldual.offline.solve.solve_offline` with the command's defaults), timed from before the seeds;
  its trace (:mod:`primaldual.offline.trace`) holds every incumbent and bound of the solve, with the
  building, the child process and every phase counted;
* **plain highspy**: the model ``primaldual solve I --write-mps m.mps`` writes, read by ``highspy`` in a fresh
  process (``Highs.readModel`` counted) and solved with the package's default relative gap (so that it does
  not stop at HiGHS's coarser default before the package does) and HiGHS's own defaults otherwise, with the
  same trace.

Reported: per gap level, the seconds each side first reaches it and their ratio (package / raw; at most
:data:`TARGET_RATIO` is the target), and the gap each side has at fractions of the budget. The machine may be
shared: seconds are wall-clock, and only the same-run ratios mean something across machines.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from primaldual.offline.trace import gap_at, record_progress, time_to_gap

#: Relative gaps at which the time to reach them is reported.
GAPS = (1e-1, 1e-2, 1e-3, 1e-4)

#: Fractions of the budget at which the gap is reported.
FRACTIONS = (0.25, 0.5, 1.0)

#: The package reaches every gap no later than this many times plain highspy.
TARGET_RATIO = 1.1


def raw_highspy(path: str, time_limit: float, mip_gap: float) -> dict:  # runs in a fresh process
    """Read ``path`` with highspy and solve it within ``time_limit`` seconds (reading included); the trace and
    the final status, incumbent and bound."""
    from primaldual.backends.highs import quiet_highs  # highspy alone: that module imports no Pyomo

    origin = time.time()
    highs = quiet_highs()  # HiGHS's banner would go to this process's stdout, the command's --json output
    highs.readModel(path)
    highs.setOptionValue("time_limit", max(1e-3, time_limit - (time.time() - origin)))
    highs.setOptionValue("mip_rel_gap", mip_gap)
    trace: list = []
    record_progress(highs, trace, origin)
    highs.run()
    info = highs.getInfo()
    status = highs.modelStatusToString(highs.getModelStatus())
    incumbent = float(info.objective_function_value) if info.primal_solution_status == 2 else None
    bound = float(info.mip_dual_bound) if abs(info.mip_dual_bound) < float("inf") else None
    trace.append((time.time() - origin, incumbent, bound))
    return {"status": status, "objective": incumbent, "bound": bound, "seconds": time.time() - origin,
            "trace": trace}


def package_solve(instance, budget: float, changes: dict | None = None) -> dict:
    """``primaldual solve I --time-limit budget`` (with ``changes`` to its :class:`SolveOptions`, for an
    ablation), timed from before its online seeds: the trace and the final status, incumbent and bound."""
    from primaldual.evaluation.seeds import solve_seeds
    from primaldual.offline.options import SolveOptions
    from primaldual.offline.solve import solve_offline

    origin = time.time()
    options = SolveOptions(time_limit=budget, threads=None).replace(**(changes or {}))
    seeds = solve_seeds(instance, options, None)
    called = time.time() - origin
    result = solve_offline(instance, options, seeds=seeds)
    trace = [(called + seconds, incumbent, bound) for seconds, incumbent, bound in result.details.get("trace", [])]
    trace.append((time.time() - origin, result.objective, result.bound))
    return {"status": result.status, "objective": result.objective, "bound": result.bound,
            "seconds": time.time() - origin, "seeds_seconds": called, "method": result.method,
            "builder": result.details.get("builder"), "trace": trace}


def raw_solve(instance, budget: float, mip_gap: float) -> dict:
    """Plain highspy on the model ``primaldual solve I --write-mps`` writes, in a fresh process."""
    from primaldual.offline.export import write_model

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.mps")
        write_model(instance, path)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            return pool.submit(raw_highspy, path, budget, mip_gap).result()


def _ratio(package, raw):
    if package is None or raw is None:
        return None
    return package / max(raw, 1e-9)


def compare_instance(label: str, instance, budget: float, package_first: bool) -> dict:
    """One row: both sides on ``instance``, their times to each gap of :data:`GAPS` and gaps at
    :data:`FRACTIONS` of the budget."""
    from primaldual.offline.solve import DEFAULT_HIGHS_GAP

    load_before = os.getloadavg()[0]
    sides = {}
    for side in (("package", "raw") if package_first else ("raw", "package")):
        sides[side] = package_solve(instance, budget) if side == "package" else raw_solve(instance, budget, DEFAULT_HIGHS_GAP)
    package, raw = sides["package"], sides["raw"]
    times = []
    for gap in GAPS:
        ours, theirs = time_to_gap(package["trace"], gap), time_to_gap(raw["trace"], gap)
        times.append({"gap": gap, "package_seconds": ours, "raw_seconds": theirs, "ratio": _ratio(ours, theirs),
                      # Met: the package reached it no later than TARGET_RATIO x raw, or raw never did.
                      "met": theirs is None or (ours is not None and ours <= TARGET_RATIO * theirs)})
    gaps = [{"seconds": fraction * budget, "package_gap": _finite(gap_at(package["trace"], fraction * budget)),
             "raw_gap": _finite(gap_at(raw["trace"], fraction * budget))} for fraction in FRACTIONS]
    return {"instance": label, "package": {k: v for k, v in package.items() if k != "trace"},
            "raw": {k: v for k, v in raw.items() if k != "trace"}, "time_to_gap": times, "gap_at": gaps,
            "met": all(row["met"] for row in times), "load_average": [load_before, os.getloadavg()[0]],
            "package_trace": package["trace"], "raw_trace": raw["trace"]}


def _finite(value: float):
    return None if value == float("inf") else value


def print_rows(rows: list[dict], budget: float) -> None:
    """The table of ``bench offline --against-raw``."""
    def cell(value, digits=2):
        return "-" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))

    print(f"package (primaldual solve --time-limit {budget:g}) vs plain highspy on --write-mps output; "
          f"seconds to reach each gap, ratio package/raw (target <= {TARGET_RATIO:g})")
    header = ["instance", "pkg status", "raw status"] + [f"t({g:g}) p/r" for g in GAPS] + [
        f"gap@{f:g}B p/r" for f in FRACTIONS] + ["load"]
    print("  ".join(f"{h:>16}" for h in header))
    for row in rows:
        cells = [row["instance"], row["package"]["status"], row["raw"]["status"]]
        cells += [f"{cell(t['package_seconds'], 1)}/{cell(t['raw_seconds'], 1)}={cell(t['ratio'])}"
                  for t in row["time_to_gap"]]
        cells += [f"{cell(g['package_gap'], 4)}/{cell(g['raw_gap'], 4)}" for g in row["gap_at"]]
        cells.append(f"{row['load_average'][0]:.1f}")
        print("  ".join(f"{str(c):>16}" for c in cells))
    met = sum(row["met"] for row in rows)
    print(f"package no later than {TARGET_RATIO:g}x raw at every gap: {met} of {len(rows)} instances")


__all__ = ["FRACTIONS", "GAPS", "TARGET_RATIO", "compare_instance", "package_solve", "print_rows", "raw_highspy",
           "raw_solve"]
