"""``primaldual bench offline``: how far the offline ILP scales, and how tight each formulation's LP bound is.

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
the model ``solve --write-mps`` exports (:mod:`primaldual.commands.bench._offline_raw`): the seconds each takes
to reach each gap, and the gap each has at fractions of the budget.
"""

from __future__ import annotations

from primaldual.commands._common import print_json
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.evaluation.seeds import online_seeds
from primaldual.offline.options import EXACT
from primaldual.offline.solve import solve_offline
from primaldual.backends.solvers import check_solver, solver_version

NAME = "offline"
HELP = ("offline ILP: size, Pyomo build vs solver seconds, LP/ILP bound ratio of the weak and strong "
        "formulations, and the largest generated size solved to proven optimality within a budget")

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


def add_arguments(parser) -> None:
    parser.add_argument("--budget", type=float, metavar="S",
                        help=f"time limit per solve in seconds (default {DEFAULT_BUDGET:g}; {QUICK_BUDGET:g} "
                             "with --quick)")
    parser.add_argument("--quick", action="store_true", help="only the tiny and small presets")
    parser.add_argument("--sizes", metavar="LIST",
                        help="comma-separated size labels to run, from: " + ", ".join(s[0] for s in SIZES))
    parser.add_argument("--seed", type=int, default=0, help="instance seed (default 0)")
    parser.add_argument("--solver", default="highs", help="backend (default highs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--against-raw", action="store_true",
                        help="per instance, the package's solve (primaldual solve --time-limit BUDGET) against "
                             "plain highspy on its --write-mps model, in the same run: seconds to reach each gap "
                             "and the gap at fractions of the budget (default size J30-T24-S8, seeds 1-5, "
                             "budget 30 s)")
    parser.add_argument("--seeds", metavar="LIST", help="with --against-raw: comma-separated instance seeds "
                                                          "(default 1,2,3,4,5)")


def _instance(preset: str, jobs, horizon, servers, seed: int):
    if jobs is None:
        return generate(preset, seed)
    # The arrival window is 80% of the horizon, so contention grows with the job count and cluster alike.
    return generate(preset, seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers,
                    load=jobs / (0.8 * horizon))


def _ratio(value, reference):
    if value is None or reference is None or reference <= 0:
        return None
    return value / reference


def _build_seconds(instance) -> dict:
    """Seconds to build the strong per-server model by each path, in this process: both builders first run
    once on the ``tiny`` preset (imports and caches are not counted), then the median of three matrix builds
    (a build of a few hundredths of a second is noisy on a loaded machine) and one Pyomo build."""
    import statistics
    import time

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
    return {"pyomo_build_seconds": pyomo, "matrix_build_seconds": statistics.median(matrix),
            "pyomo_over_matrix_build": _ratio(pyomo, statistics.median(matrix))}


def measure(label: str, instance, solver: str, budget: float, builds: bool = True) -> dict:
    """One row: the strong ILP within ``budget``, the three relaxations, column generation, build times."""
    limited = EXACT.replace(solver=solver, time_limit=budget)
    ilp = solve_offline(instance, limited)
    cg = solve_offline(instance, EXACT.replace(method="cg", time_limit=budget), seeds=online_seeds(instance))
    relaxations = {
        "lp_weak": solve_offline(instance, limited.replace(method="lp", formulation="weak")),
        "lp_strong": solve_offline(instance, limited.replace(method="lp", formulation="strong")),
        "pooled": solve_offline(instance, limited.replace(method="pooled")),
    }
    reference = ilp.objective
    row = {
        "size": label,
        "jobs": instance.n_jobs,
        "slots": instance.horizon,
        "worker_servers": instance.cluster.n_worker_servers,
        "ps_servers": instance.cluster.n_ps_servers,
        "variables": ilp.n_variables,
        "constraints": ilp.n_constraints,
        "build_seconds": ilp.build_seconds,
        "solve_seconds": ilp.solve_seconds,
        "solver_seconds": ilp.solver_seconds,
        "solve_over_build": _ratio(ilp.solve_seconds, ilp.build_seconds),
        "status": ilp.status,
        "objective": ilp.objective,
        "bound": ilp.bound,
        "gap": ilp.gap,
        # Ratios against the incumbent are exact LP/ILP ratios only when the optimum is proven.
        "reference_is_optimum": ilp.status == "optimal",
    }
    for key, result in relaxations.items():
        value = result.bound if result.status == "optimal" else None
        row[f"{key}_bound"] = value
        row[f"{key}_over_ilp"] = _ratio(value, reference)
        row[f"{key}_seconds"] = result.solve_seconds
    row.update({"ilp_builder": ilp.details.get("builder"), "cg_status": cg.status, "cg_bound": cg.bound,
                "cg_objective": cg.objective, "cg_gap": cg.gap, "cg_seconds": cg.solve_seconds,
                "cg_rounds": cg.details.get("rounds"), "cg_converged": cg.details.get("converged"),
                "cg_over_lp_strong": _ratio(cg.bound, row["lp_strong_bound"])})
    if builds:
        row.update(_build_seconds(instance))
    return row


