"""``primaldual bench trace``'s measurements: every scheduler on whole Philly VCs, wall time and peak memory, against RRH.

**What is measured.** Each (instance, scheduler) runs in a child process of its own (``python -c``), which loads
the instance file, runs :func:`primaldual.simulation.simulator.simulate` and reports the wall seconds of that
call (``time.perf_counter``) and its peak resident memory, the child's ``ru_maxrss`` from ``getrusage``
(kernel-measured, so numpy's buffers count; read right after the run, before the child verifies the schedule
with :func:`primaldual.core.verify.verify`). ``rss_base`` is the child's ``ru_maxrss`` before the run
(interpreter, numpy, the package and the instance), so ``peak - rss_base`` is what the run itself added. A
child that exceeds ``--timeout`` is reported as such. Every figure is also given as a ratio against RRH in
the same run and on the same instance, which is what carries over to another machine.

**Growth.** On one VC (``--growth-vc``) the jobs, the slots and the servers are varied one at a time over three
sizes each: every 4th, 2nd and every job (the cluster held at the whole VC's size); slots of 4, 2 and 1 hours
(the same jobs and cluster: the horizon and every job's work in worker-slots scale together); and 1, 2 and 4
times the VC's default GPUs (the same jobs). The exponent is the least-squares slope of ``log seconds``
(and of ``log (peak - rss_base)``) against ``log size``: 1 is linear growth.

**Busiest weeks** (``--weeks``): each VC's busiest week (:func:`primaldual.traces.windows.busiest_window`, 168
hours, as ``trace busiest`` finds it) instead of the whole VC, imported as ``trace import --window`` does.

**The whole cluster** (``--cluster``): all 15 VCs of a seed merged (their records concatenated and sorted by
arrival, as :func:`primaldual.traces.convert.build_instance` does) on 500 GPUs, Gavel's Philly cluster.

Dorm is left out unless named with ``--schedulers``: it solves a MILP at every arrival and departure with a
wall-clock limit per decision (``time_limit``, 2 s), so a whole VC's run is bounded by that limit, not by
its representation.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from primaldual.core.jsonable import fields_of, jsonable
from primaldual.simulation.simulator import ReportedLookahead

LARGEST = ("11cb48", "6214e9", "ee9e8c")
GROWTH_VC = "6214e9"
QUICK_VC, QUICK_WINDOW, QUICK_TAIL = "b436b2", (200.0, 96.0), 24.0
CLUSTER_GPUS = 500
WEEK_HOURS = 168.0
DEFAULT_SCHEDULERS = ("fifo", "drf", "rrh", "rrh-nonpreemptive", "rrh-full-reward", "greedy", "oasis", "oasis-lr",
                      "oasis-p")
MEMORY = "child ru_maxrss (getrusage)"

CHILD = """
import json, resource, sys, time
from primaldual.core.files import load_instance
from primaldual.core.verify import verify
from primaldual.simulation.simulator import simulate
import primaldual.baselines.readings  # rrh-full-reward and rrh-nonpreemptive, as the command line has them
instance = load_instance(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
began = time.perf_counter()
result = simulate(instance, sys.argv[2])
seconds = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = verify(instance, result.schedule)
print(json.dumps({"seconds": seconds, "rss_kib": peak, "rss_base_kib": base, "utility": report.utility,
                  "feasible": report.feasible, "completed": len(report.completion_slots),
                  "lookahead": None if result.lookahead is None else result.lookahead.to_dict()}))
"""


#: The fields of a :class:`ChildRun` that its ``to_dict`` writes, and the ratios it adds once compared with RRH.
FIGURES = ("scheduler", "seconds", "peak_mib", "run_mib", "utility", "feasible", "completed")
RATIOS = ("seconds_vs_rrh", "peak_vs_rrh")


@dataclass(frozen=True)
class ChildRun:
    """One scheduler's child run (module docstring); ``error`` instead of the figures when it failed or ran
    over its time, and the ratios against RRH once :func:`against_rrh` set them (``compared``); ``lookahead``
    how often a scheduler that looks ahead did (None for the others)."""

    scheduler: str
    error: str | None = None
    seconds: float | None = None
    peak_mib: float | None = None
    run_mib: float | None = None
    utility: float | None = None
    feasible: bool | None = None
    completed: int | None = None
    compared: bool = False
    seconds_vs_rrh: float | None = None
    peak_vs_rrh: float | None = None
    lookahead: ReportedLookahead | None = None

    def to_dict(self) -> dict:
        if self.error is not None:
            return {"scheduler": self.scheduler, "error": self.error}
        names = FIGURES + (RATIOS if self.compared else ())
        out = {name: getattr(self, name) for name in names}
        if self.lookahead is not None:
            out["lookahead"] = self.lookahead.to_dict()
        return jsonable(out)


def measure_child(instance, scheduler: str, folder: Path, timeout: float) -> ChildRun:
    """One child run of ``scheduler`` on ``instance`` (module docstring), its instance file written in
    ``folder``."""
    from primaldual.core.files import save_instance

    path = folder / "instance.json"
    save_instance(instance, path)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(path), scheduler], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return ChildRun(scheduler, error=f"over {timeout:g} s")
    if done.returncode != 0:
        return ChildRun(scheduler, error=(done.stderr.strip().splitlines() or ["failed"])[-1])
    row = json.loads(done.stdout.strip().splitlines()[-1])
    return ChildRun(scheduler, seconds=row["seconds"], peak_mib=row["rss_kib"] / 1024,
                    run_mib=(row["rss_kib"] - row["rss_base_kib"]) / 1024, utility=row["utility"],
                    feasible=row["feasible"], completed=row["completed"],
                    lookahead=None if row.get("lookahead") is None else ReportedLookahead(**row["lookahead"]))


def against_rrh(rows: list[ChildRun]) -> list[ChildRun]:
    """``rows`` with their seconds and peak memory over RRH's (unchanged without a successful RRH row)."""
    rrh = next((r for r in rows if r.scheduler == "rrh" and r.error is None), None)
    if rrh is None:
        return rows
    return [r if r.error is not None else replace(
        r, compared=True, seconds_vs_rrh=r.seconds / rrh.seconds if rrh.seconds > 0 else None,
        peak_vs_rrh=r.peak_mib / rrh.peak_mib) for r in rows]


def _slope(sizes, values) -> float | None:
    """Least-squares slope of log value against log size (None with fewer than two positive points)."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if v is not None and v > 0 and s > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread > 0 else None


def _growth_instances(source: str, options):
    """``{dimension: [(size, instance), ...]}`` for jobs, slots and servers (module docstring)."""
    from primaldual.traces import import_trace, read_records
    from primaldual.traces.convert import build_instance
    from primaldual.traces.throughput import packaged_table

    whole = import_trace(source, options)
    gpus = whole.meta["trace"]["cluster"]["gpus"]
    records, found = read_records(source, options)
    fixed = replace(options, gpus=gpus)
    jobs = [build_instance(records[::k], fixed, packaged_table(), source=found.name, format=found.format,
                           seed=found.seed, vc=found.vc) for k in (4, 2, 1)]
    slots = [import_trace(source, replace(fixed, slot_hours=h)) for h in (4.0, 2.0, 1.0)]
    servers = [import_trace(source, replace(options, gpus=gpus * m)) for m in (1, 2, 4)]
    return {"jobs": [(i.n_jobs, i) for i in jobs], "slots": [(i.horizon, i) for i in slots],
            "servers": [(i.cluster.n_worker_servers + i.cluster.n_ps_servers, i) for i in servers]}


def whole_cluster(seed: int):
    """All 15 VCs of trace seed ``seed`` merged into one instance on :data:`CLUSTER_GPUS` GPUs."""
    from primaldual.traces import TraceOptions, packaged_vcs, read_records
    from primaldual.traces.convert import build_instance
    from primaldual.traces.throughput import packaged_table

    records = [r for vc in packaged_vcs(seed) for r in read_records(f"philly:{seed}/{vc}")[0]]
    return build_instance(records, TraceOptions(gpus=CLUSTER_GPUS), packaged_table(), source=f"philly:{seed}/*",
                          format="gavel", seed=seed)


@dataclass(frozen=True)
class Described:
    """An instance's name and size."""

    name: str
    jobs: int
    slots: int
    worker_servers: int
    ps_servers: int


def _describe(name: str, instance) -> Described:
    return Described(name, instance.n_jobs, instance.horizon, instance.cluster.n_worker_servers,
                     instance.cluster.n_ps_servers)


@dataclass(frozen=True)
class WholeRuns:
    """Every scheduler on one whole instance."""

    instance: Described
    rows: list[ChildRun]


@dataclass(frozen=True)
class Exponents:
    """Measured growth exponents of seconds and of the run's memory (None: fewer than two points)."""

    seconds: float | None
    memory: float | None


@dataclass(frozen=True)
class Growth:
    """One dimension of the growth table: its sizes, each scheduler's exponents and runs."""

    sizes: list[int]
    exponents: dict[str, Exponents]
    runs: dict[str, list[ChildRun]]


@dataclass(frozen=True)
class TraceBench:
    """``bench trace``: the whole instances and the growth table by dimension (jobs, slots, servers)."""

    seed: int
    quick: bool
    memory: str
    whole: list[WholeRuns]
    growth: dict[str, Growth]

    def to_dict(self) -> dict:
        return jsonable(fields_of(self))


def _grow(sized, schedulers, measure) -> Growth:
    runs = {s: [measure(i, s) for _, i in sized] for s in schedulers}
    sizes = [size for size, _ in sized]
    return Growth(sizes, {s: Exponents(_slope(sizes, [r.seconds for r in rows]), _slope(sizes, [r.run_mib for r in rows]))
                          for s, rows in runs.items()}, runs)


def busiest_week(source: str):
    """``source``'s busiest week (module docstring), as ``trace import --window`` imports it, and its name."""
    from primaldual.traces import TraceOptions, import_trace, read_records
    from primaldual.traces.throughput import packaged_table
    from primaldual.traces.windows import busiest_window

    records, found = read_records(source, TraceOptions())
    window = busiest_window(records, packaged_table(), WEEK_HOURS, source=found.name)
    return f"{source} week {window.flag}", import_trace(source, TraceOptions(window=(window.start_hour, window.hours)))


def run_trace_bench(seed: int, vcs, growth_vc: str, schedulers, growing, cluster: bool = False,
                    timeout: float = 900.0, quick: bool = False,
                    progress: Callable[[object, ChildRun], None] | None = None, weeks: bool = False) -> TraceBench:
    """Every scheduler of ``schedulers`` on each VC of ``vcs`` (each VC's busiest week when ``weeks``; and the
    whole cluster when ``cluster``), and those of ``growing`` on the growth instances of ``growth_vc``;
    ``quick``: a window of :data:`QUICK_VC` instead. ``progress`` is called with each instance and child run."""
    from primaldual.traces import TraceOptions, import_trace

    options = TraceOptions(window=QUICK_WINDOW, tail_hours=QUICK_TAIL) if quick else TraceOptions()
    vcs, growth_vc = ([QUICK_VC], QUICK_VC) if quick else (list(vcs), growth_vc)
    whole, growth = [], {}
    with tempfile.TemporaryDirectory() as folder:
        def measure(instance, scheduler):
            row = measure_child(instance, scheduler, Path(folder), timeout)
            if progress is not None:
                progress(instance, row)
            return row

        named = [busiest_week(f"philly:{seed}/{vc}") if weeks and not quick
                 else (f"philly:{seed}/{vc}", import_trace(f"philly:{seed}/{vc}", options)) for vc in vcs]
        if cluster and not quick:
            named.append((f"philly:{seed}/* merged", whole_cluster(seed)))
        for name, instance in named:
            whole.append(WholeRuns(_describe(name, instance), against_rrh([measure(instance, s) for s in schedulers])))
        for dimension, sized in _growth_instances(f"philly:{seed}/{growth_vc}", options).items():
            growth[dimension] = _grow(sized, growing, measure)
    return TraceBench(seed, quick, MEMORY, whole, growth)


def _number(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _looked(lookahead: ReportedLookahead | None) -> str:
    return "-" if lookahead is None else f"{lookahead.rolled_out} of {lookahead.decisions} batches"


def format_trace_bench(result: TraceBench) -> str:
    """The tables of ``bench trace``."""
    lines = [f"bench trace (seed {result.seed}{', quick' if result.quick else ''}); memory: "
             f"{result.memory}, seconds: the simulate() call"]
    for block in result.whole:
        d = block.instance
        lines += ["", f"{d.name}: {d.jobs} jobs x {d.slots} slots x {d.worker_servers}+{d.ps_servers} servers",
                  f"{'scheduler':<18} {'seconds':>8} {'peak MiB':>9} {'run MiB':>8} {'s/RRH':>6} {'mem/RRH':>7} "
                  f"{'utility':>11} feasible  looked ahead"]
        for r in block.rows:
            if r.error is not None:
                lines.append(f"{r.scheduler:<18} {r.error}")
                continue
            lines.append(f"{r.scheduler:<18} {r.seconds:>8.1f} {r.peak_mib:>9.0f} {r.run_mib:>8.0f} "
                         f"{_number(r.seconds_vs_rrh, '.2f'):>6} {_number(r.peak_vs_rrh, '.2f'):>7} "
                         f"{r.utility:>11.1f} {str(r.feasible):<8}  {_looked(r.lookahead)}")
    if result.growth:
        dims = list(result.growth)
        sizes = "; ".join(f"{d} {result.growth[d].sizes}" for d in dims)
        lines += ["", f"growth exponents, seconds (memory), sizes: {sizes}",
                  f"{'scheduler':<18} " + " ".join(f"{d:>13}" for d in dims)]
        for s in next(iter(result.growth.values())).exponents:
            cells = [result.growth[d].exponents[s] for d in dims]
            lines.append(f"{s:<18} " + " ".join(f"{_number(c.seconds, '.2f'):>6} ({_number(c.memory, '.2f')})"
                                                  .rjust(13) for c in cells))
    return "\n".join(lines)


__all__ = ["CHILD", "ChildRun", "DEFAULT_SCHEDULERS", "Exponents", "Growth", "TraceBench", "WholeRuns",
           "against_rrh", "format_trace_bench", "measure_child", "run_trace_bench", "whole_cluster"]
