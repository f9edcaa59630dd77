"""``primaldual bench offline``'s measurements: how far the offline ILP scales, and how tight each formulation's LP bound is.

For the ``tiny`` and ``small`` presets and a ladder of larger generated sizes, one row each with: variables and
constraints of the (strong) model, Pyomo build seconds, solve seconds (the solve call, Pyomo's translation
included) and the solver's own seconds, the ratio solve / build (a same-run ratio, so it means something on any
machine), the status within the budget, and the LP relaxation value of each formulation and the pooled
relaxation divided by the ILP optimum (the incumbent when the optimum is not proven; then flagged). The ladder
stops at the first size not proven optimal within the budget, which is reported as the limit.

Per row too: the build seconds of the Pyomo model and of the direct matrix path (:mod:`primaldual.offline.matrix`)
in this process, and their ratio; and column generation with price-and-branch (``--method cg``) within the same
budget: its certified bound, its schedule's utility, its gap and its bound over the strong LP relaxation. The
``paper`` size runs only when named with ``--sizes`` (its ILP does not finish; column generation does).

``--against-raw`` instead compares, per instance and in the same run, the package's solve with plain highspy on
the model ``solve --write-mps`` exports (:mod:`primaldual.evaluation.bench.offline_raw`): the seconds each takes
to reach each gap, and the gap each has at fractions of the budget.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, fields
from typing import Callable

from primaldual.backends.solvers import solver_version
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.core.jsonable import fields_of, jsonable
from primaldual.evaluation.seeds import online_seeds
from primaldual.offline.options import EXACT
from primaldual.offline.solve import solve_offline

#: (label, preset, jobs, horizon, servers per pool); None keeps the preset's value.
SIZES = (
    ("tiny", "tiny", None, None, None),
    ("small", "small", None, None, None),
    ("J20-T30-S6", "small", 20, 30, 6),
    ("J30-T40-S8", "small", 30, 40, 8),
    ("J40-T50-S10", "small", 40, 50, 10),
    ("J60-T60-S12", "small", 60, 60, 12),
    ("J80-T80-S16", "small", 80, 80, 16),
    ("J120-T100-S20", "small", 120, 100, 20),
    ("J30-T24-S8", "small", 30, 24, 8),
    ("J200-T60-S20", "small", 200, 60, 20),
    ("paper", "paper", None, None, None),
)
#: Sizes run only when named with --sizes (the issue's targets).
ON_REQUEST = ("J30-T24-S8", "J200-T60-S20", "paper")
QUICK_SIZES = ("tiny", "small")
DEFAULT_BUDGET = 60.0
QUICK_BUDGET = 10.0
RELAXATIONS = ("lp_weak", "lp_strong", "pooled")


def size_labels(text: str | None, quick: bool = False) -> list[str]:
    """The labels of :data:`SIZES` to run: those of the comma-separated ``text``, else the quick or default
    ladder; raises InputError on an unknown label."""
    if not text:
        return [s[0] for s in SIZES if (s[0] in QUICK_SIZES if quick else s[0] not in ON_REQUEST)]
    wanted = [label.strip() for label in text.split(",") if label.strip()]
    unknown = [label for label in wanted if label not in {s[0] for s in SIZES}]
    if unknown or not wanted:
        raise InputError(f"--sizes: unknown size {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(s[0] for s in SIZES)}")
    return [s[0] for s in SIZES if s[0] in wanted]


def size_instance(label: str, seed: int, load: bool = True):
    """The instance of size ``label`` (:data:`SIZES`) and ``seed``; ``load``: the arrival rate grows with the
    job count (the ladder's instances), else the preset's (``--against-raw``'s, as ``generate`` gives them)."""
    _, preset, jobs, horizon, servers = next(s for s in SIZES if s[0] == label)
    if not load:
        return generate(preset, seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers)
    if jobs is None:
        return generate(preset, seed)
    # The arrival window is 80% of the horizon, so contention grows with the job count and cluster alike.
    return generate(preset, seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers,
                    load=jobs / (0.8 * horizon))


def _ratio(value, reference):
    if value is None or reference is None or reference <= 0:
        return None
    return value / reference


@dataclass(frozen=True)
class BuildSeconds:
    """Seconds to build the strong per-server model by Pyomo and by the matrix path, and their ratio."""

    pyomo_build_seconds: float
    matrix_build_seconds: float
    pyomo_over_matrix_build: float | None


def build_seconds(instance) -> BuildSeconds:
    """Seconds to build the strong per-server model by each path, in this process: both builders first run
    once on the ``tiny`` preset (imports and caches are not counted), then the median of three matrix builds
    and one Pyomo build."""
    from primaldual.models.offline import build_offline_model
    from primaldual.offline.matrix import build_matrix_model

    warm = generate("tiny", 0)
    build_matrix_model(warm)
    build_offline_model(warm)
    matrix = []
    for _ in range(3):
        started = time.perf_counter()
        build_matrix_model(instance)
        matrix.append(time.perf_counter() - started)
    started = time.perf_counter()
    build_offline_model(instance)
    pyomo = time.perf_counter() - started
    return BuildSeconds(pyomo, statistics.median(matrix), _ratio(pyomo, statistics.median(matrix)))


@dataclass(frozen=True)
class Relaxation:
    """One LP relaxation: its bound (None unless solved to optimality), over the ILP's objective, seconds."""

    bound: float | None
    over_ilp: float | None
    seconds: float


@dataclass(frozen=True)
class ColumnGeneration:
    """Column generation with price-and-branch within the same budget."""

    cg_status: str
    cg_bound: float | None
    cg_objective: float | None
    cg_gap: float | None
    cg_seconds: float
    cg_rounds: int | None
    cg_converged: bool | None
    cg_over_lp_strong: float | None


@dataclass(frozen=True)
class SizeRow:
    """One size of the ladder: the strong ILP, the three relaxations, column generation, the build times
    (None where not measured). Ratios against the ILP's objective are exact LP/ILP ratios only when
    ``reference_is_optimum``."""

    size: str
    jobs: int
    slots: int
    worker_servers: int
    ps_servers: int
    variables: int | None
    constraints: int | None
    build_seconds: float | None
    solve_seconds: float
    solver_seconds: float | None
    solve_over_build: float | None
    status: str
    objective: float | None
    bound: float | None
    gap: float | None
    reference_is_optimum: bool
    relaxations: dict[str, Relaxation]
    ilp_builder: str | None
    cg: ColumnGeneration
    builds: BuildSeconds | None = None

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)[:16]}
        for key, relaxation in self.relaxations.items():
            out.update({f"{key}_bound": relaxation.bound, f"{key}_over_ilp": relaxation.over_ilp,
                        f"{key}_seconds": relaxation.seconds})
        out["ilp_builder"] = self.ilp_builder
        out.update(fields_of(self.cg))
        if self.builds is not None:
            out.update(fields_of(self.builds))
        return jsonable(out)


