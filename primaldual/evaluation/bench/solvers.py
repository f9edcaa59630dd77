"""``primaldual bench solvers``'s measurements: HiGHS against SCIP (pyscipopt) on the same offline ILPs, and the exact
optimum with restart costs.

Two tables, each from fresh generated instances (``--seeds``):

* **solvers**: per size class (``tiny``, ``small`` with 5 and 10 jobs, and larger ``small``-preset sizes), the
  strong per-server ILP solved by each backend within ``--budget`` seconds (HiGHS through Pyomo, SCIP through
  the matrix path, each in its own process under the same limit): status, seconds, and SCIP's seconds over
  HiGHS's (a same-run ratio). ``--solver auto``'s table (:data:`primaldual.offline.solver_choice.AUTO_SOLVER_RULE`)
  is read off its medians.
* **restart** (``--restart-cost F``, default 0.1): per ``small`` seed, ``compare --opt --restart-cost F``'s OPT
  (the exact restart model from the best online schedule, :mod:`primaldual.evaluation.restart_opt`) within
  ``--budget``: proven or not, its seconds (and those of the start-cost relaxation solved before it), low and
  high, and the best online utility.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, fields

from primaldual.core.generate import generate
from primaldual.core.jsonable import jsonable

#: (label, jobs, horizon, servers per pool) on the ``small`` preset; ``tiny`` is the tiny preset.
SIZES = (("tiny", None, None, None), ("small-J5", 5, None, None), ("small", None, None, None),
         ("J20-T30-S6", 20, 30, 6))


def _instance(label: str, seed: int):
    jobs, horizon, servers = next((j, h, s) for name, j, h, s in SIZES if name == label)
    if label == "tiny":
        return generate("tiny", seed)
    if horizon is None:
        return generate("small", seed) if jobs is None else generate("small", seed, jobs=jobs)
    return generate("small", seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers,
                    load=jobs / (0.8 * horizon))


def _record(value) -> dict:
    return jsonable({f.name: getattr(value, f.name) for f in fields(value)})


@dataclass(frozen=True)
class SolverRun:
    """One backend's solve of one instance within the budget."""

    status: str
    seconds: float
    objective: float | None
    bound: float | None
    gap: float | None
    builder: str | None


@dataclass(frozen=True)
class SolverRow:
    """HiGHS and SCIP on one instance: whether both proved the same optimum, and SCIP's seconds over HiGHS's."""

    size: str
    seed: int
    placements: int
    highs: SolverRun
    scip: SolverRun
    agree: bool
    scip_over_highs_seconds: float


def _solve(instance, solver: str, budget: float) -> SolverRun:
    from primaldual.offline.options import EXACT
    from primaldual.offline.solve import solve_offline

    started = time.perf_counter()
    result = solve_offline(instance, EXACT.replace(solver=solver, time_limit=budget))
    return SolverRun(result.status, time.perf_counter() - started, result.objective, result.bound, result.gap,
                     result.details.get("builder"))


def solver_rows(labels, seeds, budget: float) -> list[SolverRow]:
    """HiGHS and SCIP on each size of ``labels`` (:data:`SIZES`) and seed, within ``budget`` seconds each."""
    from primaldual.offline.methods import placement_count

    rows = []
    for label in labels:
        for seed in seeds:
            instance = _instance(label, seed)
            highs, scip = _solve(instance, "highs", budget), _solve(instance, "scip", budget)
            agree = highs.status == scip.status == "optimal" and abs(highs.objective - scip.objective) <= 1e-6 * max(
                1.0, abs(highs.objective))
            rows.append(SolverRow(label, seed, placement_count(instance), highs, scip, agree,
                                  scip.seconds / max(highs.seconds, 1e-9)))
    return rows


@dataclass(frozen=True)
class RestartRow:
    """``compare --opt --restart-cost F`` on one ``small`` seed: its OPT interval, seconds, best online."""

    seed: int
    proven: bool
    low: float
    high: float
    seconds: float | None
    relaxation_seconds: float | None
    best_online: float
    status: str | None
    points: bool


