"""The dual subroutine as the paper states it (eqs. (20)-(21); proofs/oasis.md section 2), in plain loops.

This file is the readable definition. :mod:`primaldual.dual.kernel` compiles these very functions with numba
(``PRIMALDUAL_KERNEL=reference`` runs them as Python), so there is one text of the algorithm and nothing to
drift apart. Every function takes numpy arrays and numbers only; prices, free amounts and utilities are
prepared by :func:`primaldual.dual.subroutine.best_schedule`.

Notation: window slot ``s`` is absolute slot ``arrival + s``; ``V`` (``work``) worker-slots are needed; at
most ``N`` (``max_workers``) workers run in a slot; ``Z(D)`` (``ps_needed[D]``) PSs serve ``D`` workers.

(a) ``c_s(D)``, the cheapest placement of ``D`` workers and their ``Z(D)`` PSs in slot ``s``: each pool is
    filled cheapest server first (:func:`pool_costs`; servers sorted by unit price, ties to the lower index).
(b) ``F_s(v) = min_{D} F_{s-1}(v - D) + c_s(D)``, ``F_{-1}(0) = 0`` (:func:`search`); ties go to the fewest
    workers in the later slot.
(c) The completion slot is the earliest maximiser of ``f(s) - F_s(V)`` (or, for the ``greedy`` ablation, the
    highest utility, then least cost, then earliest); the search stops once ``f(s + 1) - floor <= max(0,
    best payoff)``, as no later completion can do better.

The sums are the same IEEE doubles as the vectorised programme this replaced (sequential sums in the same
order), so decisions are bit-identical.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.standalone import FIT_TOLERANCE


def in_slot(values: np.ndarray, t: int) -> np.ndarray:
    """Prices or free amounts in slot ``t``: ``values`` holds one row per slot, or one row for every slot."""
    return values[t] if values.shape[0] > 1 else values[0]


def unit_price(prices: np.ndarray, server: int, demand: np.ndarray) -> float:
    """``sum_r prices[server, r] demand[r]`` over the demanded resources, in resource order."""
    total = 0.0
    for r in range(demand.shape[0]):
        if demand[r] > 0:
            total += prices[server, r] * demand[r]
    return total


def units_that_fit(free: np.ndarray, server: int, demand: np.ndarray, limit: int) -> int:
    """How many units of ``demand`` fit in ``free[server]``, capped at ``limit`` (zero demand fits anywhere): the
    rule of :func:`primaldual.core.standalone.fit_counts`, one server at a time."""
    fit = np.inf
    for r in range(demand.shape[0]):
        if demand[r] > 0:
            fit = min(fit, np.floor((free[server, r] + FIT_TOLERANCE) / demand[r]))
    return int(min(max(fit, 0.0), limit))


def pool_prices(prices: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Each server's price of one unit of ``demand`` in one slot."""
    price = np.empty(prices.shape[0])
    for h in range(prices.shape[0]):
        price[h] = unit_price(prices, h, demand)
    return price


def next_server(free: np.ndarray, demand: np.ndarray, limit: int, price: np.ndarray, visited: np.ndarray):
    """The cheapest server not ``visited`` yet with room for a unit (ties to the lower index), marked visited,
    and its cap (units that fit, at most ``limit``); ``(-1, 0)`` if none is left. Called repeatedly, it lists
    the usable servers in the order of a stable sort by price."""
    while True:
        best = -1
        for h in range(price.shape[0]):
            if not visited[h] and (best < 0 or price[h] < price[best]):
                best = h
        if best < 0:
            return -1, 0
        visited[best] = True
        cap = units_that_fit(free, best, demand, limit)
        if cap > 0:
            return best, cap


def pool_costs(prices: np.ndarray, free: np.ndarray, demand: np.ndarray, limit: int) -> np.ndarray:
    """``cost[n]``, the least cost of ``n = 0..limit`` units on one pool in one slot (``+inf`` past what fits):
    the running sum of the unit prices, cheapest server first."""
    price = pool_prices(prices, demand)
    return pool_costs_among(price, np.zeros(price.shape[0], dtype=np.bool_), free, demand, limit)


