"""primaldual: scheduling distributed machine-learning training in shared clusters.

The offline optimum of Bao et al. (INFOCOM 2018) as a Pyomo model, the online primal-dual
scheduler OASiS and its baselines in one simulator, and LB-BSP batch sizing (Chen et al., SoCC 2020).

The names below are the public front, as ``scipy.optimize``'s are: ``from primaldual import generate,
verify, simulate, run_oasis, solve_offline, evaluate``. They are loaded on first use (PEP 562), so that
``import primaldual`` and the command line start without Pyomo or HiGHS. The folders are for extension:
``core`` (instances, schedules, the verifier), ``simulation`` (the scheduler contract, registry and
simulator), ``oasis``, ``baselines``, ``offline``, ``evaluation``, ``sweep``, ``views``, ``lbbsp``;
``docs/architecture.md`` gives their layers.
"""

from importlib import import_module

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_FRONT = {
    "Instance": "primaldual.core.instance",
    "Cluster": "primaldual.core.instance",
    "Job": "primaldual.core.instance",
    "Schedule": "primaldual.core.schedule",
    "JobSchedule": "primaldual.core.schedule",
    "InputError": "primaldual.core.errors",
    "generate": "primaldual.core.generate",
    "verify": "primaldual.core.verify",
    "load_instance": "primaldual.core.files",
    "save_instance": "primaldual.core.files",
    "load_schedule": "primaldual.core.files",
    "save_schedule": "primaldual.core.files",
    "OnlineScheduler": "primaldual.simulation.scheduler",
    "Allocation": "primaldual.simulation.scheduler",
    "register_scheduler": "primaldual.simulation.scheduler",
    "available_schedulers": "primaldual.simulation.scheduler",
    "simulate": "primaldual.simulation.simulator",
    "SimulationResult": "primaldual.simulation.simulator",
    "run_oasis": "primaldual.oasis.engine",
    "solve_offline": "primaldual.offline.solve",
    "SolveOptions": "primaldual.offline.options",
    "OfflineResult": "primaldual.offline.result",
    "evaluate": "primaldual.evaluation.pipeline",
    "Evaluation": "primaldual.evaluation.pipeline",
    "compare": "primaldual.evaluation.compare",
}

__all__ = sorted(_FRONT)


def __getattr__(name: str):
    module = _FRONT.get(name)
    if module is None:
        raise AttributeError(f"module 'primaldual' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_FRONT))
