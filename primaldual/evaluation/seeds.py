"""The online schedules that seed an offline solve, computed once, above the offline layer.

The offline solve never runs a scheduler: column generation (``method="cg"``) starts its restricted master
from the columns of verified online schedules, and the large HiGHS ILP starts from the best of them (its
online start). :func:`solve_seeds` runs the schedulers of :data:`SEED_SCHEDULERS` (the OASiS engine
directly, for its certificate, whose dual objective is an upper bound on OPT), verifies each schedule and,
after them, every other verified schedule a caller already computed (``ran``: the pipeline's other schedulers),
hands them to :func:`primaldual.offline.solve.solve_offline` as :class:`~primaldual.offline.options.OnlineSeed`
values, only when the solve will use them (:func:`primaldual.offline.methods.uses_seeds`).

Each seed costs one simulation (OASiS's is the dearest: one dual subroutine per job); a caller that has
already run a scheduler with its default parameters on the same instance passes that verified result in
``ran`` and it is not run again (OASiS's with its certificate). ``dorm`` is not a seed: it solves one MILP per arrival and departure, far
dearer than every seed together.
"""

from __future__ import annotations

from typing import Mapping

from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.offline.options import OnlineSeed, SolveOptions

#: The seeding schedulers, in the order their columns enter the master (cheapest first). OASiS-LR is the
#: dearest and, on real arrivals, the best online schedule (docs/findings.md): the incumbent column
#: generation must beat.
SEED_SCHEDULERS = ("fifo", "rrh", "oasis", "greedy", "drf", "oasis-lr")

#: The seeds whose certificate (its dual objective, an upper bound on OPT) the solve is given.
CERTIFIED_SEEDS = ("oasis",)

#: The order in which the online start prefers seeds of equal utility (other schedulers' seeds come after).
START_PREFERENCE = ("fifo", "greedy", "drf", "rrh", "oasis", "oasis-lr")


def _oasis_seed(instance: Instance) -> tuple[Schedule, float | None]:
    from primaldual.oasis.engine import run_oasis

    result = run_oasis(instance)
    bound = None if result.certificate is None else float(result.certificate.dual_objective)
    return result.schedule, bound


def online_seeds(instance: Instance, ran: Mapping[str, object] | None = None) -> tuple[OnlineSeed, ...]:
    """The verified schedules of :data:`SEED_SCHEDULERS`, then the other schedulers' in ``ran`` (:func:`to_seeds`):
    ``ran`` maps a name to an outcome already computed with default parameters (``.result.schedule``,
    ``.verification``, and for OASiS ``.certificate``); the seeds it lacks are run here (:func:`seeds_to_run`)."""
    ran = ran or {}
    computed = {name: compute_seed(instance, name) for name in seeds_to_run(ran, instance)}
    return to_seeds(instance, ran, computed)


def _reusable(name: str, known: object) -> bool:
    """Whether a caller's outcome serves as seed ``name`` as it stands: it was verified, and OASiS's also carries
    its certificate, whose dual objective is the seed's certified bound (the pipeline keeps the certificate of a
    feasible OASiS run: the same schedule and dual objective as :func:`compute_seed`'s run of the engine)."""
    if getattr(known, "verification", None) is None:
        return False
    return name not in CERTIFIED_SEEDS or getattr(known, "certificate", None) is not None


def seeds_to_run(ran: Mapping[str, object], instance: Instance | None = None) -> tuple[str, ...]:
    """The names of :data:`SEED_SCHEDULERS` that ``ran`` does not already hold in a usable form, in order; on a
    heterogeneous ``instance`` only those that take gpu types (the others would refuse it)."""
    return tuple(name for name in SEED_SCHEDULERS
                 if not _reusable(name, ran.get(name)) and _takes(instance, name))


def _takes(instance: Instance | None, name: str) -> bool:
    """Whether scheduler ``name`` runs on ``instance`` (every one on a homogeneous cluster; issue 64)."""
    if instance is None or instance.cluster.worker_types is None:
        return True
    from primaldual.simulation.scheduler import make_scheduler

    return bool(make_scheduler(name).handles_gpu_types)


def to_seeds(instance: Instance, ran: Mapping[str, object], computed: Mapping[str, tuple]) -> tuple[OnlineSeed, ...]:
    """The seeds, in :data:`SEED_SCHEDULERS` order then the other schedulers of ``ran``: ``computed[name]`` (a
    :func:`compute_seed` triple) where there is one, else ``ran[name]``'s verified schedule; a scheduler in
    neither (a seed the time limit skipped, :mod:`primaldual.evaluation.bounded`) and an infeasible schedule are
    left out."""
    others = tuple(sorted(name for name, known in ran.items()
                          if name not in SEED_SCHEDULERS and getattr(known, "verification", None) is not None))
    preference = START_PREFERENCE + others
    seeds = []
    for name in SEED_SCHEDULERS + others:
        known = ran.get(name)
        if name in computed:
            schedule, report, bound = computed[name]
        elif _reusable(name, known):
            schedule, report, bound = known.result.schedule, known.verification, _certified_bound(name, known)
        else:
            continue
        if report.feasible:
            seeds.append(OnlineSeed(name, schedule, float(report.utility), bound, preference.index(name)))
    return tuple(seeds)


def _certified_bound(name: str, known) -> float | None:
    """The upper bound on OPT a reused outcome brings: OASiS's dual objective; the other seeds bring none."""
    return float(known.certificate.dual_objective) if name in CERTIFIED_SEEDS else None


def compute_seed(instance: Instance, name: str) -> tuple:
    """Scheduler ``name``'s schedule on ``instance`` with its default parameters, its verification and OASiS's
    certified bound (None for the others)."""
    from primaldual.simulation.simulator import simulate

    if name == "oasis":
        schedule, bound = _oasis_seed(instance)
        return schedule, verify(instance, schedule), bound
    schedule = simulate(instance, name).schedule
    return schedule, verify(instance, schedule), None


def solve_seeds(instance: Instance, options: SolveOptions, start=None,
                ran: Mapping[str, object] | None = None) -> tuple[OnlineSeed, ...]:
    """:func:`online_seeds` when the solve of ``instance`` with ``options`` (and ``start``) uses seeds, else ()."""
    from primaldual.offline.methods import uses_seeds

    return online_seeds(instance, ran) if uses_seeds(instance, options, start) else ()


__all__ = ["CERTIFIED_SEEDS", "SEED_SCHEDULERS", "START_PREFERENCE", "compute_seed", "online_seeds", "seeds_to_run", "solve_seeds", "to_seeds"]
