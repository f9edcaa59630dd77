"""Scenario-robust batch sizing: hedge against workers that spike, instead of foreseeing the spikes ([design]).

A point predictor guesses each worker's next speed and the CPU rule splits the global batch in proportion
(:mod:`.cpu`). When a worker is ~100x slower in single, unforeseeable iterations (the CoV rows of
``primaldual/lbbsp/data/coefficient_variation.csv`` near their bound), no point guess helps: guessing the
spike misses when it does not come, guessing no spike pays 100x when it does. The robust rule instead takes
the last ``W`` per-sample cost vectors the barriers measured as equally likely *scenarios* for the coming
iteration and chooses the split that minimises the expected iteration time over them (or its conditional
value at risk, the mean of the worst ``1 - tail`` share of scenarios). For the linear law of
``primaldual/lbbsp/replay.py`` the iteration time of scenario ``s`` is ``a + max_i c[s, i] x_i``, a max of
affine functions of the batches, so the problem is the linear program

    minimise   (1/S) sum_s tau_s
    subject to tau_s >= c[s, i] x_i   (every s, i),    sum_i x_i = 1,    x >= 0,

solved exactly by HiGHS (the common overhead ``a`` and the global batch only shift and scale it). With
``tail = beta > 0`` the objective is ``eta + sum_s u_s / ((1 - beta) S)`` with ``u_s >= tau_s - eta``,
``u >= 0`` (Rockafellar-Uryasev). Each scenario is first divided by its median cost: a slowdown common to
all workers does not change the best split, and without the division an iteration in which everybody was
slow would outweigh the others.

Properties (tested in ``tests/lbbsp/test_lbbsp_robust.py``): when every scenario is the same cost vector up
to a factor, the unique optimum is ``x proportional to 1/c``, i.e. the proportional rule on the measured
speeds (returned in closed form, so that solver tolerances cannot move a rounding tie); the rule only reads
the barriers already passed. :class:`RobustPredictor` exposes the rule through the predictor interface: its
"speeds" are the optimal shares, so the CPU rule's integer rounding (``largest_remainder``: sum exactly X,
bounds respected) turns them into batches.
"""

from __future__ import annotations

from collections import deque

import numpy as np

# A worker the LP gives nothing still gets min_batch from the CPU rule, which needs speeds > 0.
_FLOOR_SHARE = 1e-9
_BANNER_SHOWN: list = []


def _same_up_to_scale(costs: np.ndarray) -> bool:
    ratios = costs / costs[0]
    return bool(np.all(np.abs(ratios - ratios[:, :1]) <= 1e-12 * ratios[:, :1]))


def robust_shares(costs, tail: float = 0.0) -> np.ndarray:
    """Shares ``x >= 0``, ``sum x = 1``, minimising the mean (``tail = 0``) or the CVaR at level ``tail`` of
    ``max_i costs[s, i] x_i`` over the scenario rows ``s`` of ``costs`` (> 0, shape (S, n))."""
    costs = np.asarray(costs, dtype=float)
    if costs.ndim != 2 or costs.shape[0] < 1 or np.any(~np.isfinite(costs)) or np.any(costs <= 0):
        raise ValueError("costs: must be a non-empty (scenarios, workers) array of finite values > 0")
    if not 0.0 <= tail < 1.0:
        raise ValueError(f"tail: must be in [0, 1), got {tail}")
    costs = costs / np.median(costs, axis=1, keepdims=True)
    if _same_up_to_scale(costs):
        inverse = 1.0 / costs[0]
        return inverse / inverse.sum()
    return _solve_lp(costs, tail)