def pool_costs_among(price: np.ndarray, visited: np.ndarray, free: np.ndarray, demand: np.ndarray,
                     limit: int) -> np.ndarray:
    """:func:`pool_costs` on the servers not ``visited`` (marked as they are used): one GPU type's servers."""
    cost = np.full(limit + 1, np.inf)
    cost[0] = 0.0
    units, total = 0, 0.0
    while units < limit:
        server, cap = next_server(free, demand, limit, price, visited)
        if server < 0:
            break
        for _ in range(min(cap, limit - units)):
            total += price[server]
            units += 1
            cost[units] = total
    return cost


def slot_costs(worker_prices, ps_prices, worker_free, ps_free, worker_demand, ps_demand, ps_needed,
               ps_max: int) -> np.ndarray:
    """Step (a) for one slot: ``c(D) = WorkerCost(D) + PSCost(Z(D))`` for ``D = 0..N``, ``+inf`` where they do not
    fit or ``Z(D) > D`` (eq. (7))."""
    max_workers = ps_needed.shape[0] - 1
    workers = pool_costs(worker_prices, worker_free, worker_demand, max_workers)
    parameter_servers = pool_costs(ps_prices, ps_free, ps_demand, ps_max)
    cost = np.empty(max_workers + 1)
    for d in range(max_workers + 1):
        cost[d] = workers[d] + parameter_servers[min(ps_needed[d], ps_max)]
        if ps_needed[d] > d:
            cost[d] = np.inf
    cost[0] = 0.0
    return cost


def dp_step(before: np.ndarray, reach_before: int, cost: np.ndarray, work: int, row: np.ndarray,
            choice: np.ndarray) -> int:
    """Step (b) for one slot: ``row[v] = F_s(v) = min_D before[v - D] + cost[D]`` over the reachable states, and
    ``choice[v]`` the first minimising ``D`` (the fewest workers). ``before[v]`` is ``+inf`` past
    ``reach_before``; returns the reach of ``F_s`` (at most ``work``)."""
    most = cost.shape[0] - 1  # the most workers that fit: the last finite c(D) (c(0) = 0)
    while cost[most] == np.inf:
        most -= 1
    reach = min(work, reach_before + most)
    for v in range(reach + 1):
        low = max(0, v - reach_before)
        row[v] = before[v - low] + cost[low]
        choice[v] = low
        for d in range(low + 1, min(most, v) + 1):
            candidate = before[v - d] + cost[d]
            if candidate < row[v]:
                row[v] = candidate
                choice[v] = d
    return reach


