"""``primaldual bench offline --against-raw``'s measurements: the package's ILP path against plain ``highspy`` on its own model.

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
from dataclasses import dataclass, fields

from primaldual.core.jsonable import jsonable
from primaldual.offline.trace import gap_at, record_progress, time_to_gap

#: Relative gaps at which the time to reach them is reported.
GAPS = (1e-1, 1e-2, 1e-3, 1e-4)

#: Fractions of the budget at which the gap is reported.
FRACTIONS = (0.25, 0.5, 1.0)

#: The package reaches every gap no later than this many times plain highspy.
TARGET_RATIO = 1.1


@dataclass(frozen=True)
class RawRun:
    """Plain highspy's solve: final status, incumbent and bound, seconds, and the trace
    ``[(seconds, incumbent, bound), ...]``."""

    status: str
    objective: float | None
    bound: float | None
    seconds: float
    trace: list

    def to_dict(self) -> dict:
        return jsonable({f.name: getattr(self, f.name) for f in fields(self) if f.name != "trace"})


@dataclass(frozen=True)
class PackageRun:
    """The package's solve, as :class:`RawRun`, with the seconds of its online seeds, its method and builder."""

    status: str
    objective: float | None
    bound: float | None
    seconds: float
    seeds_seconds: float
    method: str
    builder: str | None
    trace: list

    def to_dict(self) -> dict:
        return jsonable({f.name: getattr(self, f.name) for f in fields(self) if f.name != "trace"})


def raw_highspy(path: str, time_limit: float, mip_gap: float) -> RawRun:  # runs in a fresh process
    """Read ``path`` with highspy and solve it within ``time_limit`` seconds (reading included)."""
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
    return RawRun(status, incumbent, bound, time.time() - origin, trace)


def package_solve(instance, budget: float, changes: dict | None = None) -> PackageRun:
    """``primaldual solve I --time-limit budget`` (with ``changes`` to its :class:`SolveOptions`, for an
    ablation), timed from before its online seeds."""
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
    return PackageRun(result.status, result.objective, result.bound, time.time() - origin, called, result.method,
                      result.details.get("builder"), trace)


def raw_solve(instance, budget: float, mip_gap: float) -> RawRun:
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


@dataclass(frozen=True)
class GapTime:
    """Seconds each side first reaches ``gap``, their ratio, and whether the package met its target."""

    gap: float
    package_seconds: float | None
    raw_seconds: float | None
    ratio: float | None
    met: bool


@dataclass(frozen=True)
class GapAt:
    """The gap each side has ``seconds`` into the solve (None: no finite gap yet)."""

    seconds: float
    package_gap: float | None
    raw_gap: float | None


@dataclass(frozen=True)
class RawComparison:
    """One instance: both sides, their times to each gap of :data:`GAPS`, gaps at :data:`FRACTIONS` of the
    budget, whether every gap was met, and the load average before and after."""

    instance: str
    package: PackageRun
    raw: RawRun
    time_to_gap: tuple[GapTime, ...]
    gap_at: tuple[GapAt, ...]
    met: bool
    load_average: tuple[float, float]

    def to_dict(self) -> dict:
        return jsonable({"instance": self.instance, "package": self.package, "raw": self.raw,
                         "time_to_gap": self.time_to_gap, "gap_at": self.gap_at, "met": self.met,
                         "load_average": self.load_average, "package_trace": self.package.trace,
                         "raw_trace": self.raw.trace})


def compare_instance(label: str, instance, budget: float, package_first: bool) -> RawComparison:
    """Both sides on ``instance``, one after the other (``package_first``: the package first)."""
    from primaldual.offline.solve import DEFAULT_HIGHS_GAP

    load_before = os.getloadavg()[0]
    sides = {}
    for side in (("package", "raw") if package_first else ("raw", "package")):
        sides[side] = package_solve(instance, budget) if side == "package" else raw_solve(instance, budget, DEFAULT_HIGHS_GAP)
    package, raw = sides["package"], sides["raw"]
    times = []
    for gap in GAPS:
        ours, theirs = time_to_gap(package.trace, gap), time_to_gap(raw.trace, gap)
        # Met: the package reached it no later than TARGET_RATIO x raw, or raw never did.
        times.append(GapTime(gap, ours, theirs, _ratio(ours, theirs),
                             theirs is None or (ours is not None and ours <= TARGET_RATIO * theirs)))
    gaps = tuple(GapAt(fraction * budget, _finite(gap_at(package.trace, fraction * budget)),
                       _finite(gap_at(raw.trace, fraction * budget))) for fraction in FRACTIONS)
    return RawComparison(label, package, raw, tuple(times), gaps, all(t.met for t in times),
                         (load_before, os.getloadavg()[0]))


def _finite(value: float):
    return None if value == float("inf") else value


@dataclass(frozen=True)
class AgainstRaw:
    """``bench offline --against-raw``: one comparison per instance, and how many met the target."""

    budget_seconds: float
    rows: tuple[RawComparison, ...]
    solver_version: str | None

    def to_dict(self) -> dict:
        return {"benchmark": "offline --against-raw", "budget_seconds": self.budget_seconds,
                "rows": [row.to_dict() for row in self.rows], "solver_version": self.solver_version,
                "met": sum(row.met for row in self.rows)}


def against_raw(instances, budget: float, progress=None) -> AgainstRaw:
    """:func:`compare_instance` on each ``(label, instance)`` of ``instances``, the order of the sides
    alternating; ``progress`` is called with each comparison."""
    from primaldual.backends.solvers import solver_version

    rows = []
    for k, (label, instance) in enumerate(instances):
        rows.append(compare_instance(label, instance, budget, package_first=k % 2 == 0))
        if progress is not None:
            progress(rows[-1])
    return AgainstRaw(budget, tuple(rows), solver_version("highs"))


def format_against_raw(result: AgainstRaw) -> str:
    """The table of ``bench offline --against-raw``."""
    def cell(value, digits=2):
        return "-" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))

    budget, rows = result.budget_seconds, result.rows
    header = ["instance", "pkg status", "raw status"] + [f"t({g:g}) p/r" for g in GAPS] + [
        f"gap@{f:g}B p/r" for f in FRACTIONS] + ["load"]
    lines = [f"package (primaldual solve --time-limit {budget:g}) vs plain highspy on --write-mps output; "
             f"seconds to reach each gap, ratio package/raw (target <= {TARGET_RATIO:g})",
             "  ".join(f"{h:>16}" for h in header)]
    for row in rows:
        cells = [row.instance, row.package.status, row.raw.status]
        cells += [f"{cell(t.package_seconds, 1)}/{cell(t.raw_seconds, 1)}={cell(t.ratio)}" for t in row.time_to_gap]
        cells += [f"{cell(g.package_gap, 4)}/{cell(g.raw_gap, 4)}" for g in row.gap_at]
        cells.append(f"{row.load_average[0]:.1f}")
        lines.append("  ".join(f"{str(c):>16}" for c in cells))
    lines.append(f"package no later than {TARGET_RATIO:g}x raw at every gap: {sum(row.met for row in rows)} of "
                 f"{len(rows)} instances")
    return "\n".join(lines)


__all__ = ["FRACTIONS", "GAPS", "TARGET_RATIO", "AgainstRaw", "GapAt", "GapTime", "PackageRun", "RawComparison",
           "RawRun", "against_raw", "compare_instance", "format_against_raw", "package_solve", "raw_highspy",
           "raw_solve"]
