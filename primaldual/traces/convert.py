"""Trace records to an :class:`Instance`: the method, every assumption a named field of :class:`TraceOptions`.

1. **Window** ``[start, start + hours)`` in hours (``window``; default the whole trace, ``[0, h)`` with ``h``
   the first whole hour after the last arrival). Jobs arriving outside are left out (counted in meta).
   **Slots** of ``slot_hours`` (default 1); job ``i``'s arrival slot is ``a_i = floor((arrival - start) /
   slot)``; the horizon is ``T = ceil((hours + tail_hours) / slot_hours)`` (``tail_hours`` default 0).
2. **Running time** ``R_i`` at the requested scale ``g_i`` GPUs: ``steps / throughput(g_i)`` (measured V100
   throughput, extrapolated as :mod:`primaldual.traces.throughput` says) or the CSV's ``duration_seconds``.
3. **Cluster**: 8-GPU worker servers (:mod:`primaldual.traces.profiles`), as many as ``gpus / 8`` (rounded up;
   a last partial server holds the remainder, its other resources in proportion) if ``gpus`` is given, else the
   fewest at which the window's mean GPU load ``L`` (:func:`mean_gpu_load`: busy GPUs if every job ran alone
   from its arrival, clipped to the window) is at most ``target_load`` (default 0.8) of the GPUs; as many PS servers (``ps_servers`` to override).
4. **Workers = GPUs**: ``N_i = g_i``; a job wider than the cluster's GPUs ``C`` is capped to ``N_i = C``
   (``oversize="cap"``, default; its work is unchanged, so it runs ``g_i / C`` times longer) or dropped
   (``oversize="drop"``).
5. **Work**: ``E_i = 1``, ``M_i = steps`` (one mini-batch per GPU per step; 1 for a duration-only job) and
   ``tau_i = R_i g_i / (N_i M_i)`` with no separate gradient traffic (``e_i = 0``: the measured step time
   already includes it), so ``W_i = N_i M_i tau_i / slot = g_i R_i / slot`` worker-slots: the GPU-time of the
   trace. Alone at ``N_i = g_i`` workers the job finishes in ``ceil(V_i / N_i) = ceil(R_i / slot)`` slots.
6. **Demands and PSs** from the model family (:mod:`primaldual.traces.profiles`); **utility** by the rule of
   :mod:`primaldual.traces.utility_rules`.
7. **Jobs that cannot finish alone by the horizon** (``a_i + ceil(V_i/N_i) > T``) are dropped
   (``outlasting="drop"``, default: they earn nothing in the model either) or kept (``"keep"``). Jobs whose work
   exceeds the package's finite ranges (docs/input-ranges.md) are dropped. Every drop and cap is counted in
   ``meta["trace"]["counts"]`` and said in ``meta["trace"]["notes"]`` (the command prints the notes on stderr).

**GPU types** (``gpu_types``, ``--gpu-types v100:5,p100:5,k80:5``; :mod:`primaldual.core.gpu_types`): that many
8-GPU worker servers of each type (instead of ``gpus``); each job's running time ``R_i^g`` on each type from that
type's measured throughput (same extrapolation), ``tau_i^g = R_i^g g_i / (N_i M_i)``, and ``R_i`` in steps 2-7 is
its fastest type's (``min_g R_i^g``, so ``tau_i = min_g tau_i^g`` as the format requires). A job with no
throughput on a listed type, or a CSV job given only by ``duration_seconds``, is refused naming its line.

The conversion draws no random numbers: the same trace and options give the same instance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from primaldual.core.domains import JOB_FIELDS, MAX_HORIZON, MAX_SERVERS, MAX_WORK_CELLS, UTILITY_FIELDS
from primaldual.core.errors import InputError
from primaldual.core.gpu_types import check_type_counts
from primaldual.core.numerals import echo
from primaldual.core.instance import Cluster, Instance, Job, ceil_tolerant
from primaldual.core.plural import by_count
from primaldual.traces import profiles
from primaldual.traces.records import TraceJob
from primaldual.traces.throughput import DEFAULT_SCALING_EFFICIENCY, ThroughputTable, family, packaged_tables
from primaldual.traces.utility_rules import UtilityRule


@dataclass(frozen=True)
class TraceOptions:
    """Every assumption of the conversion (module docstring), with its default."""

    format: str | None = None
    slot_hours: float = 1.0
    window: tuple[float, float] | None = None
    tail_hours: float = 0.0
    gpus: int | None = None
    ps_servers: int | None = None
    target_load: float = 0.8
    utility: UtilityRule = field(default_factory=UtilityRule)
    scaling_efficiency: float = DEFAULT_SCALING_EFFICIENCY
    outlasting: str = "drop"
    oversize: str = "cap"
    seed: int | None = None
    gpu_types: tuple[tuple[str, int], ...] | None = None

    def check(self) -> None:
        problems = []
        if self.gpu_types is not None:
            check_type_counts(self.gpu_types, "--gpu-types")
            if self.gpus is not None:
                problems.append("--gpu-types: gives the 8-GPU servers per type; leave out --gpus")
            elif sum(count for _, count in self.gpu_types) > MAX_SERVERS:
                problems.append(f"--gpu-types: more than {MAX_SERVERS} worker servers in all")
        if not (math.isfinite(self.slot_hours) and 1e-3 <= self.slot_hours <= 1e4):
            problems.append(f"--slot-hours: must be a number in [0.001, 10000], got {self.slot_hours}")
        if self.window is not None:
            start, hours = self.window
            if not (math.isfinite(start) and math.isfinite(hours) and 0 <= start <= 1e6 and 0 < hours <= 1e6):
                problems.append(f"--window: START must be in [0, 1e6] and HOURS in (0, 1e6], got {start}:{hours}")
        if not (math.isfinite(self.tail_hours) and 0 <= self.tail_hours <= 1e6):
            problems.append(f"--tail-hours: must be a number in [0, 1e6], got {self.tail_hours}")
        for flag, value in (("--gpus", self.gpus), ("--ps-servers", self.ps_servers)):
            if value is not None and not 1 <= value <= MAX_SERVERS * (profiles.GPUS_PER_SERVER if flag == "--gpus"
                                                                      else 1):
                problems.append(f"{flag}: out of range, got {value}")
        if not (math.isfinite(self.target_load) and 0.01 <= self.target_load <= 100):
            problems.append(f"--target-load: must be a number in [0.01, 100], got {self.target_load}")
        if not (math.isfinite(self.scaling_efficiency) and 0.01 <= self.scaling_efficiency <= 1):
            problems.append(f"--scaling-efficiency: must be a number in [0.01, 1], got {self.scaling_efficiency}")
        if self.outlasting not in ("drop", "keep"):
            problems.append(f"--outlasting: must be drop or keep, got {self.outlasting!r}")
        if self.oversize not in ("cap", "drop"):
            problems.append(f"--oversize: must be cap or drop, got {self.oversize!r}")
        if problems:
            raise InputError(problems)


@dataclass(frozen=True)
class Timed:
    """A record with its running time ``R`` at its requested scale (seconds) and whether that was extrapolated."""

    record: TraceJob
    running_seconds: float
    extrapolated: bool
    #: ``(type, R_i^g)`` per GPU type under ``--gpu-types`` (``running_seconds`` is then the least), else None.
    running_by_type: tuple[tuple[str, float], ...] | None = None


def running_times(records, table: ThroughputTable, efficiency: float, source: str) -> list[Timed]:
    """Step 2 of the module docstring, per record; an unknown job type is refused naming its line."""
    out = []
    for record in records:
        if record.duration_seconds is not None:
            out.append(Timed(record, float(record.duration_seconds), False))
            continue
        if not table.measured(record.model):
            raise InputError(f"{source}:{record.line}: job_type: {echo(record.model)} is not in the throughput table "
                             f"({table.gpu_type}); give duration_seconds in a CSV instead")
        rate, extrapolated = table.throughput(record.model, record.gpus, efficiency)
        out.append(Timed(record, record.steps / rate, extrapolated))
    return out


def typed_running_times(records, tables: dict[str, ThroughputTable], options: TraceOptions,
                        source: str) -> list[Timed]:
    """Step 2 on every type of ``--gpu-types``: ``R_i^g`` per type, ``R_i`` the least; one line naming the first
    record with no throughput on a listed type (or with a duration only, which gives one type's time)."""
    out = []
    for record in records:
        if record.duration_seconds is not None:
            raise InputError(f"{source}:{record.line}: duration_seconds: one running time, not one per GPU type; "
                             "--gpu-types needs a job_type of Gavel's throughput table")
        times, extrapolated = [], False
        for gpu_type, _ in options.gpu_types:
            table = tables[gpu_type]
            if not table.measured(record.model):
                raise InputError(f"{source}:{record.line}: job_type: {echo(record.model)} has no throughput on "
                                 f"{gpu_type} in Gavel's table; leave {gpu_type} out of --gpu-types")
            rate, guessed = table.throughput(record.model, record.gpus, options.scaling_efficiency)
            times.append((gpu_type, record.steps / rate))
            extrapolated |= guessed
        out.append(Timed(record, min(seconds for _, seconds in times), extrapolated, tuple(times)))
    return out


def window_of(records, options: TraceOptions) -> tuple[float, float]:
    """``(start_hour, hours)``: the option, or the whole trace ``[0, floor(last arrival h) + 1)``."""
    if options.window is not None:
        return float(options.window[0]), float(options.window[1])
    last = max((r.arrival_seconds for r in records), default=0.0)
    return 0.0, float(math.floor(last / 3600.0) + 1)


def mean_gpu_load(timed: list[Timed], start_hour: float, hours: float) -> float:
    """``L``: mean busy GPUs over the window if every job ran alone from its arrival at its requested scale,
    ``sum_i g_i |[arrival_i, arrival_i + R_i) & window| / window length`` (work past the window's end is not
    counted: a week window of month-long jobs asks for a week's GPUs, not a month's)."""
    start, end = start_hour * 3600.0, (start_hour + hours) * 3600.0
    busy = sum(t.record.gpus * max(0.0, min(t.record.arrival_seconds + t.running_seconds, end)
                                   - max(t.record.arrival_seconds, start)) for t in timed)
    return busy / (end - start)


def cluster_for(timed: list[Timed], window: tuple[float, float], options: TraceOptions,
                source: str = "trace") -> tuple[Cluster, dict]:
    """Step 3: the servers and how their number was chosen."""
    mean_load = mean_gpu_load(timed, *window)
    per_server = profiles.GPUS_PER_SERVER
    if options.gpu_types is not None:
        gpus, rule = sum(count for _, count in options.gpu_types) * per_server, "--gpu-types"
    elif options.gpus is not None:
        gpus, rule = int(options.gpus), "--gpus"
    else:
        servers = max(1, math.ceil(mean_load / (options.target_load * per_server) - 1e-9))
        gpus, rule = servers * per_server, f"fewest 8-GPU servers with mean GPU load <= {options.target_load:g}"
    n_servers = -(-gpus // per_server)
    if n_servers > MAX_SERVERS and options.gpus is None:  # the jobs, not a flag, ask for too many servers
        widest = max(timed, key=lambda t: t.record.gpus).record
        raise InputError(f"{source}:{widest.line}: gpus: the window's jobs keep {mean_load:.4g} GPUs busy on average "
                         f"(the widest {widest.gpus} GPUs, this line): {n_servers} servers at --target-load "
                         f"{options.target_load:g}, more than {MAX_SERVERS}; give --gpus (wider jobs are capped)")
    if n_servers > MAX_SERVERS:
        raise InputError(f"--gpus: {n_servers} servers exceed {MAX_SERVERS}; give a smaller --gpus")
    full = np.array([profiles.WORKER_SERVER[r] for r in profiles.RESOURCES])
    workers = np.tile(full, (n_servers, 1))
    remainder = gpus - (n_servers - 1) * per_server
    workers[-1] = full * remainder / per_server
    n_ps = options.ps_servers or n_servers
    ps = np.tile([profiles.PS_SERVER[r] for r in profiles.RESOURCES], (n_ps, 1))
    facts = {"gpus": gpus, "worker_servers": n_servers, "ps_servers": n_ps, "rule": rule,
             "mean_gpu_load": round(mean_load, 6), "load_fraction": round(mean_load / gpus, 6)}
    if options.gpu_types is None:
        return Cluster(profiles.RESOURCES, workers, ps), facts
    facts["gpu_types"] = dict(options.gpu_types)
    worker_types = [gpu_type for gpu_type, count in options.gpu_types for _ in range(count)]
    return Cluster(profiles.RESOURCES, workers, ps, worker_types), facts


def _job(t: Timed, arrival: int, chunks: int, slot_seconds: float, rule: UtilityRule, where: str) -> tuple[Job, int]:
    """Steps 4-6 for one job; returns it and its work units ``V_i``."""
    record = t.record
    minibatches = record.steps if record.steps is not None and record.duration_seconds is None else 1
    compute = t.running_seconds * record.gpus / (chunks * minibatches)
    # Per type the same expression, monotone in R: the least is ``compute`` exactly.
    by_type = None if t.running_by_type is None else \
        {gpu_type: seconds * record.gpus / (chunks * minibatches) for gpu_type, seconds in t.running_by_type}
    units = max(ceil_tolerant(chunks * minibatches * compute / slot_seconds), 1)
    shortest = -(-units // chunks)
    deadline = None
    if record.deadline_seconds is not None:
        deadline = max(0, math.floor(record.deadline_seconds / slot_seconds + 1e-9) - 1)
    if record.value is not None:
        weight = float(record.value)
    else:
        weight = rule.value_per_gpu_hour * record.gpus * t.running_seconds / 3600.0 * record.priority_weight
    if not UTILITY_FIELDS["sigmoid"]["gamma1"].contains(weight):
        raise InputError(f"{where}: value: the utility weight {weight:.4g} is out of range [0, 1e12]")
    profile = profiles.profile_of(family(record.model))
    job = Job(arrival=arrival, epochs=1, chunks=chunks, minibatches_per_chunk=int(minibatches),
              compute_seconds=compute, gradient_mb=0.0, worker_bandwidth_gbps=profile.bandwidth,
              ps_bandwidth_gbps=profiles.PS_BANDWIDTH_GBPS, worker_demand=profile.worker_demand(),
              ps_demand=profile.ps_demand(), utility=rule.build(weight, shortest, deadline),
              name=f"{record.name}:{record.model}" if record.model else record.name, compute_seconds_by_type=by_type)
    return job, units


#: One note per nonzero count, in this order: (count key, message). ``[plural|singular]`` picks the word by the
#: count (:func:`primaldual.core.plural.by_count`), so that 1 job reads "1 job arrives", not "1 jobs arrive";
#: ``{gpus}`` and ``{efficiency}`` are filled in.
NOTES = (
    ("outside_window", "[jobs arrive|job arrives] outside the window and [are|is] left out"),
    ("capped", "[jobs ask|job asks] for more than the cluster's {gpus} GPUs: workers capped to {gpus} (same work, "
               "longer running time)"),
    ("dropped_oversize", "[jobs ask|job asks] for more than the cluster's {gpus} GPUs: dropped (--oversize drop)"),
    ("dropped_outlasting", "[jobs|job] cannot finish by the horizon even alone: dropped (--outlasting keep keeps "
                           "[them|it]; add --tail-hours to give [them|it] time)"),
    ("kept_outlasting", "[jobs|job] cannot finish by the horizon even alone: kept ([they earn|it earns] nothing)"),
    ("dropped_too_large", "[jobs have|job has] more work than the package's ranges allow (docs/input-ranges.md): "
                          "dropped"),
    ("extrapolated", "[jobs run|job runs] at a GPU count not measured: throughput extrapolated with efficiency "
                     "{efficiency}"),
)


def _counts_and_notes(counts: dict, options: TraceOptions, cluster_gpus: int) -> list[str]:
    """One line per cap or drop (never silent), for meta and stderr: :data:`NOTES` for every nonzero count."""
    notes = []
    for key, message in NOTES:
        count = counts[key]
        if count:
            text = by_count(count, message)
            notes.append(f"{count} " + text.format(gpus=cluster_gpus, efficiency=f"{options.scaling_efficiency:g}"))
    return notes


def _slot_jobs(timed, start_seconds, slot_seconds, horizon, cluster_gpus, options, source):
    """Steps 4-7 over the window's jobs: the kept jobs, in arrival order, and the counts."""
    counts = dict.fromkeys(("capped", "dropped_oversize", "dropped_outlasting", "kept_outlasting",
                            "dropped_too_large", "extrapolated"), 0)
    jobs = []
    for t in timed:
        record = t.record
        chunks = record.gpus
        if chunks > cluster_gpus:
            if options.oversize == "drop":
                counts["dropped_oversize"] += 1
                continue
            counts["capped"] += 1
            chunks = cluster_gpus
        arrival = min(int(math.floor((record.arrival_seconds - start_seconds) / slot_seconds)), horizon - 1)
        job, units = _job(t, arrival, chunks, slot_seconds, options.utility, f"{source}:{record.line}")
        if arrival + -(-units // chunks) > horizon:
            if options.outlasting == "drop":
                counts["dropped_outlasting"] += 1
                continue
            counts["kept_outlasting"] += 1
        slowest = job.compute_seconds
        if job.compute_seconds_by_type is not None:  # the ranges must hold on the slowest type too
            slowest = max(seconds for _, seconds in job.compute_seconds_by_type)
            units = max(units, math.ceil(units * slowest / job.compute_seconds))
        if (horizon - arrival) * units > MAX_WORK_CELLS or units * min(units, chunks) > MAX_WORK_CELLS or \
                not JOB_FIELDS["compute_seconds"].contains(slowest):  # a capped long job's step
            counts["dropped_too_large"] += 1
            continue
        counts["extrapolated"] += int(t.extrapolated)
        jobs.append(job)
    return jobs, counts


def _horizon(records, options: TraceOptions, hours: float, source: str) -> int:
    """``T = ceil((hours + tail) / slot)`` (at least 1: a window of positive length holds a slot), or one line
    naming what makes it too long: the trace's last arrival when no ``--window`` was given, else the flags."""
    horizon = max(1, math.ceil((hours + options.tail_hours) / options.slot_hours - 1e-9))
    if horizon <= MAX_HORIZON:
        return horizon
    fitting = (hours + options.tail_hours) / MAX_HORIZON
    if options.window is None:
        last = max(records, key=lambda r: r.arrival_seconds)
        raise InputError(f"{source}:{last.line}: arrival_seconds: the last arrival, {last.arrival_seconds:g} s, makes "
                         f"the whole trace {hours:g} h, {horizon} slots of {options.slot_hours:g} h (at most "
                         f"{MAX_HORIZON}); give --window START:HOURS or --slot-hours >= {fitting:.3g}")
    raise InputError(f"--window/--slot-hours: {horizon} slots; the horizon must be 1..{MAX_HORIZON} slots (give "
                     f"--slot-hours >= {fitting:.3g} for this window)")


def build_instance(records, options: TraceOptions, table: ThroughputTable, *, source: str,
                   format: str, seed: int | None = None, vc: str | None = None,
                   tables: dict[str, ThroughputTable] | None = None) -> Instance:
    """The instance of ``records`` under ``options`` (module docstring), its meta naming every parameter."""
    options.check()
    start_hour, hours = window_of(records, options)
    start, end = start_hour * 3600.0, (start_hour + hours) * 3600.0
    ordered = sorted(records, key=lambda r: r.arrival_seconds)  # stable: ties keep the file's order
    inside = [r for r in ordered if start <= r.arrival_seconds < end]
    slot_seconds = options.slot_hours * 3600.0
    horizon = _horizon(records, options, hours, source)
    if options.gpu_types is None:
        timed = running_times(inside, table, options.scaling_efficiency, source)
    else:
        timed = typed_running_times(inside, tables or packaged_tables(), options, source)
    cluster, facts = cluster_for(timed, (start_hour, hours), options, source)
    jobs, counts = _slot_jobs(timed, start, slot_seconds, horizon, facts["gpus"], options, source)
    counts = {"read": len(records), "in_window": len(inside), "outside_window": len(records) - len(inside),
              **counts, "kept": len(jobs)}
    notes = _counts_and_notes(counts, options, facts["gpus"])
    meta = {"generator": "primaldual.traces", "trace": {
        "source": source, "format": format, "seed": seed, "vc": vc,
        "window_hours": [start_hour, hours], "slot_hours": options.slot_hours, "tail_hours": options.tail_hours,
        "horizon": horizon, "cluster": facts, "target_load": options.target_load,
        "utility": options.utility.to_meta(), "scaling_efficiency": options.scaling_efficiency,
        "gpu_type": table.gpu_type if options.gpu_types is None else None, "outlasting": options.outlasting, "oversize": options.oversize,
        "counts": counts, "notes": notes, "profiles": profiles.profiles_meta(),
    }}
    return Instance(cluster=cluster, jobs=tuple(jobs), horizon=horizon, slot_seconds=slot_seconds,
                    meta=meta).validate()

