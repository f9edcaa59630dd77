"""Column generation for the LP relaxation of the packing formulation (14)-(18) of OASiS.

The **restricted master** (:class:`RestrictedMaster`) is (14)-(17) over a subset of each job's schedules, an LP
in HiGHS through ``highspy``: one column per schedule ``l`` of job ``i`` with objective ``f_i(t_il - a_i)``,
one capacity row per (slot, server, resource) cell that some column uses (eqs. (15)-(16); a cell no column
uses has price 0) and one row ``sum_l x_il <= 1`` per job (eq. (17)). Columns are added in place, so HiGHS
re-solves from the previous basis (a warm start).

**Pricing** is the dual subroutine of :mod:`primaldual.dual.subroutine`: at cell prices ``(p, q)`` (the master's duals
of (15)-(16)), :func:`primaldual.dual.subroutine.best_schedule` with each server's own capacity returns, for every job,
``max_l`` of the right-hand side of (20) exactly; a schedule whose payoff exceeds the job's dual ``mu_i`` of
(17) has a positive reduced cost and enters the master. One call per job per round.

**A certified bound every round.** For any prices ``p, q >= 0``, setting ``mu_i = max(0, max_l payoff)`` makes
``(mu, p, q)`` feasible for the dual (19)-(20), so by weak duality

    L(p, q) = sum_i mu_i + sum_cells p c  >=  LP(14)-(18)  >=  OPT,

the Lagrangian bound. Pricing computes exactly these ``mu_i``, so each complete round yields a valid bound;
the best one is kept, and a run stopped at its time limit still returns it.

**Dual stabilisation** (Wentges smoothing): prices are taken at ``alpha * centre + (1 - alpha) * duals``, where
the centre is the point of the best bound so far. Columns are added when their reduced cost at the master's
own duals is positive; a round that finds none (a mis-pricing) is repeated at the master's duals
(``alpha = 0``), and if that finds none either the master is optimal for the full LP and the bound meets it.

**Initial columns** come from the online schedulers' schedules (each is a feasible integer point of the master),
so the master is feasible from the start and price-and-branch is never worse than the best scheduler.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from primaldual.dual.subroutine import best_schedule
from primaldual.backends.highs import quiet_highs, size_highs_threads
from primaldual.core.instance import Instance
from primaldual.core.schedule import JobSchedule, Schedule

#: Relative distance between the best bound and the master's LP value at which column generation stops.
LP_TOLERANCE = 1e-6

#: A column enters the master only with a reduced cost above this (absolute, utility units).
REDUCED_COST_TOLERANCE = 1e-9

#: Weight of the stability centre in the smoothed prices.
SMOOTHING = 0.5

#: HiGHS's ``simplex_strategy`` for the master LP: 4, the primal simplex. Adding columns keeps the basis primal
#: feasible, so the primal simplex re-solves from it where the dual simplex (HiGHS's default, 1) starts over
#: from a dual infeasible one; measured in ``docs/measurements.md`` ("Offline strength").
MASTER_SIMPLEX_STRATEGY = 4

#: HiGHS's default ``simplex_strategy`` (the dual simplex), restored for price-and-branch's 0-1 program.
DEFAULT_SIMPLEX_STRATEGY = 1

#: A column is dropped from the master after this many consecutive rounds at value ~0 with a negative reduced
#: cost (:meth:`RestrictedMaster.drop_idle`); pricing may bring it back.
IDLE_ROUNDS = 8

#: A column's master value at or below this counts as 0 when deciding whether it is idle (an interior point
#: solution leaves every column a little above 0).
IDLE_VALUE = 1e-6


def column_key(job: int, schedule: JobSchedule) -> tuple[int, int, bytes, bytes]:
    """What makes two columns the same: the job and its schedule's window (the dense (T, H) bytes of a whole
    VC's schedule are 58 KiB per array, and the master keeps a key per column)."""
    return (int(job), int(schedule.start), schedule.window_workers.tobytes(),
            schedule.window_parameter_servers.tobytes())


@dataclass(frozen=True, eq=False)
class Column:
    """One schedule of one job as a column of (14)-(17): ``cells`` are capacity cells (see :class:`Cells`)
    and ``values`` the resource amounts it takes there; ``utility`` is ``f_i(t_il - a_i)``."""

    job: int
    utility: float
    schedule: JobSchedule
    cells: np.ndarray
    values: np.ndarray


