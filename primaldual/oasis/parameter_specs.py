"""OASiS's and OASiS-LR's parameters, described for ``primaldual schedulers``
(:mod:`primaldual.simulation.parameters`): each one's meaning here, its valid values from the one table of
ranges that the checks use (:data:`primaldual.simulation.parameter_ranges.PARAMETERS`, read by
:mod:`primaldual.oasis.engine` and :meth:`primaldual.oasis.lr.settings.LrSettings.checked`), so that the text and
the check cannot disagree."""

from __future__ import annotations

from primaldual.simulation.parameter_ranges import PARAMETERS
from primaldual.simulation.parameters import ParameterSpec


def described(scheduler: str, meanings: dict[str, str]) -> dict[str, ParameterSpec]:
    """``scheduler``'s parameters with their ``meanings`` and the valid values its range table describes."""
    ranges = PARAMETERS[scheduler]
    return {name: ParameterSpec(ranges[name].describe(), meaning) for name, meaning in meanings.items()}


OASIS = described("oasis", {
    "price_scale": "multiplies every price",
    "eta": "scales the lower price constants L",
    "constants": "explicit price constants U and L per pool and resource (null: computed from the instance)",
    "rule": "how the lower prices L are set (primaldual.oasis.prices, proofs/oasis.md 7-7c)",
})

OASIS_LR = described("oasis-lr", {
    "delta": "deadline slack: a promise allows (1 - delta) of the planned utility",
    "window": "arrivals the learned price floor learns from, in slots",
    "eta": "the reserve price for promises: with the density rule L^r is the least value density over 4 eta, so "
           "a job whose utility does not beat its work at that price never gets a promise and runs best-effort; "
           "larger eta, more promises (proofs/oasis-lr.md, Choosing eta)",
    "rule": "how the price constants are set (primaldual.oasis.constants)",
    "learned_floor": "raise prices to the learned shadow-price floor",
    "pending": "keep jobs without a promise in a best-effort pending tier",
    "repack": "re-plan promised blocks into free capacity (null: true for oasis-lr, false for oasis-p)",
    "late": "true: blocks as late as possible; false: as early",
    "discount_rate": "the execution order's risk discount (RRH's)",
    "reoffer_every": "slots between re-offers of a pending job whose work has not fallen by a quarter",
    "immediate_blocks": "whether a promise may rest on a block that starts in the slot of the offer (null: true)",
    "order": "the execution order of promised jobs (null: density)",
    "plan": "which plan of the free capacity a slot runs under restart costs",
    "lookahead": "choose the execution policy at each arrival batch by a rollout of the known jobs (null: true for "
                 "oasis-lr, false for oasis-p)",
    "lookahead_budget": "largest live jobs x (slots replayed + 1) x policies (job-slots) for which a batch is "
                        "rolled out",
    "rollout_slots": "slots a rollout replays exactly past its arrival batch at most; past them a fluid forecast "
                     "values the jobs still live (primaldual.oasis.lr.forecast)",
    "replan": "add the re-plan (the restart-cost model's LP over the next slots) to the policies the lookahead "
              "compares (primaldual.oasis.lr.replan)",
    "replan_horizon": "the re-plan's window, in slots",
    "replan_iterations": "simplex iterations one re-plan's LP may take (no wall-clock limit: runs are "
                         "reproducible)",
})

__all__ = ["OASIS", "OASIS_LR", "described"]
