"""The online-scheduler interface and the registry of schedulers by name.

A scheduler sees the instance's cluster and horizon up front, but each job only from its arrival slot on.
The simulator (:mod:`primaldual.simulation.simulator`) drives it slot by slot:

1. ``start(instance)`` once. The contract is that a scheduler reads a job's parameters only from its arrival
   slot on; Python cannot enforce that cheaply, so it is documented here and the simulator checks the
   allocations, not the reads;
2. at each slot ``t``: ``on_arrival(t, jobs)`` with the indices of the jobs arriving in ``t`` (in index order),
   then ``allocate(t, state)`` which returns, for each job it runs in slot ``t``, an :class:`Allocation`
   (workers per worker server, PSs per PS server).

Schedulers that plan at arrival (OASiS) return their plan's slice; schedulers that re-decide every slot (DRF)
compute it from ``state``. The simulator applies the allocation, refuses any that breaks capacity, arrival,
the worker cap ``N_i`` or eqs. (6)-(7), tracks remaining work and records completions.

Third-party schedulers register by name with :func:`register_scheduler` (a decorator) or with an entry point
in the group ``primaldual.schedulers`` whose object is the scheduler class.
"""

from __future__ import annotations

import importlib
import inspect
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable, ClassVar

import numpy as np

from primaldual.core.domains import show
from primaldual.core.errors import InputError
from primaldual.simulation.parameter_ranges import check_parameters
from primaldual.simulation.parameter_ranges import parse_value as parse_value  # re-exported: the commands read --param by it


@dataclass(frozen=True, eq=False)
class Allocation:
    """One job's resources in one slot: ``workers[h]`` and ``parameter_servers[k]`` (non-negative integers)."""

    workers: np.ndarray
    parameter_servers: np.ndarray

    def same_placement(self, other: "Allocation") -> bool:
        """The same workers and PSs on the same servers: no restart between two consecutive slots
        (:mod:`primaldual.simulation.simulator`'s restart rule, which OASiS-LR's execution plans with)."""
        return self is other or (_same(self.workers, other.workers) and
                                 _same(self.parameter_servers, other.parameter_servers))


def _same(one: np.ndarray, other: np.ndarray) -> bool:
    """``np.array_equal`` of two placements; integer arrays of one dtype compared as bytes (the same answer). Gain:
    OASiS-LR's 382,028 comparisons on the 11cb48 week at F = 0.1 take 0.79 s instead of 2.78 s (cProfile)."""
    if one.dtype == other.dtype and one.dtype.kind in "iu":
        return one.shape == other.shape and one.tobytes() == other.tobytes()
    return np.array_equal(one, other)


@dataclass(frozen=True, eq=False)
class SlotState:
    """What the simulator tells a scheduler at slot ``slot`` (read-only arrays).

    ``remaining_work[i]`` is the worker-slots job i still needs (``V_i`` minus what it got), ``arrived[i]`` and
    ``completed[i]`` are flags; ``active`` lists arrived, uncompleted jobs in index order. Jobs that cannot
    finish by the horizon any more are still listed: dropping them is the scheduler's decision.
    On a heterogeneous cluster ``remaining_work[i]`` counts worker-slots of job i's fastest type and
    ``remaining_fraction[i]`` is the fraction of its work still to do (None on one type; both defined in
    :mod:`primaldual.simulation.progress`).
    """

    slot: int
    remaining_work: np.ndarray
    arrived: np.ndarray
    completed: np.ndarray
    active: tuple[int, ...]
    slots_left: int
    remaining_fraction: np.ndarray | None = None


class OnlineScheduler(ABC):
    """Base class of every online scheduler. Subclasses set ``name`` and implement :meth:`allocate`."""

    name: ClassVar[str] = "unnamed"
    #: Raised when a default or the behaviour changes what a run of the same spec gives: a resumed sweep
    #: recomputes the records an earlier revision made (:func:`scheduler_revision`) instead of reusing them.
    revision: ClassVar[int] = 1
    #: Whether the scheduler runs on a heterogeneous cluster (GPU types, :mod:`primaldual.core.gpu_types`):
    #: one type per job and slot, work at each type's speed. ``simulate`` refuses the instance otherwise.
    handles_gpu_types: ClassVar[bool] = False

    def start(self, instance) -> None:
        """Called once before slot 0. Keep the instance; reset all state (a scheduler may be reused)."""
        self.instance = instance

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        """Jobs ``jobs`` arrive in ``slot``. Planning schedulers decide admission and the whole plan here."""

    @abstractmethod
    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        """The allocation of slot ``slot``: job index -> :class:`Allocation` (omit jobs that get nothing)."""

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        """Jobs ``jobs`` completed their work in ``slot``."""

    def parameters(self) -> dict[str, Any]:
        """The scheduler's parameters, recorded with every run."""
        return {}

    def report(self) -> dict[str, Any]:
        """Anything the scheduler wants recorded after the run (e.g. OASiS's certificate)."""
        return {}