class Cells:
    """Numbering of the capacity cells of (15)-(16): worker cell (t, h, r) is ``(t H + h) R + r``, PS cell
    (t, k, r) is ``T H R + (t K + k) R + r``. ``capacity[cell]`` is ``c_h^r`` or ``c_k^r``."""

    def __init__(self, instance: Instance):
        cluster = instance.cluster
        self.instance = instance
        self.horizon = instance.horizon
        self.n_worker = cluster.n_worker_servers
        self.n_ps = cluster.n_ps_servers
        self.n_resources = cluster.n_resources
        self.worker_size = self.horizon * self.n_worker * self.n_resources
        worker_capacity = np.tile(np.asarray(cluster.worker_capacity, dtype=float).ravel(), self.horizon)
        ps_capacity = np.tile(np.asarray(cluster.ps_capacity, dtype=float).ravel(), self.horizon)
        self.capacity = np.concatenate([worker_capacity, ps_capacity])
        worker_key = np.asarray(cluster.worker_capacity, dtype=float)
        if cluster.worker_types is not None:  # only servers of one gpu type are identical
            worker_key = np.column_stack([worker_key, cluster.worker_type_index])
        self.worker_groups = _identical(worker_key)
        self.ps_groups = _identical(np.asarray(cluster.ps_capacity, dtype=float))

        self.row_of_cell, self.row_capacity = self._aggregate()

    def _aggregate(self) -> tuple[np.ndarray, np.ndarray]:
        """Map every cell to its row of the aggregated master: one row per (slot, group of identical servers,
        resource), where a server of unique capacity is its own group; and the rows' summed capacities."""
        rows = np.empty(self.capacity.shape[0], dtype=np.int64)
        next_row = 0
        for n_servers, groups, offset in ((self.n_worker, self.worker_groups, 0),
                                          (self.n_ps, self.ps_groups, self.worker_size)):
            group_of = np.arange(n_servers)
            for members in groups:
                group_of[members] = members[0]
            _, compact = np.unique(group_of, return_inverse=True)
            n_groups = int(compact.max()) + 1
            slot = np.arange(self.horizon)[:, None, None]
            resource = np.arange(self.n_resources)[None, None, :]
            local = (slot * n_groups + np.asarray(compact).ravel()[None, :, None]) * self.n_resources + resource
            size = self.horizon * n_servers * self.n_resources
            rows[offset: offset + size] = next_row + local.ravel()
            next_row += self.horizon * n_groups * self.n_resources
        return rows, np.bincount(rows, weights=self.capacity, minlength=next_row)

    def prices(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Split a price vector over cells into ``p`` (T, H, R) and ``q`` (T, K, R)."""
        worker = vector[: self.worker_size].reshape(self.horizon, self.n_worker, self.n_resources)
        ps = vector[self.worker_size:].reshape(self.horizon, self.n_ps, self.n_resources)
        return worker, ps

    def column(self, job: int, schedule: JobSchedule) -> Column:
        """The column of ``schedule`` for ``job``: its cells, amounts and utility."""
        spec = self.instance.jobs[job]
        parts_cells, parts_values = [], []
        for counts, demand, n_servers, offset in (
            (schedule.workers, spec.worker_demand, self.n_worker, 0),
            (schedule.parameter_servers, spec.ps_demand, self.n_ps, self.worker_size),
        ):
            slots, servers = np.nonzero(counts)
            amount = counts[slots, servers].astype(float)
            used = np.flatnonzero(np.asarray(demand) > 0)
            base = (slots * n_servers + servers) * self.n_resources
            parts_cells.append((offset + base[:, None] + used[None, :]).ravel())
            parts_values.append((amount[:, None] * np.asarray(demand, dtype=float)[used][None, :]).ravel())
        completion = schedule.completion_slot()
        utility = 0.0 if completion is None else float(spec.utility(completion - spec.arrival))
        return Column(job, utility, schedule, np.concatenate(parts_cells).astype(np.int64),
                      np.concatenate(parts_values))


def _identical(capacity: np.ndarray) -> list[np.ndarray]:
    """Groups (of two or more) of servers with the same capacity vector."""
    _, inverse = np.unique(capacity, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    return [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1) if np.count_nonzero(inverse == g) > 1]


class RestrictedMaster:
    """The restricted master LP (or IP) of (14)-(17) in HiGHS, grown column by column (module docstring).

    With ``aggregate=True`` the capacity rows of identical servers are summed, per slot and resource: a
    relaxation of (15)-(16) for a given set of columns, whose duals are the same for identical servers. With
    all columns its LP value is still LP(14)-(18): the LP is symmetric under permuting identical servers, so
    the Lagrangian dual has a symmetric optimum, and the aggregated master's dual is exactly the Lagrangian dual
    over symmetric prices. Its duals do not leave idle copies of a busy server at price 0, which is what makes
    the per-server master's Lagrangian bound stay near the trivial one for many rounds. A 0-1 solution of the
    aggregated master gives per-slot counts; :func:`primaldual.offline.first_fit.place_on_servers` puts them on servers.
    """

    def __init__(self, cells: Cells, jobs, threads: int | None = None, aggregate: bool = False,
                 simplex_strategy: int = DEFAULT_SIMPLEX_STRATEGY, interior: bool = False):
        self.cells = cells
        self.row_of_cell = cells.row_of_cell if aggregate else np.arange(cells.capacity.shape[0])
        self.row_capacity = cells.row_capacity if aggregate else cells.capacity
        self.jobs = tuple(int(i) for i in jobs)
        self.job_row = {i: r for r, i in enumerate(self.jobs)}
        self.cell_row: dict[int, int] = {}
        self.row_cell: list[int] = []
        self.columns: list[Column] = []
        self._seen: set[tuple[int, int, bytes, bytes]] = set()
        self._idle = np.zeros(0, dtype=np.int64)  # per column, consecutive idle rounds (drop_idle)
        self._values = np.zeros(0)  # per column, its value in the last LP solved
        self.highs = quiet_highs()
        if threads is not None:
            self.highs.setOptionValue("threads", int(threads))
        self.highs.setOptionValue("simplex_strategy", int(simplex_strategy))
        if interior:  # see interior_master: an interior point, no crossover
            self.highs.setOptionValue("solver", "ipm")
            self.highs.setOptionValue("run_crossover", "off")
        size_highs_threads(threads)  # HiGHS keeps one thread scheduler per process, sized by the first solve
        inf = highspy.kHighsInf
        n = len(self.jobs)
        self.highs.addRows(n, np.full(n, -inf), np.ones(n), 0, np.zeros(n, dtype=np.int32),
                           np.zeros(0, dtype=np.int32), np.zeros(0))
        self.highs.changeObjectiveSense(highspy.ObjSense.kMaximize)

    @property
    def values(self) -> np.ndarray:
        """Every column's value in the last LP solved (0 for the columns added since)."""
        return self._values

    @property
    def n_rows(self) -> int:
        return len(self.jobs) + len(self.row_cell)

    def add(self, columns) -> int:
        """Add the columns not already present; return how many were added."""
        fresh = []
        for column in columns:
            key = column_key(column.job, column.schedule)
            if key not in self._seen and column.job in self.job_row:
                self._seen.add(key)
                fresh.append(column)
        if not fresh:
            return 0
        entries = [self._entries(c) for c in fresh]
        new_cells = np.unique(np.concatenate([rows for rows, _ in entries]))
        new_cells = [int(c) for c in new_cells if int(c) not in self.cell_row]
        if new_cells:
            first = self.n_rows
            for offset, cell in enumerate(new_cells):
                self.cell_row[cell] = first + offset
                self.row_cell.append(cell)
            m = len(new_cells)
            self.highs.addRows(m, np.full(m, -highspy.kHighsInf), self.row_capacity[new_cells], 0,
                               np.zeros(m, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        starts, indices, values = [], [], []
        position = 0
        for column, (keys, amounts) in zip(fresh, entries):
            starts.append(position)
            rows = [self.job_row[column.job]] + [self.cell_row[int(c)] for c in keys]
            indices.extend(rows)
            values.append(np.concatenate([[1.0], amounts]))
            position += len(rows)
        n = len(fresh)
        self.highs.addCols(n, np.array([c.utility for c in fresh]), np.zeros(n), np.full(n, highspy.kHighsInf),
                           position, np.array(starts, dtype=np.int32), np.array(indices, dtype=np.int32),
                           np.concatenate(values))
        self.columns.extend(fresh)
        self._idle = np.concatenate([self._idle, np.zeros(n, dtype=np.int64)])
        self._values = np.concatenate([self._values, np.zeros(n)])
        return n

    def drop_idle(self, prices: np.ndarray, mu: dict, keep=frozenset()) -> int:
        """Delete the columns idle for :data:`IDLE_ROUNDS` rounds in a row (value at most :data:`IDLE_VALUE`
        in the last LP and a negative reduced cost at its duals ``prices``, ``mu``), except those whose
        :func:`column_key` is in ``keep`` (the incumbent's: price-and-branch's start); returns how many.

        Correctness: the master over fewer columns is still a restriction of (14)-(17), so its 0-1 solutions
        stay feasible schedules, and no bound is read from it (the Lagrangian bound comes from pricing, which
        sees every schedule and may bring a dropped column back: it leaves the seen set). A column at value 0
        is nonbasic, so the simplex's basis survives the deletion. Cost: one reduced cost per column a round."""
        if not self.columns:
            return 0
        reduced = np.array([reduced_cost(c, prices, mu) for c in self.columns])
        idle = (self._values <= IDLE_VALUE) & (reduced < -REDUCED_COST_TOLERANCE)
        self._idle = np.where(idle, self._idle + 1, 0)
        drop = np.flatnonzero(self._idle >= IDLE_ROUNDS)
        drop = np.array([j for j in drop if column_key(self.columns[j].job, self.columns[j].schedule) not in keep],
                        dtype=np.int64)
        if drop.size == 0:
            return 0
        self.highs.deleteCols(int(drop.size), drop.astype(np.int32))
        for j in drop:
            column = self.columns[j]
            self._seen.discard(column_key(column.job, column.schedule))
        kept = np.ones(len(self.columns), dtype=bool)
        kept[drop] = False
        self.columns = [c for c, k in zip(self.columns, kept) if k]
        self._idle, self._values = self._idle[kept], self._values[kept]
        return int(drop.size)

    def _entries(self, column: Column) -> tuple[np.ndarray, np.ndarray]:
        """The column's (row key, amount) pairs, summed over the cells that share a row."""
        keys, inverse = np.unique(self.row_of_cell[column.cells], return_inverse=True)
        return keys, np.bincount(np.asarray(inverse).ravel(), weights=column.values, minlength=keys.size)

    def solve_lp(self, time_limit: float | None) -> tuple[bool, float, np.ndarray, np.ndarray]:
        """Solve the LP; return (optimal, value, cell prices over all cells (>= 0), job duals ``mu``)."""
        # HiGHS checks time_limit against its run clock, which adds up over every run of this object.
        self.highs.setOptionValue("time_limit", self.highs.getRunTime() + float(time_limit) if time_limit
                                  else highspy.kHighsInf)
        self.highs.run()
        optimal = self.highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
        solution = self.highs.getSolution()
        values = np.asarray(solution.col_value, dtype=float)
        self._values = values if values.shape[0] == len(self.columns) else np.zeros(len(self.columns))
        duals = np.maximum(np.asarray(solution.row_dual, dtype=float), 0.0)
        row_prices = np.zeros(self.row_capacity.shape[0])
        if self.row_cell:
            row_prices[np.array(self.row_cell)] = duals[len(self.jobs):]
        prices = row_prices[self.row_of_cell]  # every cell of a row at the row's price
        mu = dict(zip(self.jobs, duals[: len(self.jobs)]))
        return optimal, float(self.highs.getInfo().objective_function_value), prices, mu

    def solve_integer(self, time_limit: float, start: Schedule | None,
                      presolve: bool = True) -> tuple[Schedule | None, str]:
        """Price-and-branch: the master over the generated columns as a 0-1 program; the chosen columns' job
        schedules (None if none; for an aggregated master they still need
        :func:`~primaldual.offline.first_fit.place_on_servers`) and HiGHS's
        model status. ``start`` (a schedule whose columns are in the master) is the MIP start."""
        n = len(self.columns)
        if n == 0:
            return Schedule({}), "optimal"
        self.highs.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                         np.full(n, highspy.HighsVarType.kInteger, dtype=np.uint8))
        self.highs.changeColsBounds(n, np.arange(n, dtype=np.int32), np.zeros(n), np.ones(n))
        # The MIP's LPs are re-solved after bound changes, where the dual simplex is the one that warm-starts.
        self.highs.setOptionValue("simplex_strategy", DEFAULT_SIMPLEX_STRATEGY)
        self.highs.setOptionValue("solver", "choose")
        self.highs.setOptionValue("run_crossover", "on")
        if start is not None:
            self.highs.setSolution(self._start_vector(start))
        # A MIP times itself from its own start (unlike the LPs, which read HiGHS's run clock), but its presolve
        # is not interrupted: on a 200 x 60 master of 5,876 columns presolve alone took 6.3 s of a 5.6 s limit.
        # Without it the limit holds, but a converged master of a trace week is no longer proven optimal in
        # time (docs/measurements.md, "Offline strength"), so it stays on by default.
        self.highs.setOptionValue("presolve", "on" if presolve else "off")
        self.highs.setOptionValue("time_limit", max(0.1, float(time_limit)))
        self.highs.setOptionValue("mip_rel_gap", 1e-6)
        self.highs.run()
        status = self.highs.modelStatusToString(self.highs.getModelStatus())
        if self.highs.getInfo().primal_solution_status != 2:  # 2: a feasible solution
            return None, status
        x = np.asarray(self.highs.getSolution().col_value)
        chosen = {self.columns[j].job: self.columns[j].schedule for j in np.flatnonzero(x > 0.5)}
        return Schedule(chosen), status

    def _start_vector(self, start: Schedule):
        keys = {column_key(i, s) for i, s in start.assignments.items()}
        values = np.array([1.0 if column_key(c.job, c.schedule) in keys else 0.0 for c in self.columns])
        solution = highspy.HighsSolution()
        solution.col_value = values.tolist()
        solution.value_valid = True
        return solution


@dataclass(frozen=True, eq=False)
class PricingRound:
    """Every job priced at one point: the Lagrangian bound there and the best schedule of each job."""

    bound: float
    columns: tuple[Column, ...]
    complete: bool


def price_all(cells: Cells, jobs, prices: np.ndarray, deadline: float | None = None) -> PricingRound:
    """Price every job at ``prices`` (one dual-subroutine call each) and return the Lagrangian bound
    ``sum_i mu_i + prices . capacity``. On a heterogeneous cluster the typed subroutine's schedule (progress
    rounded down: feasible) is the column and its relaxed ``mu`` (rounded up: at least eq. (21)'s) the bound's
    term, two calls per job (:mod:`primaldual.dual.typed`). ``complete`` is False (and the bound meaningless) if the deadline
    (``time.time()``) passed before every job was priced."""
    instance = cells.instance
    worker_prices, ps_prices = cells.prices(prices)
    cluster = instance.cluster
    mu_sum = 0.0
    columns = []
    for i in jobs:
        if deadline is not None and time.time() > deadline:
            return PricingRound(float("inf"), tuple(columns), False)
        result = best_schedule(instance, i, worker_prices, ps_prices, cluster.worker_capacity, cluster.ps_capacity)
        if cluster.worker_types is not None:  # the typed search's plan is feasible, its relaxed mu a bound
            mu_sum += best_schedule(instance, i, worker_prices, ps_prices, cluster.worker_capacity,
                                    cluster.ps_capacity, plan=False, relaxed=True).mu
        else:
            mu_sum += result.mu
        if result.schedule is not None and result.mu > 0:
            columns.append(cells.column(i, result.schedule))
    return PricingRound(float(mu_sum + prices @ cells.capacity), tuple(columns), True)


def reduced_cost(column: Column, prices: np.ndarray, mu: dict) -> float:
    """The column's utility minus its cost at ``prices`` minus its job's dual ``mu_i`` of (17)."""
    return column.utility - float(column.values @ prices[column.cells]) - mu.get(column.job, 0.0)


__all__ = ["DEFAULT_SIMPLEX_STRATEGY", "IDLE_ROUNDS", "MASTER_SIMPLEX_STRATEGY", "Cells", "Column", "column_key",
           "PricingRound", "RestrictedMaster",
           "price_all", "reduced_cost"]
