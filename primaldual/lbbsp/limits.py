"""What a causal batch-sizing rule can reach, and hindsight references to measure it against ([design]).

The clairvoyant oracle of :mod:`.replay` knows the coming iteration's times. ``proofs/lbbsp.md`` shows what
no causal rule can get from that:

* **Section 2** (exchangeable noise): when the workers' per-sample costs in the coming iteration are
  exchangeable given the past, the expected iteration time ``E[max_i c_i x_i]`` is a symmetric convex
  function of the split. So the equal split (BSP) minimises it, and the expected share of the oracle's gain
  of every causal rule is at most 0.
* **Section 3** (a predictable part times exchangeable noise, ``c_i = p_i e_i``):
  :func:`causal_lower_bound` bounds the expected time of every causal rule from below by
  ``min max(max_i y_i, M mean(y))`` over ``y >= 0`` with ``sum_i y_i / p_i = 1``, where ``M = E[max_i e_i]``
  and ``E[e_i] = 1``.

On the CoV traces, whose law is known, :mod:`.law_aware` computes an upper reference that also knows the coming
iteration's CoV (``proofs/lbbsp.md`` section 5). On a trace, where the law of the next iteration is unknown, the module
computes two references instead.
Both are chosen in hindsight but are fixed rules, so they measure what was reachable without clairvoyance:

* the **best bank member**: the member of ``select``'s bank (:class:`.predictors.select.ValidatedPredictor`)
  whose own batches gave the smallest mean iteration time over the whole trace;
* the **best static split**: the one split, kept for the whole trace, with the smallest total time. For the
  linear law it is the scenario LP of :mod:`.predictors.robust_lp` with every iteration as a scenario, unnormalised.
  Largest-remainder rounding then makes it integer.
"""

from __future__ import annotations

import numpy as np

from primaldual.lbbsp.cpu import proportional_batches
from primaldual.lbbsp.predictors.robust_lp import robust_shares


def causal_lower_bound(persistent, noise_mean_max: float, tolerance: float = 1e-12) -> float:
    """``min_y max(max_i y_i, M * mean(y))`` s.t. ``y >= 0``, ``sum_i y_i / p_i = 1``
    (``proofs/lbbsp.md`` section 3): a lower bound on ``E[max_i p_i e_i x_i]`` over all splits ``x``.

    ``p`` holds the per-sample costs' predictable part (> 0), and ``M = E[max_i e_i] >= 1`` the noise's
    expected maximum (``E[e_i] = 1``). For a cap ``t`` on ``max y``, the least ``sum y`` is reached by
    filling the cheapest workers (smallest ``p``) up to ``t``. That sum decreases in ``t``, so the minimum
    is where ``t = M sum(y) / n``, found by bisection between ``1 / sum(1/p)`` (equal ``y``) and ``min p``
    (all the work on the cheapest worker). The lower end of the final bracket is returned, so rounding
    never lifts the bound.
    """
    persistent = np.sort(np.asarray(persistent, dtype=float))
    if persistent.ndim != 1 or persistent.size < 1 or np.any(~np.isfinite(persistent)) or np.any(persistent <= 0):
        raise ValueError("persistent: must be a non-empty vector of finite values > 0")
    if not (np.isfinite(noise_mean_max) and noise_mean_max >= 1.0):
        raise ValueError(f"noise_mean_max: E[max_i e_i] >= max_i E[e_i] = 1, got {noise_mean_max}")
    n = persistent.size

    def least_sum(cap: float) -> float:
        # Worker i absorbs cap / p_i of the unit budget; fill the cheapest first until the budget is spent.
        budget = np.clip(1.0 - np.concatenate([[0.0], np.cumsum(cap / persistent)[:-1]]), 0.0, None)
        return float(np.sum(np.minimum(cap, budget * persistent)))

    low, high = 1.0 / np.sum(1.0 / persistent), float(persistent[0])
    if noise_mean_max * least_sum(high) / n >= high:
        return noise_mean_max * least_sum(high) / n
    while high - low > tolerance * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if noise_mean_max * least_sum(middle) / n > middle else (low, middle)
    return low


#: Scenarios of the best static split's LP; beyond, the trace is subsampled at a stride (docs/lbbsp-traces.md).
MAX_STATIC_SCENARIOS = 2000


