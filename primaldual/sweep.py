"""Sweeps: many (instance, schedulers, solver) experiments, on local processes or a Dask cluster, resumable.

Three pieces:

- :class:`Spec` says what to run: the generator preset, its knobs and seed, the schedulers with their
  parameters, and the solver options (whether to compute the offline optimum OPT, which solver, its time
  limit). :func:`spec_key` is the sha256 of its canonical JSON, the record's identity in a results file.
- :func:`run` is a pure task ``spec -> record``: it generates the instance, runs every scheduler through the
  simulator, checks each schedule with the independent verifier, computes OPT with the offline ILP
  (MIP-started from the best online schedule) and brackets it in a certified interval, and records OASiS's
  dual certificate, the versions of the package, Pyomo and HiGHS, and the timings. A record is a plain JSON
  dict. Everything but ``record["timings"]`` is a deterministic function of the spec (on one software stack),
  as long as the solver finishes within its time limit: a solve stopped by the clock returns whatever it had
  found by then, which depends on the machine's speed (``record["opt"]["status"]`` says which case it is).
- :func:`sweep` maps :func:`run` over specs with any :class:`concurrent.futures.Executor` and streams the
  records to a JSON Lines file (:mod:`primaldual.records`) as they finish. Keys already in the file are
  skipped, so an interrupted sweep resumes where it stopped, and no record is lost or written twice.

The competitive ratio of a scheduler on an instance is OPT/ALG. When the solver proves optimality OPT is known
(up to its MIP gap); otherwise it is bracketed: ``opt_lower`` is the best feasible utility known (the solver's
incumbent or any online schedule, all checked by the verifier), and ``opt_upper`` the least of the solver's
bound, OASiS's dual objective (weak duality, oasis.md section 5.2), and the sum of the best utilities of the
jobs that can finish. A record's ``ratios[name]`` is then the interval ``[opt_lower/ALG, opt_upper/ALG]``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import multiprocessing
import os
import platform
import time
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from primaldual.errors import InputError
from primaldual.records import ResultsFile, read_records

#: Bumped when the meaning of a spec field or of a record changes, so that old results are not reused.
SPEC_VERSION = 1
RECORD_FORMAT = "primaldual-sweep-record/1"
#: The paper's order: OASiS, then the baselines; ``greedy`` is OASiS's admission without prices.
DEFAULT_SCHEDULERS = ("oasis", "greedy", "fifo", "drf", "rrh", "dorm")
#: Relative tolerance below which an OPT interval counts as a point (HiGHS's default MIP gap is 1e-4).
TIGHT_INTERVAL = 1e-4


def _params_tuple(params: Any) -> tuple:
    """``{scheduler: {param: value}}`` -> a sorted, hashable tuple (a frozen dataclass must not hold dicts)."""
    if params is None:
        return ()
    if isinstance(params, Mapping):
        items = params.items()
    else:
        items = params
    out = []
    for name, values in items:
        if isinstance(values, Mapping):
            values = values.items()
        normalised = []
        for key, value in values:
            try:
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError):
                raise InputError(f"scheduler_params.{name}.{key}: must be a JSON value, got {value!r}") from None
            normalised.append((str(key), _freeze(value)))
        out.append((str(name), tuple(sorted(normalised))))
    return tuple(sorted(out))


def _freeze(value):
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def _thaw(value):
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _optional(kind, value, name: str, problems: list[str], minimum=None):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        problems.append(f"{name}: must be a number, got {value!r}")
        return value
    if kind is int and int(value) != value:
        problems.append(f"{name}: must be an integer, got {value!r}")
        return value
    value = kind(value)
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        problems.append(f"{name}: must be a finite number >= {minimum}, got {value!r}")
    return value


@dataclass(frozen=True)
class Spec:
    """One experiment of a sweep: an instance (preset, knobs, seed), the schedulers, and the OPT computation.

    The instance knobs are those of :func:`primaldual.generate.generate` (``None`` = the preset's value).
    ``scheduler_params`` maps a scheduler name to keyword parameters for
    :func:`primaldual.scheduler.make_scheduler` (given as a dict, stored as a sorted tuple).
    ``opt`` runs the offline ILP with ``solver`` under ``time_limit`` seconds (``None``: no limit),
    ``mip_gap`` (``None``: the solver's default) and ``threads`` solver threads, MIP-started from the best
    online schedule when ``mip_start``. ``label`` is free text that groups specs (part of the key).
    """

    preset: str = "small"
    seed: int = 0
    jobs: int | None = None
    horizon: int | None = None
    load: float | None = None
    worker_servers: int | None = None
    ps_servers: int | None = None
    capacity_scale: float = 1.0
    schedulers: tuple[str, ...] = DEFAULT_SCHEDULERS
    scheduler_params: tuple = ()
    opt: bool = True
    solver: str = "highs"
    time_limit: float | None = 60.0
    mip_gap: float | None = None
    threads: int = 1
    mip_start: bool = True
    label: str = ""

    def __post_init__(self):
        from primaldual.generate import PRESETS

        problems: list[str] = []
        if self.preset not in PRESETS:
            problems.append(f"preset: must be one of {sorted(PRESETS)}, got {self.preset!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            problems.append(f"seed: must be an integer >= 0, got {self.seed!r}")
        else:
            object.__setattr__(self, "seed", int(self.seed))
        for name in ("jobs", "horizon", "worker_servers", "ps_servers"):
            object.__setattr__(self, name, _optional(int, getattr(self, name), name, problems, minimum=1))
        object.__setattr__(self, "load", _optional(float, self.load, "load", problems, minimum=0))
        object.__setattr__(self, "capacity_scale", _optional(float, self.capacity_scale, "capacity_scale", problems, minimum=0))
        object.__setattr__(self, "time_limit", _optional(float, self.time_limit, "time_limit", problems, minimum=0))
        object.__setattr__(self, "mip_gap", _optional(float, self.mip_gap, "mip_gap", problems, minimum=0))
        object.__setattr__(self, "threads", _optional(int, self.threads, "threads", problems, minimum=1))
        if isinstance(self.schedulers, str):
            object.__setattr__(self, "schedulers", tuple(s for s in self.schedulers.split(",") if s))
        object.__setattr__(self, "schedulers", tuple(str(s) for s in self.schedulers))
        if len(set(self.schedulers)) != len(self.schedulers):
            problems.append(f"schedulers: a scheduler is listed twice in {list(self.schedulers)}")
        if not self.schedulers and not self.opt:
            problems.append("schedulers: empty, and opt is off: nothing to run")
        object.__setattr__(self, "scheduler_params", _params_tuple(self.scheduler_params))
        unknown = sorted({name for name, _ in self.scheduler_params} - set(self.schedulers))
        if unknown:
            problems.append(f"scheduler_params: parameters for schedulers not in the spec: {unknown}")
        object.__setattr__(self, "opt", bool(self.opt))
        object.__setattr__(self, "mip_start", bool(self.mip_start))
        object.__setattr__(self, "label", str(self.label))
        if problems:
            raise InputError(problems)

    def params_for(self, scheduler: str) -> dict[str, Any]:
        for name, values in self.scheduler_params:
            if name == scheduler:
                return {key: _thaw(value) for key, value in values}
        return {}

    def generator_knobs(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "seed": self.seed,
            "jobs": self.jobs,
            "horizon": self.horizon,
            "load": self.load,
            "worker_servers": self.worker_servers,
            "ps_servers": self.ps_servers,
            "capacity_scale": self.capacity_scale,
        }

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (also what :func:`spec_key` hashes)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["schedulers"] = list(self.schedulers)
        out["scheduler_params"] = {name: self.params_for(name) for name, _ in self.scheduler_params}
        out["spec_version"] = SPEC_VERSION
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Spec":
        data = dict(data)
        version = data.pop("spec_version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise InputError(f"spec_version: this package reads version {SPEC_VERSION}, got {version!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(f"spec: unknown fields {unknown}")
        return cls(**data)

    def replace(self, **changes) -> "Spec":
        return dataclasses.replace(self, **changes)


def spec_key(spec: Spec) -> str:
    """sha256 (hex) of the spec's canonical JSON: sorted keys, no spaces, floats as Python prints them."""
    canonical = json.dumps(spec.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------- the task


def versions() -> dict[str, str]:
    import primaldual

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "primaldual": primaldual.__version__,
        "pyomo": version("pyomo"),
        "highspy": version("highspy"),
        "numpy": version("numpy"),
        "python": platform.python_version(),
    }


def _jsonable(value: Any, depth: int = 0):
    """A JSON-safe copy: numpy scalars and arrays to Python, non-finite floats to None, tuples to lists."""
    if depth > 20:
        return repr(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), depth + 1)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    return repr(value)


def _number(value) -> float | None:
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _instance_summary(instance) -> dict[str, Any]:
    can_finish = np.asarray(instance.can_finish, dtype=bool)
    best = [instance.best_utility(i) for i in range(instance.n_jobs) if can_finish[i]]
    return {
        "jobs": int(instance.n_jobs),
        "horizon": int(instance.horizon),
        "worker_servers": int(instance.cluster.n_worker_servers),
        "ps_servers": int(instance.cluster.n_ps_servers),
        "resources": list(instance.cluster.resources),
        "can_finish": int(can_finish.sum()),
        "total_work_units": int(np.sum(instance.work_units)),
        # Every job at its shortest duration: an upper bound on OPT that needs no solver.
        "utility_upper_bound": float(sum(best)),
    }


#: Fields of a simulation result that are timings, kept out of the deterministic part of a record.
_TIMING_WORDS = ("seconds", "elapsed", "wall", "time_s", "duration_s")


def _is_timing(name: str) -> bool:
    name = name.lower()
    return any(word in name for word in _TIMING_WORDS)


def _split_timings(data: Any) -> tuple[Any, dict]:
    """Move every ``*seconds*``-like entry of a (nested) dict out into a separate dict of timings."""
    if not isinstance(data, dict):
        return data, {}
    kept, timings = {}, {}
    for key, value in data.items():
        if _is_timing(str(key)) and (value is None or isinstance(value, (int, float))):
            timings[key] = value
        elif isinstance(value, dict):
            inner, inner_timings = _split_timings(value)
            kept[key] = inner
            if inner_timings:
                timings[key] = inner_timings
        else:
            kept[key] = value
    return kept, timings


def _simulation_metrics(result) -> dict[str, Any]:
    """The metrics of a :class:`primaldual.simulate.SimulationResult` as a JSON dict."""
    metrics = result.metrics
    metrics = metrics.to_dict() if hasattr(metrics, "to_dict") else metrics
    return _jsonable(metrics)


def run(spec: Spec) -> dict[str, Any]:
    """Run one spec; return its record (a plain JSON dict). See the module docstring for what it holds."""
    from primaldual.generate import generate
    from primaldual.scheduler import make_scheduler
    from primaldual.simulate import simulate
    from primaldual.verify import verify

    started = time.perf_counter()
    timings: dict[str, Any] = {"schedulers": {}}
    instance = generate(**spec.generator_knobs())
    timings["generate_seconds"] = time.perf_counter() - started
    summary = _instance_summary(instance)

    schedulers: dict[str, dict] = {}
    schedules = {}
    for name in spec.schedulers:
        scheduler = make_scheduler(name, **spec.params_for(name))
        clock = time.perf_counter()
        result = simulate(instance, scheduler)
        seconds = time.perf_counter() - clock
        check = verify(instance, result.schedule)
        metrics, metric_timings = _split_timings(_simulation_metrics(result))
        report, report_timings = _split_timings(_jsonable(result.report))
        timings["schedulers"][name] = {"simulate_seconds": seconds, **metric_timings, **report_timings}
        schedulers[name] = {
            # The verifier's utility is the one every ratio uses: it shares no code with the scheduler.
            "utility": float(check.utility),
            "feasible": bool(check.feasible),
            "violations": len(check.violations),
            "admitted": len(check.job_utilities),
            "metrics": metrics,
            "parameters": _jsonable(result.parameters),
            "report": report,
        }
        schedules[name] = result.schedule

    feasible = {name: entry["utility"] for name, entry in schedulers.items() if entry["feasible"]}
    best_online = max(feasible, key=lambda name: (feasible[name], name)) if feasible else None

    opt: dict[str, Any] = {"computed": spec.opt}
    upper_candidates = {"trivial": summary["utility_upper_bound"]}
    lower_candidates = {}
    if best_online is not None:
        lower_candidates[f"online:{best_online}"] = feasible[best_online]
    certificate = (schedulers.get("oasis", {}).get("report") or {}).get("certificate") or {}
    dual = _number(certificate.get("dual_objective")) if isinstance(certificate, dict) else None
    if dual is not None and schedulers["oasis"]["feasible"]:
        upper_candidates["oasis_certificate"] = dual

    if spec.opt:
        from primaldual.offline import solve_offline

        start = schedules[best_online] if (spec.mip_start and best_online is not None) else None
        clock = time.perf_counter()
        solved = solve_offline(
            instance,
            solver=spec.solver,
            time_limit=spec.time_limit,
            mip_gap=spec.mip_gap,
            threads=spec.threads,
            start=start,
        )
        timings["opt_seconds"] = time.perf_counter() - clock
        timings["opt_build_seconds"] = _number(getattr(solved, "build_seconds", None))
        timings["opt_solve_seconds"] = _number(getattr(solved, "solve_seconds", None))
        opt.update(
            status=str(solved.status),
            objective=_number(solved.objective),
            bound=_number(solved.bound),
            gap=_number(solved.gap),
            solver=str(solved.solver),
            solver_version=str(solved.solver_version),
            mip_start=best_online if start is not None else None,
            incumbent_source=getattr(solved, "incumbent_source", None),
        )
        if solved.schedule is not None:
            check = verify(instance, solved.schedule)
            opt["schedule_feasible"] = bool(check.feasible)
            opt["schedule_utility"] = float(check.utility)
            if check.feasible:
                lower_candidates["solver"] = float(check.utility)
        if opt["bound"] is not None and opt["status"] in ("optimal", "feasible", "time_limit_no_incumbent"):
            upper_candidates["solver"] = opt["bound"]
        elif opt["status"] == "optimal" and opt["objective"] is not None:
            upper_candidates["solver"] = opt["objective"]

    opt_lower = max(lower_candidates.values(), default=0.0)
    opt_upper = min(upper_candidates.values())
    # The bound can sit a hair below the verified incumbent (floating point inside the solver).
    opt_upper = max(opt_upper, opt_lower)
    opt.update(
        lower=opt_lower,
        upper=opt_upper,
        lower_source=max(lower_candidates, key=lower_candidates.get) if lower_candidates else None,
        upper_source=min(upper_candidates, key=upper_candidates.get),
        upper_candidates=upper_candidates,
        exact=_tight(opt_lower, opt_upper),
    )

    ratios = {name: ratio_interval(opt_lower, opt_upper, entry["utility"]) for name, entry in schedulers.items()}
    if "oasis" in schedulers and dual is not None:
        ratios["oasis"]["certificate"] = _safe_ratio(dual, schedulers["oasis"]["utility"])

    timings["total_seconds"] = time.perf_counter() - started
    return {
        "key": spec_key(spec),
        "format": RECORD_FORMAT,
        "spec": spec.to_dict(),
        "instance": summary,
        "schedulers": schedulers,
        "opt": opt,
        "ratios": ratios,
        "versions": versions(),
        "timings": _jsonable(timings),
    }


def _tight(lower: float, upper: float) -> bool:
    return upper - lower <= TIGHT_INTERVAL * max(1.0, abs(upper))


def _safe_ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``; 1 for 0/0 (nothing to earn, nothing earned); None (unbounded) for x/0."""
    if denominator > 0:
        return numerator / denominator
    return 1.0 if numerator <= 0 else None


def ratio_interval(opt_lower: float, opt_upper: float, utility: float) -> dict[str, Any]:
    """The competitive ratio OPT/ALG of one scheduler as a certified interval.

    ``point`` uses the best OPT known (``opt_lower``); it is the ratio itself when the interval is tight.
    ``lower``/``upper`` are None when ALG earned nothing but OPT > 0 (the ratio is unbounded).
    """
    lower = _safe_ratio(opt_lower, utility)
    upper = _safe_ratio(opt_upper, utility)
    return {"point": lower, "lower": lower, "upper": upper, "exact": _tight(opt_lower, opt_upper)}


def deterministic_part(record: dict) -> dict:
    """The record without its timings: what must be identical across executors and reruns."""
    return {key: value for key, value in record.items() if key != "timings"}


# ---------------------------------------------------------------------------------------------- executors


def local_executor(workers: int | None = None) -> ProcessPoolExecutor:
    """Spawned worker processes, each capped at one BLAS/OpenMP thread (see :mod:`primaldual.workers`).

    Spawn, not fork: a forked child would inherit the parent's already-started BLAS and solver threads and
    locks, and whatever the parent imported; a spawned one starts clean, like a Dask worker.
    """
    from primaldual.workers import initialize_worker

    workers = workers or os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, got {workers}")
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=initialize_worker
    )


@contextmanager
def dask_executor(address: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A Dask executor: ``Client(address).get_executor()``, or a local cluster of ``workers`` processes.

    Needs the ``dask`` extra (``pip install primaldual[dask]``). The client (and the local cluster, if this
    function started it) is closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the extra is installed in CI
        raise InputError("--executor dask: needs Dask distributed (pip install 'primaldual[dask]')") from None
    cluster = None
    if address is None:
        from primaldual.workers import single_thread_environment

        # Dask's nanny already caps OMP/MKL/OpenBLAS at one thread per worker process; the extra variables
        # make the cap explicit and cover the other runtimes.
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
            env=single_thread_environment(),
        )
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# ---------------------------------------------------------------------------------------------- the sweep


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


def sweep(
    specs: Iterable[Spec],
    out: str | Path,
    executor: Executor | None = None,
    progress: bool = True,
    workers: int | None = None,
    on_record: Callable[[dict], None] | None = None,
    task: Callable[[Spec], dict] = run,
) -> SweepResult:
    """Run every spec not yet in the results file ``out`` and append its record there as it finishes.

    ``executor`` is any :class:`concurrent.futures.Executor` (a Dask ``Client.get_executor()`` included);
    by default a :func:`local_executor` of ``workers`` processes is started and shut down here. Specs whose
    key is already in ``out`` are not run again (a repeated spec runs once). ``on_record(record)`` is called
    after each record is on disk; an exception it raises stops the sweep (the records written so far stay).
    ``task`` replaces :func:`run` (it must be a picklable top-level function). A task that raises stops the
    sweep with its error; the records already written stay, so a rerun after the fix resumes.

    A malformed line in ``out`` raises :class:`primaldual.records.ResultsFileError` before anything runs.
    """
    specs = list(specs)
    for n, spec in enumerate(specs):
        if not isinstance(spec, Spec):
            raise InputError(f"specs[{n}]: must be a Spec, got {type(spec).__name__}")
    _check_schedulers(specs)
    keys = [spec_key(spec) for spec in specs]
    unique: dict[str, Spec] = dict(zip(keys, specs))
    path = Path(out)
    existing = read_records(path)
    pending = [(key, spec) for key, spec in unique.items() if key not in existing]
    skipped = len(unique) - len(pending)
    new: dict[str, dict] = {}
    own_executor = executor is None and bool(pending)
    if own_executor:
        executor = local_executor(workers)
    bar = _progress_bar(len(unique), skipped, progress, f"sweep -> {path.name}")
    futures = {}
    try:
        with ResultsFile(path) as results:
            futures = {executor.submit(task, spec): key for key, spec in pending}
            for future in as_completed(futures):
                key = futures[future]
                record = future.result()
                if record.get("key") != key:
                    raise RuntimeError(f"task returned a record with key {record.get('key')!r} for spec {key}")
                results.append(record)
                new[key] = record
                bar.update(1)
                if on_record is not None:
                    on_record(record)
    finally:
        for future in futures:
            future.cancel()
        bar.close()
        if own_executor:
            executor.shutdown(wait=True, cancel_futures=True)
    merged = {**existing, **new}
    return SweepResult(
        path=path,
        records=[merged[key] for key in unique],
        computed=len(new),
        skipped=skipped,
        keys=list(unique),
    )


def _check_schedulers(specs: list[Spec]) -> None:
    """Fail before starting any process if a spec names an unknown scheduler."""
    from primaldual.scheduler import scheduler_class

    for name in sorted({name for spec in specs for name in spec.schedulers}):
        scheduler_class(name)


def ratio_specs(
    preset: str,
    instances: int,
    seed: int = 0,
    schedulers: Iterable[str] = DEFAULT_SCHEDULERS,
    **options,
) -> list[Spec]:
    """``instances`` specs on ``preset`` with seeds ``seed, seed+1, ...``; ``options`` are other Spec fields."""
    if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
        raise InputError(f"--instances: must be an integer >= 1, got {instances!r}")
    return [Spec(preset=preset, seed=seed + n, schedulers=tuple(schedulers), **options) for n in range(instances)]


# ---------------------------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class RatioSample:
    """One scheduler's OPT/ALG over records: points with their certified intervals, and the instances with
    ALG = 0 (``unbounded``), which have no finite ratio."""

    points: list
    lowers: list
    uppers: list
    certificates: list
    utilities: list
    unbounded: int


def ratio_sample(records: Iterable[dict], name: str) -> RatioSample:
    """Collect scheduler ``name``'s ratios from ``records`` (records without it are skipped)."""
    points, lowers, uppers, certificates, utilities = [], [], [], [], []
    unbounded = 0
    for record in records:
        ratio = record.get("ratios", {}).get(name)
        if ratio is None:
            continue
        utilities.append(record["schedulers"][name]["utility"])
        if ratio["point"] is None or ratio["upper"] is None:
            unbounded += 1
            continue
        points.append(ratio["point"])
        lowers.append(ratio["lower"])
        uppers.append(ratio["upper"])
        if ratio.get("certificate") is not None:
            certificates.append(ratio["certificate"])
    return RatioSample(points, lowers, uppers, certificates, utilities, unbounded)


def summarize(records: Iterable[dict]) -> dict[str, Any]:
    """Per scheduler: how many instances, OPT/ALG mean, median and worst, and the certified intervals.

    Means run over instances where ALG > 0 or OPT = 0 (the ratio is finite); ``unbounded`` counts the others.
    ``mean_interval``/``worst_interval`` bracket the mean and worst ratio with the OPT intervals, so they hold
    even where the solver stopped at its time limit. ``certificate`` (OASiS) is OASiS's own bound D/P.
    """
    records = list(records)
    names: list[str] = []
    for record in records:
        for name in record.get("ratios", {}):
            if name not in names:
                names.append(name)
    rows = {}
    for name in names:
        sample = ratio_sample(records, name)
        points, lowers, uppers = sample.points, sample.lowers, sample.uppers
        certificates, utilities, unbounded = sample.certificates, sample.utilities, sample.unbounded
        row = {
            "instances": len(utilities),
            "unbounded": unbounded,
            "exact": sum(1 for r in records if name in r.get("ratios", {}) and r["ratios"][name]["exact"]),
            "mean_utility": float(np.mean(utilities)) if utilities else None,
            "mean": float(np.mean(points)) if points else None,
            "median": float(np.median(points)) if points else None,
            "worst": float(np.max(points)) if points else None,
            "mean_interval": [float(np.mean(lowers)), float(np.mean(uppers))] if points else None,
            "worst_interval": [float(np.max(lowers)), float(np.max(uppers))] if points else None,
        }
        if certificates:
            row["certificate_mean"] = float(np.mean(certificates))
            row["certificate_worst"] = float(np.max(certificates))
        rows[name] = row
    statuses: dict[str, int] = {}
    for record in records:
        status = record.get("opt", {}).get("status", "not computed")
        statuses[status] = statuses.get(status, 0) + 1
    return {"instances": len(records), "opt_status": statuses, "schedulers": rows}


def _format(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v, digits) for v in value) + "]"
    return f"{value:.{digits}f}"