def _solve_lp(costs: np.ndarray, tail: float) -> np.ndarray:
    import highspy

    from primaldual.solvers import _size_highs_threads

    scenarios, n = costs.shape
    cvar = tail > 0.0
    # Columns: x (n), tau (S), and for the CVaR eta (1, free) and u (S).
    tau0, eta, u0 = n, n + scenarios, n + scenarios + 1
    columns = n + scenarios + (1 + scenarios if cvar else 0)
    objective = np.zeros(columns)
    if cvar:
        objective[eta] = 1.0
        objective[u0:] = 1.0 / ((1.0 - tail) * scenarios)
    else:
        objective[tau0:] = 1.0 / scenarios
    lower = np.zeros(columns)
    upper = np.full(columns, highspy.kHighsInf)
    upper[:n] = 1.0
    if cvar:
        lower[eta] = -highspy.kHighsInf
    starts, indices, values = [], [], []
    for s in range(scenarios):  # tau_s - c[s, i] x_i >= 0
        for i in range(n):
            starts.append(len(indices))
            indices += [tau0 + s, i]
            values += [1.0, -costs[s, i]]
    if cvar:
        for s in range(scenarios):  # u_s - tau_s + eta >= 0
            starts.append(len(indices))
            indices += [u0 + s, tau0 + s, eta]
            values += [1.0, -1.0, 1.0]
    starts.append(len(indices))
    indices += list(range(n))
    values += [1.0] * n
    rows = len(starts)
    row_lower = np.zeros(rows)
    row_upper = np.full(rows, highspy.kHighsInf)
    row_lower[-1] = row_upper[-1] = 1.0
    _size_highs_threads(None)  # HiGHS keeps one thread scheduler per process (see primaldual/solvers.py)
    if _BANNER_SHOWN:
        highs = highspy.Highs()
    else:
        from primaldual.learned_prices import _stdout_silenced

        with _stdout_silenced():  # the banner of the first solver would break --json output
            highs = highspy.Highs()
        _BANNER_SHOWN.append(True)
    highs.setOptionValue("output_flag", False)
    highs.addCols(columns, objective, lower, upper, 0, np.array([], dtype=np.int32), np.array([], dtype=np.int32),
                  np.array([]))
    highs.addRows(rows, row_lower, row_upper, len(indices), np.array(starts, dtype=np.int32),
                  np.array(indices, dtype=np.int32), np.array(values))
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        # x = equal shares is feasible and the objective is bounded below by 0: anything else is a solver failure.
        raise RuntimeError(f"robust batch sizing: HiGHS returned {highs.getModelStatus()}")
    shares = np.clip(np.asarray(highs.getSolution().col_value[:n], dtype=float), 0.0, None)
    return shares / shares.sum()


class RobustPredictor:
    """The robust rule in the predictor interface: predicts "speeds" equal to the optimal shares over
    scenarios built from the last measured per-sample cost vectors (module docstring).

    ``scenarios = "levels"`` (``robust``) takes the last ``window`` cost vectors themselves: a worker that was
    slow in some of them gets less work in every iteration. ``scenarios = "changes"`` (``robust_changes``)
    applies the last ``window`` per-worker relative changes ``c^{s} / c^{s-1}`` to the latest costs: the
    current state, perturbed as much as it moved recently, which hedges against noise around a level that
    drifts.
    """

    name = "robust"

    def __init__(self, n_workers: int, window: int = 5, tail: float = 0.0, scenarios: str = "levels"):
        if scenarios not in ("levels", "changes"):
            raise ValueError(f"scenarios: must be 'levels' or 'changes', got {scenarios!r}")
        self.costs: deque = deque(maxlen=window + (scenarios == "changes"))
        self.tail, self.scenarios = tail, scenarios
        self.shares = None

    def observe(self, speed, exogenous=None) -> None:
        self.costs.append(1.0 / np.asarray(speed, dtype=float))
        costs = np.array(self.costs)
        if self.scenarios == "changes":
            costs = costs[-1:] * (costs[1:] / costs[:-1]) if len(costs) > 1 else costs
        self.shares = np.maximum(robust_shares(costs, self.tail), _FLOOR_SHARE)

    def predict(self) -> np.ndarray | None:
        return None if self.shares is None else self.shares.copy()


class RobustChangesPredictor(RobustPredictor):
    name = "robust_changes"

    def __init__(self, n_workers: int, window: int = 10, tail: float = 0.0):
        super().__init__(n_workers, window, tail, "changes")