# ---------------------------------------------------------------------------------------------- registry

#: Built-in schedulers, imported lazily so that importing the registry imports no scheduler.
BUILTIN_SCHEDULERS: dict[str, str] = {
    "oasis": "primaldual.oasis.engine:OasisScheduler",
    "greedy": "primaldual.oasis.engine:GreedyScheduler",
    "fifo": "primaldual.baselines.fifo:FifoScheduler",
    "drf": "primaldual.baselines.drf:DrfScheduler",
    "rrh": "primaldual.baselines.rrh:RrhScheduler",
    "dorm": "primaldual.baselines.dorm:DormScheduler",
    "oasis-lr": "primaldual.oasis.lr.scheduler:OasisLr",
    "oasis-p": "primaldual.oasis.lr.scheduler:OasisP",
    "rrh-full-reward": "primaldual.baselines.readings:RrhFullReward",
    "rrh-nonpreemptive": "primaldual.baselines.readings:RrhNonpreemptive",
    "tiresias": "primaldual.baselines.tiresias:TiresiasScheduler",
    "srtf": "primaldual.baselines.srtf:SrtfScheduler",
    "optimus": "primaldual.baselines.optimus:OptimusScheduler",
    "themis": "primaldual.baselines.themis:ThemisScheduler",
}
#: The built-in families, named once for every layer above (``compare``, ``reproduce``): OASiS and its variants
#: OASiS-LR and OASiS-P; the baselines they are compared with, RRH in its three readings
#: (:mod:`primaldual.baselines.readings`), and the field's schedulers Tiresias, SRTF, Optimus and Themis (issue 52);
#: and the variant this artifact puts forward, whose standing against the
#: best baseline ``compare`` and ``reproduce`` report.
OASIS_FAMILY = ("oasis", "oasis-lr", "oasis-p")
BASELINES = ("greedy", "fifo", "drf", "rrh", "rrh-full-reward", "rrh-nonpreemptive", "dorm",
             "tiresias", "srtf", "optimus", "themis")
CLAIMANT = "oasis-lr"
#: Gavel's policies (issue 64), registered by :mod:`primaldual.baselines` (:func:`register_scheduler`) and found
#: by name from anywhere (:func:`scheduler_class` imports that package before it calls a name unknown). Not
#: built-in names, not in :data:`BASELINES` nor in :func:`available_schedulers`: the golden capture, the default
#: rows of ``compare``, ``reproduce``'s recorded runs and "the best baseline" stay what they were until they are
#: recaptured with them.
GAVEL_POLICIES = ("las", "gavel-las", "gavel-ftf")
#: The package whose import registers :data:`GAVEL_POLICIES`.
REGISTERING_PACKAGE = "primaldual.baselines"
ENTRY_POINT_GROUP = "primaldual.schedulers"
_REGISTERED: dict[str, Callable[..., OnlineScheduler]] = {}


def register_scheduler(name: str) -> Callable:
    """Class decorator: make a scheduler available by ``name`` to ``run``, ``compare`` and sweeps."""

    def decorator(cls):
        if name in BUILTIN_SCHEDULERS:
            raise ValueError(f"scheduler name {name!r} is taken by a built-in scheduler")
        _REGISTERED[name] = cls
        if getattr(cls, "name", "unnamed") == "unnamed":
            cls.name = name
        return cls

    return decorator


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_schedulers() -> list[str]:
    """Built-in names first (in the paper's order), then registered and entry-point ones, sorted; not
    :data:`GAVEL_POLICIES` (run by name only)."""
    extra = sorted((set(_REGISTERED) | set(_entry_points())) - set(BUILTIN_SCHEDULERS) - set(GAVEL_POLICIES))
    return list(BUILTIN_SCHEDULERS) + extra


def scheduler_revision(name: str) -> int:
    """The ``revision`` of the scheduler registered as ``name`` (1 for a factory that does not declare one)."""
    return int(getattr(scheduler_class(name), "revision", 1))