def format_summary(summary: dict) -> str:
    """The summary as a fixed-width text table."""
    header = ["scheduler", "n", "mean OPT/ALG", "worst", "mean interval", "worst interval", "exact", "ALG=0", "mean ALG"]
    lines = [header]
    for name, row in summary["schedulers"].items():
        lines.append([
            name,
            str(row["instances"]),
            _format(row["mean"]),
            _format(row["worst"]),
            _format(row["mean_interval"]),
            _format(row["worst_interval"]),
            str(row["exact"]),
            str(row["unbounded"]),
            _format(row["mean_utility"], 2),
        ])
    widths = [max(len(line[c]) for line in lines) for c in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    status = ", ".join(f"{key}: {value}" for key, value in sorted(summary["opt_status"].items()))
    text.append(f"{summary['instances']} instances; OPT status: {status}")
    oasis = summary["schedulers"].get("oasis", {})
    if "certificate_mean" in oasis:
        text.append(
            f"OASiS dual certificate D/P: mean {oasis['certificate_mean']:.3f}, worst {oasis['certificate_worst']:.3f}"
        )
    return "\n".join(text)


__all__ = [
    "DEFAULT_SCHEDULERS", "RECORD_FORMAT", "SPEC_VERSION", "Spec", "SweepResult", "dask_executor",
    "deterministic_part", "format_summary", "local_executor", "ratio_interval", "ratio_specs", "read_records",
    "run", "spec_key", "summarize", "sweep", "versions",
]
