"""What one experiment of a sweep runs: :class:`Spec`, its key, and the specs of a ratio sweep."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.gpu_types import parse_type_counts
from primaldual.offline.options import SolveOptions

#: Bumped when the meaning of a spec field or of a record changes, so that old results are not reused.
#: Version 2: one OPT interval for every command (:mod:`primaldual.evaluation.bounds`), records with ``opt_interval``.
SPEC_VERSION = 2
#: The paper's order: OASiS, then the baselines; ``greedy`` is OASiS's admission without prices.
DEFAULT_SCHEDULERS = ("oasis", "greedy", "fifo", "drf", "rrh", "dorm")
#: Fields added after a spec version was fixed, with their defaults: they enter the canonical form only when
#: they differ from the default, so the keys of every spec that does not use them stay what they were.
_OPTIONAL_FIELDS = {"method": "ilp", "restart_cost": 0.0, "gpu_types": None}


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

    The instance knobs are those of :func:`primaldual.core.generate.generate` (``None`` = the preset's value).
    ``scheduler_params`` maps a scheduler name to keyword parameters for
    :func:`primaldual.simulation.scheduler.make_scheduler` (given as a dict, stored as a sorted tuple).
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
    method: str = "ilp"
    restart_cost: float = 0.0
    #: ``TYPE:SERVERS,...`` (``--gpu-types``): a heterogeneous cluster of that many worker servers per type.
    gpu_types: str | None = None

    def __post_init__(self):
        from primaldual.core.generate import PRESETS
        from primaldual.simulation.simulator import check_restart_cost

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
        try:  # the simulator's own rule, so that a bad value fails here and not inside a worker
            object.__setattr__(self, "restart_cost", check_restart_cost(self.restart_cost, "restart_cost"))
        except InputError as error:
            problems.extend(error.problems)
        object.__setattr__(self, "opt", bool(self.opt))
        object.__setattr__(self, "mip_start", bool(self.mip_start))
        try:  # the same rules as the command line's, so a bad sweep fails here and not inside a worker
            solve = SolveOptions(solver=self.solver, time_limit=self.time_limit, mip_gap=self.mip_gap,
                                 threads=self.threads, method=self.method, mip_start=self.mip_start)
        except InputError as error:
            problems.extend(error.problems)
        else:
            for name in ("time_limit", "mip_gap", "threads"):
                object.__setattr__(self, name, getattr(solve, name))
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
        object.__setattr__(self, "label", str(self.label))
        if self.gpu_types is not None and not isinstance(self.gpu_types, str):
            problems.append(f"gpu_types: must be a string TYPE:SERVERS,..., got {self.gpu_types!r}")
        elif self.gpu_types is not None:
            try:
                parse_type_counts(self.gpu_types.split(","), "gpu_types")
            except InputError as error:
                problems.extend(error.problems)
        if problems:
            raise InputError(problems)

    @property
    def solve(self) -> SolveOptions | None:
        """The solve options of the OPT computation (None when ``opt`` is off)."""
        if not self.opt:
            return None
        return SolveOptions(solver=self.solver, time_limit=self.time_limit, mip_gap=self.mip_gap,
                            threads=self.threads, method=self.method, mip_start=self.mip_start)

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
            "gpu_types": None if self.gpu_types is None else parse_type_counts(self.gpu_types.split(","), "gpu_types"),
        }

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (also what :func:`spec_key` hashes)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["schedulers"] = list(self.schedulers)
        out["scheduler_params"] = {name: self.params_for(name) for name, _ in self.scheduler_params}
        for name, default in _OPTIONAL_FIELDS.items():
            if out[name] == default:
                del out[name]
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