def scheduler_class(name: str, flag: str | None = None):
    """The class registered as ``name``; an unknown name is an :class:`InputError` listing the available ones,
    prefixed by ``flag`` (the option the user typed, e.g. ``--schedulers``) when the caller gives it."""
    if name in BUILTIN_SCHEDULERS:
        module_name, _, attribute = BUILTIN_SCHEDULERS[name].partition(":")
        return getattr(importlib.import_module(module_name), attribute)
    if name not in _REGISTERED and name in GAVEL_POLICIES:
        importlib.import_module(REGISTERING_PACKAGE).register_policies()  # by name: no import against the layers
    if name in _REGISTERED:
        return _REGISTERED[name]
    entry_points = _entry_points()
    if name in entry_points:
        return entry_points[name].load()
    prefix = f"{flag}: " if flag else ""
    raise InputError(f"{prefix}unknown scheduler {show(name)}; available: {', '.join(available_schedulers())}")


def _plain(text: str) -> str:
    """Docstring reST to plain text: ``x`` -> x, :mod:`a.b` -> a.b, whitespace collapsed."""
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text)
    return " ".join(text.replace("``", "").split())


def _init_parameters(cls) -> list[inspect.Parameter] | None:
    """The keyword parameters of ``cls.__init__``; None if it takes arbitrary keywords (``**kwargs``)."""
    if cls.__init__ is object.__init__:
        return []
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _parameter_docs(cls) -> dict[str, str]:
    """``name -> text`` from the "Parameters:" paragraph of the class's or its module's docstring, which
    describes each parameter as ``name`` (what it is)."""
    docs = [inspect.getdoc(cls) or "", inspect.getmodule(cls).__doc__ or ""]
    for doc in docs:
        match = re.search(r"Parameters:(.*?)(?:\n\s*\n|$)", doc, re.S)
        if match:
            pairs = re.findall(r"``(\w+)``(?:\s*\(((?:[^()]|\([^()]*\))*)\))?", match.group(1))
            return {name: _plain(text) for name, text in pairs}
    return {}


def scheduler_info(name: str) -> dict[str, Any]:
    """What ``primaldual schedulers`` shows: the class, a one-line doc and each parameter with its default."""
    cls = scheduler_class(name)
    doc = inspect.getdoc(cls) if cls.__doc__ else (inspect.getmodule(cls).__doc__ or "")
    first = _plain(doc.strip().split("\n\n")[0]) if doc else ""
    parameters = _init_parameters(cls)
    described = _parameter_docs(cls)
    specs = getattr(cls, "PARAMETER_SPECS", {})  # primaldual.simulation.parameters.ParameterSpec by name
    listed = []
    for p in parameters or []:
        default = None if p.default is inspect.Parameter.empty else p.default
        spec = specs.get(p.name)
        listed.append({
            "name": p.name,
            "default": default if isinstance(default, (int, float, str, bool, type(None))) else repr(default),
            "required": p.default is inspect.Parameter.empty,
            "type": p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", ""),
            "doc": described.get(p.name, ""),
            "valid": None if spec is None else spec.valid,
            "meaning": described.get(p.name, "") if spec is None else spec.meaning,
        })
    return {"name": name, "class": f"{cls.__module__}.{cls.__qualname__}", "doc": first,
            "any_keyword": parameters is None, "parameters": listed}


def make_scheduler(name: str, **parameters) -> OnlineScheduler:
    """Instantiate the scheduler registered as ``name`` with keyword ``parameters``.

    A key the scheduler does not take is an :class:`InputError` naming the ones it does (before the class is
    called, so no ``__init__() got an unexpected keyword argument`` reaches the user).
    """
    cls = scheduler_class(name)
    known = _init_parameters(cls)
    if known is not None:
        names = [p.name for p in known]
        unknown = sorted(set(parameters) - set(names))
        if unknown:
            takes = f"it takes {', '.join(names)}" if names else "it takes no parameters"
            raise InputError(f"scheduler {name}: unknown parameter{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)}; {takes} (see 'primaldual schedulers')")
    parameters = check_parameters(name, parameters)  # integral floats of integer parameters become ints
    try:
        return cls(**parameters)
    except (TypeError, ValueError) as error:
        # TypeError: a value of the wrong kind; ValueError: a value the scheduler refuses.
        shown = ", ".join(f"{k}={show(v)}" for k, v in parameters.items())
        raise InputError(f"scheduler {name}: bad parameters ({shown}): {error}") from None
