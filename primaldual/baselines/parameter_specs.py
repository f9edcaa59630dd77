"""The baselines' parameters, described for ``primaldual schedulers`` (:mod:`primaldual.simulation.parameters`);
the checks are in each scheduler's ``__init__``."""

from __future__ import annotations

from primaldual.simulation.parameters import BOOLEAN, PLACEMENT, SKIP_UNFINISHABLE, ParameterSpec

FIFO = {
    "workers": ParameterSpec("null or an integer >= 1", "workers per job, min(workers, N_i); null: each job's N_i"),
    "placement": PLACEMENT,
    "skip_unfinishable": SKIP_UNFINISHABLE,
}

DRF = {"placement": PLACEMENT, "skip_unfinishable": SKIP_UNFINISHABLE}

RRH = {
    "discount_rate": ParameterSpec("a number >= 0 (per slot)", "how fast a job's present value falls while it waits"),
    "risk_weight": ParameterSpec("a number in [0, 1]", "the source's alpha: weight of the reward against the risk "
                                                       "of a late completion"),
    "preemptive": ParameterSpec(BOOLEAN, "whether a started job may be paused for a more valuable one"),
    "placement": PLACEMENT,
    "skip_unfinishable": SKIP_UNFINISHABLE,
}

DORM = {
    "fairness_threshold": ParameterSpec("null or a number >= 0", "how far a job's dominant share may fall below its "
                                                                 "fair share; null: no fairness constraint"),
    "max_adjustments": ParameterSpec("null or an integer >= 0", "most running partitions resized per event; null: "
                                                                "any number"),
    "solver": ParameterSpec("a MIP solver of 'primaldual solve --list-solvers' (highs, cbc, glpk)",
                            "the solver of the partition MILP"),
    "time_limit": ParameterSpec("a number of seconds > 0", "limit of each MILP solve (one per arrival or departure); "
                                                           "the incumbent is used when it is hit"),
    "mip_gap": ParameterSpec("null or a number in [0, 1)", "relative MIP gap at which each solve stops; null: the "
                                                           "solver's default"),
    "formulation": ParameterSpec("one of auto, per_server, pooled", "the MILP: per server, pooled servers, or "
                                                                    "chosen by size"),
    "placement": ParameterSpec(PLACEMENT.valid, "how pooled counts are put on servers, also for the fallbacks"),
    "skip_unfinishable": SKIP_UNFINISHABLE,
}


SRTF = {"placement": PLACEMENT, "skip_unfinishable": SKIP_UNFINISHABLE}

TIRESIAS = {
    "threshold": ParameterSpec("a number > 0 (worker-hours)", "attained service (workers x hours run) at which a "
                                                              "job is demoted from the first queue to the second"),
    "starvation_limit": ParameterSpec("null or an integer >= 1 (slots)", "slots a demoted job may wait without "
                                                                         "resources before it is promoted back to "
                                                                         "the first queue; null: never"),
    "placement": PLACEMENT,
}

OPTIMUS = {"placement": PLACEMENT, "skip_unfinishable": SKIP_UNFINISHABLE}

THEMIS = {
    "fairness": ParameterSpec("a number in [0, 1)", "the paper's fairness knob f: the 1 - f fraction of jobs with "
                                                    "the worst finish-time fairness is served first"),
    "lease": ParameterSpec("null or an integer >= 1 (slots)", "how long an allocation is held before it is "
                                                              "auctioned again; null: the paper's 10 minutes in "
                                                              "slots, at least one"),
    "placement": PLACEMENT,
    "skip_unfinishable": SKIP_UNFINISHABLE,
}

#: Gavel's policies (``las``, ``gavel-las``, ``gavel-ftf``; :mod:`primaldual.baselines.gavel`).
GAVEL = {"placement": ParameterSpec(PLACEMENT.valid, "which servers of the round's type a job's gang and its PSs go "
                                                     "to (primaldual.simulation.placement)"),
         "skip_unfinishable": SKIP_UNFINISHABLE}

__all__ = ["DORM", "DRF", "FIFO", "GAVEL", "OPTIMUS", "RRH", "SRTF", "THEMIS", "TIRESIAS"]