def measure(label: str, instance, solver: str, budget: float, builds: bool = True) -> SizeRow:
    """One row: the strong ILP within ``budget``, the three relaxations, column generation, build times."""
    limited = EXACT.replace(solver=solver, time_limit=budget)
    ilp = solve_offline(instance, limited)
    cg = solve_offline(instance, EXACT.replace(method="cg", time_limit=budget), seeds=online_seeds(instance))
    solved = {"lp_weak": solve_offline(instance, limited.replace(method="lp", formulation="weak")),
              "lp_strong": solve_offline(instance, limited.replace(method="lp", formulation="strong")),
              "pooled": solve_offline(instance, limited.replace(method="pooled"))}
    relaxations = {}
    for key, result in solved.items():
        value = result.bound if result.status == "optimal" else None
        relaxations[key] = Relaxation(value, _ratio(value, ilp.objective), result.solve_seconds)
    return SizeRow(
        size=label, jobs=instance.n_jobs, slots=instance.horizon, worker_servers=instance.cluster.n_worker_servers,
        ps_servers=instance.cluster.n_ps_servers, variables=ilp.n_variables, constraints=ilp.n_constraints,
        build_seconds=ilp.build_seconds, solve_seconds=ilp.solve_seconds, solver_seconds=ilp.solver_seconds,
        solve_over_build=_ratio(ilp.solve_seconds, ilp.build_seconds), status=ilp.status, objective=ilp.objective,
        bound=ilp.bound, gap=ilp.gap, reference_is_optimum=ilp.status == "optimal", relaxations=relaxations,
        ilp_builder=ilp.details.get("builder"),
        cg=ColumnGeneration(cg.status, cg.bound, cg.objective, cg.gap, cg.solve_seconds, cg.details.get("rounds"),
                            cg.details.get("converged"), _ratio(cg.bound, relaxations["lp_strong"].bound)),
        builds=build_seconds(instance) if builds else None)