def _cell(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _seeds(text: str | None) -> list[int]:
    if text is None:
        return [1, 2, 3, 4, 5]
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--seeds: must be comma-separated integers, got {text!r}") from None
    if not seeds:
        raise InputError("--seeds: give at least one seed")
    return seeds


def _against_raw(args) -> int:
    """``--against-raw``: :mod:`primaldual.commands.bench._offline_raw` on each size and seed."""
    from primaldual.commands.bench._offline_raw import compare_instance, print_rows

    budget = args.budget if args.budget is not None else 30.0
    if not budget > 0:
        raise InputError(f"--budget: must be a number of seconds > 0, got {budget!r}")
    labels = [label.strip() for label in (args.sizes or "J30-T24-S8").split(",") if label.strip()]
    sizes = {s[0]: s for s in SIZES}
    unknown = [label for label in labels if label not in sizes]
    if unknown or not labels:
        raise InputError(f"--sizes: unknown size {', '.join(unknown) or '(none)'}; choose from {', '.join(sizes)}")
    rows = []
    for label in labels:
        _, preset, jobs, horizon, servers = sizes[label]
        for k, seed in enumerate(_seeds(args.seeds)):
            # The instance `generate --preset P --jobs J --horizon T --worker-servers S --ps-servers S --seed s`.
            instance = generate(preset, seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers)
            rows.append(compare_instance(f"{label}/s{seed}", instance, budget, package_first=k % 2 == 0))
            if not args.json:
                print(f"  {label} seed {seed}: package {rows[-1]['package']['status']}, raw "
                      f"{rows[-1]['raw']['status']}", flush=True)
    if args.json:
        print_json({"benchmark": "offline --against-raw", "budget_seconds": budget, "rows": rows,
                    "solver_version": solver_version("highs"), "met": sum(row["met"] for row in rows)})
    else:
        print_rows(rows, budget)
    return 0


def run(args) -> int:
    check_solver(args.solver)
    if args.against_raw:
        return _against_raw(args)
    budget = args.budget if args.budget is not None else (QUICK_BUDGET if args.quick else DEFAULT_BUDGET)
    if not budget > 0:
        raise InputError(f"--budget: must be a number of seconds > 0, got {budget!r}")
    sizes = [s for s in SIZES if s[0] in QUICK_SIZES] if args.quick else [s for s in SIZES if s[0] not in ON_REQUEST]
    if args.sizes:
        wanted = [label.strip() for label in args.sizes.split(",") if label.strip()]
        unknown = [label for label in wanted if label not in {s[0] for s in SIZES}]
        if unknown or not wanted:
            raise InputError(f"--sizes: unknown size {', '.join(unknown) or '(none)'}; "
                             f"choose from {', '.join(s[0] for s in SIZES)}")
        sizes = [s for s in SIZES if s[0] in wanted]
    rows = []
    largest = None
    stopped_at = None
    for label, preset, jobs, horizon, servers in sizes:
        instance = _instance(preset, jobs, horizon, servers, args.seed)
        # The Pyomo build of the paper preset takes many minutes: its build time is not measured there.
        row = measure(label, instance, args.solver, budget, builds=label != "paper")
        rows.append(row)
        if not args.json:
            print(f"  {label}: {row['status']} in {row['solve_seconds']:.2f} s", flush=True)
        if row["status"] == "optimal":
            largest = label
        elif label not in QUICK_SIZES:
            stopped_at = label
            break  # larger sizes only take longer

    report = {
        "benchmark": NAME,
        "solver": args.solver,
        "solver_version": solver_version(args.solver),
        "budget_seconds": budget,
        "seed": args.seed,
        "rows": rows,
        "largest_proven_optimal": largest,
        "first_not_proven": stopped_at,
    }
    if args.json:
        print_json(report)
        return 0
    header = ("size", "vars", "cons", "build s", "solve s", "solver s", "solve/build", "status",
              "LPweak/ILP", "LPstrong/ILP", "pooled/ILP", "pyomo/matrix", "CG bound", "CG gap", "CG/LPstrong")
    print(f"offline ILP, {args.solver} {report['solver_version']}, budget {budget:g} s per solve, seed {args.seed}")
    print("  ".join(f"{h:>12}" for h in header))
    for row in rows:
        mark = "" if row["reference_is_optimum"] else "*"
        cells = (
            row["size"], row["variables"], row["constraints"], _cell(row["build_seconds"], 2),
            _cell(row["solve_seconds"], 2), _cell(row["solver_seconds"], 2), _cell(row["solve_over_build"], 1),
            row["status"], _cell(row["lp_weak_over_ilp"], 4) + mark, _cell(row["lp_strong_over_ilp"], 4) + mark,
            _cell(row["pooled_over_ilp"], 4) + mark, _cell(row.get("pyomo_over_matrix_build"), 1),
            _cell(row["cg_bound"], 2), _cell(row["cg_gap"], 4), _cell(row["cg_over_lp_strong"], 4),
        )
        print("  ".join(f"{str(c):>12}" for c in cells))
    if any(not row["reference_is_optimum"] for row in rows):
        print("* ratio to the incumbent: the optimum was not proven within the budget")
    print(f"largest size solved to proven optimality within {budget:g} s: {largest or 'none'}"
          + (f" (first not proven: {stopped_at})" if stopped_at else ""))
    return 0