def cannot_pay(utility: np.ndarray, work: int, max_workers: int, floor: float) -> bool:
    """Whether the search can be skipped with ``mu = 0`` (:func:`primaldual.dual.cost_floor.cost_floor_of`): the
    window ``utility`` is empty, there is no work, or finishing at full speed from the window's first slot (the
    earliest completion) cannot pay the cost ``floor``; utility only falls later and every schedule costs at
    least the floor, so no completion can have a positive payoff."""
    if utility.shape[0] == 0 or work < 1 or max_workers < 1:
        return True
    fastest = -(-work // max_workers) - 1
    return fastest >= utility.shape[0] or utility[fastest] - floor <= 0.0


def completion_step(s: int, total: float, utility: np.ndarray, payoff_objective: bool, best: int,
                    best_payoff: float, best_utility: float, best_cost: float):
    """Step (c) at window slot ``s`` of cost ``total = F_s(V)``: the best so far, ``(best, best_payoff,
    best_utility, best_cost)`` (the earliest maximiser; for ``greedy`` the highest utility, then least cost)."""
    if total < np.inf:
        if payoff_objective:
            if utility[s] - total > best_payoff:
                best, best_payoff = s, utility[s] - total
        elif utility[s] > best_utility or (utility[s] == best_utility and total < best_cost):
            best, best_utility, best_cost = s, utility[s], total
    return best, best_payoff, best_utility, best_cost


def stops_after(s: int, utility: np.ndarray, payoff_objective: bool, floor: float, best_payoff: float,
                best_utility: float) -> bool:
    """The early stop after window slot ``s``: no later completion can beat the best (module docstring, (c))."""
    if s + 1 >= utility.shape[0]:
        return False
    if payoff_objective:
        return utility[s + 1] - floor <= max(0.0, best_payoff)
    return utility[s + 1] < best_utility


def search(worker_prices, ps_prices, worker_free, ps_free, worker_demand, ps_demand, ps_needed, ps_max: int,
           arrival: int, work: int, utility: np.ndarray, payoff_objective: bool, early_stop: bool,
           floor: float):
    """Steps (a)-(c) over the window ``arrival..arrival + len(utility) - 1``.

    Prices and free amounts are (T, servers, R), or (1, servers, R) for every slot alike.
    Returns ``(best, counts, completion_cost)``: the best window slot (-1 if none), the workers per window
    slot of its schedule, and ``C(s) = F_s(V)`` per window slot (``nan`` past an early stop)."""
    n_slots = utility.shape[0]
    completion_cost = np.full(n_slots, np.nan)
    choice = np.empty((n_slots, work + 1), dtype=np.int32)  # the back-pointers D*(s, v)
    before = np.full(work + 1, np.inf)  # F_{s-1}
    before[0] = 0.0
    row = np.full(work + 1, np.inf)
    reach_before = 0  # F_{s-1}(v) = +inf for v > reach_before
    best, best_payoff, best_utility, best_cost = -1, -np.inf, -np.inf, np.inf
    for s in range(n_slots):
        t = arrival + s
        cost = slot_costs(in_slot(worker_prices, t), in_slot(ps_prices, t), in_slot(worker_free, t),
                          in_slot(ps_free, t), worker_demand, ps_demand, ps_needed, ps_max)
        reach = dp_step(before, reach_before, cost, work, row, choice[s])
        total = row[work] if reach == work else np.inf
        completion_cost[s] = total
        best, best_payoff, best_utility, best_cost = completion_step(
            s, total, utility, payoff_objective, best, best_payoff, best_utility, best_cost)
        if early_stop and stops_after(s, utility, payoff_objective, floor, best_payoff, best_utility):
            break
        before, row, reach_before = row, before, reach
    return best, workers_per_slot(choice, best, work, n_slots), completion_cost


def workers_per_slot(choice: np.ndarray, best: int, work: int, n_slots: int) -> np.ndarray:
    """The schedule's workers per window slot, back from ``(best, V)`` along the back-pointers."""
    counts = np.zeros(n_slots, dtype=np.int64)
    remaining = work
    for s in range(best, -1, -1):
        counts[s] = choice[s, remaining]
        remaining -= counts[s]
    return counts


def fill(prices: np.ndarray, free: np.ndarray, demand: np.ndarray, limit: int, units: int,
         out: np.ndarray) -> None:
    """Place ``units`` on one pool in one slot cheapest server first (``out[server] = units taken there``), as
    :func:`pool_costs` counts them."""
    price = pool_prices(prices, demand)
    fill_among(price, np.zeros(price.shape[0], dtype=np.bool_), free, demand, limit, units, out)


def fill_among(price: np.ndarray, visited: np.ndarray, free: np.ndarray, demand: np.ndarray, limit: int,
               units: int, out: np.ndarray) -> None:
    """:func:`fill` on the servers not ``visited``, at unit prices ``price``."""
    while units > 0:
        server, cap = next_server(free, demand, limit, price, visited)
        if server < 0:
            return
        out[server] = min(units, cap)
        units -= out[server]


def place(worker_prices, ps_prices, worker_free, ps_free, worker_demand, ps_demand, ps_needed, ps_max: int,
          arrival: int, counts: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> None:
    """The schedule on servers: each window slot's workers and their PSs by the cheapest fill of step (a),
    written into ``workers`` (T, H) and ``parameter_servers`` (T, K)."""
    max_workers = ps_needed.shape[0] - 1
    for s in range(counts.shape[0]):
        if counts[s] > 0:
            t = arrival + s
            fill(in_slot(worker_prices, t), in_slot(worker_free, t), worker_demand, max_workers, counts[s],
                 workers[t])
            fill(in_slot(ps_prices, t), in_slot(ps_free, t), ps_demand, ps_max, ps_needed[counts[s]],
                 parameter_servers[t])


#: The functions :mod:`primaldual.dual.kernel` compiles, callees before callers.
KERNEL_FUNCTIONS = ("in_slot", "unit_price", "units_that_fit", "pool_prices", "next_server", "pool_costs_among",
                    "pool_costs", "slot_costs", "dp_step", "workers_per_slot", "cannot_pay", "completion_step",
                    "stops_after", "search", "fill_among", "fill", "place")