def static_split_batches(law) -> np.ndarray:
    """Integer batches of the best split kept for the whole trace (module docstring), for the
    :class:`.replay.ReplayLaw` ``law``. The common overhead ``a`` adds the same to every split. Cost: one LP of
    at most ``MAX_STATIC_SCENARIOS * n`` rows, whatever the trace's length."""
    costs = law.times - law.overhead
    # One LP row block per scenario: HiGHS takes ~1 s at 1,000 and ~60 s at 10,000 iterations (superlinear), so
    # a longer trace is fitted on every k-th iteration (k = ceil(T / MAX_STATIC_SCENARIOS), a documented stride)
    # and the split is still scored on the whole trace. Traces up to the cap (all CoV rows) are fitted whole.
    stride = -(-costs.shape[0] // MAX_STATIC_SCENARIOS)
    shares = robust_shares(costs[::stride], normalise=False)
    return proportional_batches(np.maximum(shares, 1e-12), law.global_batch)


def member_labels(model) -> list[str]:
    """Names of the bank members of a ``select`` model, with the EWMA smoothing and the robust windows."""
    labels = []
    for member in model.members:
        label = member.name
        if hasattr(member, "smoothing"):
            label += f" {member.smoothing:g}"
        elif hasattr(member, "multipliers"):
            label += f" {member.multipliers.maxlen}"
        labels.append(label)
    return labels


def _shares_of_gain(bsp: float, oracle: float, values: dict) -> dict:
    # Lemma 3's form, (B - Pi) / (B - O) on expected times (proofs/lbbsp.md section 3), not replay's
    # share_of_gain (B/Pi - 1) / (B/O - 1): the two differ by the factor O / Pi, and both fall as Pi grows.
    return {key: (bsp - value) / (bsp - oracle) for key, value in values.items()}


def mixture_limits(workers: int = 10, persistent_sigma: float = 0.3, noise_sigma: float = 0.3, draws: int = 20,
                   samples: int = 20000, fit_samples: int = 1500, seed: int = 0) -> dict:
    """Shares of the oracle's gain reachable on the mixture of ``proofs/lbbsp.md`` section 3, by Monte Carlo.

    Each draw fixes a predictable part ``p = exp(persistent_sigma g)`` and samples i.i.d. log-normal noise
    ``e`` (``noise_sigma``, scaled to mean 1), so the noise is exchangeable. It reports three shares of the
    oracle's gain over BSP. ``bound`` is the upper bound of Lemma 3 for any causal rule. ``law_aware_split``
    is the scenario LP fitted on ``fit_samples`` draws of the true law and scored on the rest, a causal rule
    that knows ``p`` and the noise law. ``proportional_on_p`` is the proportional rule on ``p``.
    ``share_of_oracle_gain`` summarises them over the draws (min / median / max); ``per_draw`` lists them.
    """
    if workers < 2 or draws < 1 or not 0 < fit_samples < samples:
        raise ValueError("workers >= 2, draws >= 1 and 0 < fit_samples < samples")
    if not (persistent_sigma >= 0 and noise_sigma > 0):
        raise ValueError("persistent_sigma >= 0 and noise_sigma > 0")
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(draws):
        persistent = np.exp(persistent_sigma * rng.normal(size=workers))
        noise = np.exp(noise_sigma * rng.normal(size=(samples, workers)) - noise_sigma ** 2 / 2)
        costs = persistent * noise
        split = robust_shares(costs[:fit_samples], normalise=False)
        held_out = costs[fit_samples:]
        bsp = float(np.mean(held_out.max(axis=1))) / workers
        oracle = float(np.mean(1.0 / np.sum(1.0 / held_out, axis=1)))
        noise_mean_max = float(np.mean(noise[fit_samples:].max(axis=1)))
        rows.append(_shares_of_gain(bsp, oracle, {
            "bound": causal_lower_bound(persistent, noise_mean_max),
            "law_aware_split": float(np.mean(np.max(held_out * split, axis=1))),
            "proportional_on_p": noise_mean_max / float(np.sum(1.0 / persistent))}))
    summary = {}
    for key in rows[0]:
        values = np.array([row[key] for row in rows])
        summary[key] = {"min": float(values.min()), "median": float(np.median(values)), "max": float(values.max())}
    return {"workers": workers, "persistent_sigma": persistent_sigma, "noise_sigma": noise_sigma, "draws": draws,
            "samples": samples, "fit_samples": fit_samples, "seed": seed, "share_of_oracle_gain": summary,
            "per_draw": rows}
