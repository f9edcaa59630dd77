"""OASiS's and OASiS-LR's parameters, described for ``primaldual schedulers``
(:mod:`primaldual.simulation.parameters`); the checks are in :mod:`primaldual.oasis.engine` and
:mod:`primaldual.oasis.lr.settings`."""

from __future__ import annotations

from primaldual.oasis.lr.settings import ORDERS, PLANS
from primaldual.oasis.prices import PRICE_RULES
from primaldual.simulation.parameters import BOOLEAN, ParameterSpec

_RULES = f"one of {', '.join(PRICE_RULES)}"

OASIS = {
    "price_scale": ParameterSpec("a number in [1e-9, 1e9]", "multiplies every price"),
    "eta": ParameterSpec("a number in [1e-9, 1e9]", "scales the lower price constants L"),
    "constants": ParameterSpec("null (computed from the instance), or a PriceConstants from Python",
                               "explicit price constants U and L per pool and resource"),
    "rule": ParameterSpec(_RULES, "how the lower prices L are set (primaldual.oasis.prices, proofs/oasis.md 7-7c)"),
}

OASIS_LR = {
    "delta": ParameterSpec("a number in [0, 0.99]", "deadline slack: a promise allows (1 - delta) of the planned "
                                                    "utility"),
    "window": ParameterSpec("an integer in [1, 1000000] (slots)", "arrivals the learned price floor learns from"),
    "eta": ParameterSpec("a number in [1e-9, 1e9]", "the reserve price for promises: with the density rule L^r "
                                                    "is the least value density over 4 eta, so a job whose "
                                                    "utility does not beat its work at that price never gets a "
                                                    "promise and runs best-effort; larger eta, more promises "
                                                    "(proofs/oasis-lr.md, Choosing eta)"),
    "rule": ParameterSpec(_RULES, "how the price constants are set (primaldual.oasis.constants)"),
    "learned_floor": ParameterSpec(BOOLEAN, "raise prices to the learned shadow-price floor"),
    "pending": ParameterSpec(BOOLEAN, "keep jobs without a promise in a best-effort pending tier"),
    "repack": ParameterSpec("null (true for oasis-lr, false for oasis-p), true or false",
                            "re-plan promised blocks into free capacity"),
    "late": ParameterSpec(BOOLEAN, "true: blocks as late as possible; false: as early"),
    "discount_rate": ParameterSpec("a number in [0, 1000000]", "the execution order's risk discount (RRH's)"),
    "reoffer_every": ParameterSpec("an integer in [1, 1000000] (slots)", "slots between re-offers of a pending job "
                                                                     "whose work has not fallen by a quarter"),
    "immediate_blocks": ParameterSpec("null (true), true or false", "whether a promise may rest on a block that "
                                                                    "starts in the slot of the offer"),
    "order": ParameterSpec(f"null (density) or one of {', '.join(ORDERS)}", "the execution order of promised jobs"),
    "plan": ParameterSpec(f"one of {', '.join(PLANS)}", "which plan of the free capacity a slot runs under restart "
                                                        "costs"),
    "lookahead": ParameterSpec("null (true for oasis-lr, false for oasis-p), true or false",
                               "choose the execution policy at each arrival batch by a rollout of the known jobs"),
    "lookahead_budget": ParameterSpec("an integer in [0, 10^12]", "largest live jobs x slots left x policies "
                                                                  "(job-slots) for which a batch is rolled out"),
    "rollout_slots": ParameterSpec("an integer in [1, 10^6]", "slots a rollout simulates past its arrival batch "
                                                              "at most (a longer instance's rollouts stop there)"),
    "replan": ParameterSpec(BOOLEAN, "add the re-plan (the restart-cost model's LP over the next slots) to the "
                                     "policies the lookahead compares (primaldual.oasis.lr.replan)"),
    "replan_horizon": ParameterSpec("an integer in [1, 10^6] (slots)", "the re-plan's window"),
    "replan_iterations": ParameterSpec("an integer in [1, 10^9]", "simplex iterations one re-plan's LP may take "
                                                                  "(no wall-clock limit: runs are reproducible)"),
}

__all__ = ["OASIS", "OASIS_LR"]