def restart_rows(seeds, budget: float, restart_cost: float) -> list[RestartRow]:
    """The exact OPT with restart costs on each ``small`` seed, within ``budget`` seconds."""
    from primaldual.evaluation.pipeline import evaluate
    from primaldual.offline.options import SolveOptions
    from primaldual.simulation.scheduler import available_schedulers

    rows = []
    for seed in seeds:
        evaluation = evaluate(generate("small", seed), available_schedulers(),
                              solve=SolveOptions(time_limit=budget), restart_cost=restart_cost)
        interval, exact = evaluation.interval, evaluation.restart_opt
        rows.append(RestartRow(
            seed=seed, proven=interval.proven, low=interval.low, high=interval.high,
            seconds=evaluation.seconds.get("restart_opt"), relaxation_seconds=evaluation.seconds.get("opt"),
            best_online=max(interval.lower_candidates.get(k, 0.0) for k in interval.lower_candidates
                            if k.startswith("online:")),
            status=None if exact is None else exact.solve.status,
            points=all(r.lower == r.upper for r in evaluation.ratios.values())))
    return rows


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


@dataclass(frozen=True)
class SolverMedians:
    """Medians over the seeds of one size."""

    highs_seconds: float | None
    scip_seconds: float | None
    scip_over_highs: float | None
    placements: float | None


@dataclass(frozen=True)
class RestartTable:
    """The restart rows, how many are proven, and their median seconds (restart solve; with the relaxation)."""

    restart_cost: float
    rows: tuple[RestartRow, ...]

    def to_dict(self) -> dict:
        rows = self.rows
        return {"restart_cost": self.restart_cost, "rows": [_record(r) for r in rows],
                "proven": sum(r.proven for r in rows), "of": len(rows),
                "median_seconds": _median([r.seconds for r in rows]),
                "median_total_seconds": _median([(r.seconds or 0) + (r.relaxation_seconds or 0) for r in rows])}


@dataclass(frozen=True)
class SolversBench:
    """``bench solvers``: the solver rows (None when not run) and the restart table (None when not run)."""

    budget: float
    seeds: list[int]
    solvers: tuple[SolverRow, ...] | None = None
    restart: RestartTable | None = None

    def medians(self) -> dict[str, SolverMedians]:
        """Per size label, in the order run."""
        labels = list(dict.fromkeys(r.size for r in self.solvers or ()))
        return {label: SolverMedians(*(_median([f(r) for r in self.solvers if r.size == label]) for f in (
            lambda r: r.highs.seconds, lambda r: r.scip.seconds, lambda r: r.scip_over_highs_seconds,
            lambda r: r.placements))) for label in labels}

    def to_dict(self) -> dict:
        out = {"budget": self.budget, "seeds": self.seeds}
        if self.solvers is not None:
            out["solvers"] = [_record(r) for r in self.solvers]
            out["solver_medians"] = {label: _record(m) for label, m in self.medians().items()}
        if self.restart is not None:
            out["restart"] = self.restart.to_dict()
        return out


def run_solvers_bench(labels, seeds, budget: float, restart_cost: float = 0.1, only: str | None = None) -> SolversBench:
    """The solver table (unless ``only == "restart"``) and the restart table (unless ``only == "solvers"`` or
    ``restart_cost`` is 0)."""
    solvers = tuple(solver_rows(labels, seeds, budget)) if only != "restart" else None
    restart = None
    if only != "solvers" and restart_cost > 0:
        restart = RestartTable(restart_cost, tuple(restart_rows(seeds, budget, restart_cost)))
    return SolversBench(budget, seeds, solvers, restart)


def format_solvers_bench(result: SolversBench) -> str:
    """The text of ``bench solvers``."""
    lines = [f"{label:12} placements {m.placements:>7.0f}  highs {m.highs_seconds:8.2f} s  scip "
             f"{m.scip_seconds:8.2f} s  scip/highs {m.scip_over_highs:.2f}"
             for label, m in (result.medians() if result.solvers is not None else {}).items()]
    if result.restart is not None:
        r = result.restart.to_dict()
        lines.append(f"restart cost {r['restart_cost']:g}: proven on {r['proven']} of {r['of']} small seeds, median "
                     f"{r['median_seconds']:.1f} s")
        lines += [f"  seed {row.seed}: proven {row.proven}  [{row.low:.6f}, {row.high:.6f}]  {row.seconds:.1f} s  "
                  f"best online {row.best_online:.6f}" for row in result.restart.rows]
    return "\n".join(lines)


__all__ = ["RestartRow", "RestartTable", "SIZES", "SolverMedians", "SolverRow", "SolverRun", "SolversBench",
           "format_solvers_bench", "restart_rows", "run_solvers_bench", "solver_rows"]