@dataclass(frozen=True)
class OfflineBench:
    """``bench offline``: the rows, the largest size proven optimal and the first not proven (the ladder
    stops there)."""

    solver: str
    solver_version: str | None
    budget_seconds: float
    seed: int
    rows: tuple[SizeRow, ...]
    largest_proven_optimal: str | None
    first_not_proven: str | None

    def to_dict(self) -> dict:
        return {"benchmark": "offline", **jsonable(fields_of(self))}


def run_offline_bench(labels: list[str], solver: str = "highs", budget: float = DEFAULT_BUDGET, seed: int = 0,
                      progress: Callable[[SizeRow], None] | None = None) -> OfflineBench:
    """:func:`measure` on each size of ``labels`` (see :func:`size_labels`) in order, stopping after the first
    one beyond :data:`QUICK_SIZES` not proven optimal; ``progress`` is called with each row."""
    rows, largest, stopped_at = [], None, None
    for label in labels:
        # The Pyomo build of the paper preset takes many minutes: its build time is not measured there.
        row = measure(label, size_instance(label, seed), solver, budget, builds=label != "paper")
        rows.append(row)
        if progress is not None:
            progress(row)
        if row.status == "optimal":
            largest = label
        elif label not in QUICK_SIZES:
            stopped_at = label
            break  # larger sizes only take longer
    return OfflineBench(solver, solver_version(solver), budget, seed, tuple(rows), largest, stopped_at)


def _cell(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_offline_bench(result: OfflineBench) -> str:
    """The table of ``bench offline``."""
    header = ("size", "vars", "cons", "build s", "solve s", "solver s", "solve/build", "status",
              "LPweak/ILP", "LPstrong/ILP", "pooled/ILP", "pyomo/matrix", "CG bound", "CG gap", "CG/LPstrong")
    budget = result.budget_seconds
    lines = [f"offline ILP, {result.solver} {result.solver_version}, budget {budget:g} s per solve, seed {result.seed}",
             "  ".join(f"{h:>12}" for h in header)]
    for row in result.rows:
        mark = "" if row.reference_is_optimum else "*"
        cells = (
            row.size, row.variables, row.constraints, _cell(row.build_seconds, 2), _cell(row.solve_seconds, 2),
            _cell(row.solver_seconds, 2), _cell(row.solve_over_build, 1), row.status,
            *(_cell(row.relaxations[key].over_ilp, 4) + mark for key in RELAXATIONS),
            _cell(row.builds and row.builds.pyomo_over_matrix_build, 1),
            _cell(row.cg.cg_bound, 2), _cell(row.cg.cg_gap, 4), _cell(row.cg.cg_over_lp_strong, 4),
        )
        lines.append("  ".join(f"{str(c):>12}" for c in cells))
    if any(not row.reference_is_optimum for row in result.rows):
        lines.append("* ratio to the incumbent: the optimum was not proven within the budget")
    lines.append(f"largest size solved to proven optimality within {budget:g} s: {result.largest_proven_optimal or 'none'}"
                 + (f" (first not proven: {result.first_not_proven})" if result.first_not_proven else ""))
    return "\n".join(lines)


__all__ = ["BuildSeconds", "ColumnGeneration", "OfflineBench", "Relaxation", "SIZES", "SizeRow", "build_seconds",
           "format_offline_bench", "measure", "run_offline_bench", "size_instance", "size_labels"]
