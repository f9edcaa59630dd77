"""``primaldual bench solvers``: HiGHS against SCIP (pyscipopt) on the same offline ILPs, and the exact
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

from primaldual.commands._common import add_json_flag, print_json
from primaldual.core.errors import InputError
from primaldual.core.generate import generate

NAME = "solvers"
HELP = "HiGHS vs SCIP (pyscipopt) on the offline ILP by size, and the exact OPT with restart costs on small"

#: (label, jobs, horizon, servers per pool) on the ``small`` preset; ``tiny`` is the tiny preset.
SIZES = (("tiny", None, None, None), ("small-J5", 5, None, None), ("small", None, None, None),
         ("J20-T30-S6", 20, 30, 6))


def add_arguments(parser) -> None:
    parser.add_argument("--budget", type=float, default=60.0, metavar="S", help="seconds per solve (default 60)")
    parser.add_argument("--seeds", default="1000,1001,1002", metavar="LIST",
                        help="instance seeds, comma-separated (default 1000,1001,1002)")
    parser.add_argument("--sizes", default=",".join(s[0] for s in SIZES[:3]), metavar="LIST",
                        help="size labels, from: " + ", ".join(s[0] for s in SIZES))
    parser.add_argument("--restart-cost", type=float, default=0.1, metavar="F",
                        help="restart cost of the restart table (default 0.1); 0 skips it")
    parser.add_argument("--only", choices=("solvers", "restart"), help="run one table only")
    add_json_flag(parser)


def _instance(label: str, seed: int):
    jobs, horizon, servers = next((j, h, s) for name, j, h, s in SIZES if name == label)
    if label == "tiny":
        return generate("tiny", seed)
    if horizon is None:
        return generate("small", seed) if jobs is None else generate("small", seed, jobs=jobs)
    return generate("small", seed, jobs=jobs, horizon=horizon, worker_servers=servers, ps_servers=servers,
                    load=jobs / (0.8 * horizon))


def solver_rows(labels, seeds, budget: float) -> list[dict]:
    from primaldual.offline.methods import placement_count
    from primaldual.offline.options import EXACT
    from primaldual.offline.solve import solve_offline

    rows = []
    for label in labels:
        for seed in seeds:
            instance = _instance(label, seed)
            row = {"size": label, "seed": seed, "placements": placement_count(instance)}
            for solver in ("highs", "scip"):
                started = time.perf_counter()
                result = solve_offline(instance, EXACT.replace(solver=solver, time_limit=budget))
                row[solver] = {"status": result.status, "seconds": time.perf_counter() - started,
                               "objective": result.objective, "bound": result.bound, "gap": result.gap,
                               "builder": result.details.get("builder")}
            both = row["highs"]["status"] == row["scip"]["status"] == "optimal"
            row["agree"] = both and abs(row["highs"]["objective"] - row["scip"]["objective"]) <= 1e-6 * max(
                1.0, abs(row["highs"]["objective"]))
            row["scip_over_highs_seconds"] = row["scip"]["seconds"] / max(row["highs"]["seconds"], 1e-9)
            rows.append(row)
    return rows


def restart_rows(seeds, budget: float, restart_cost: float) -> list[dict]:
    from primaldual.evaluation.pipeline import evaluate
    from primaldual.offline.options import SolveOptions
    from primaldual.simulation.scheduler import available_schedulers

    rows = []
    for seed in seeds:
        evaluation = evaluate(generate("small", seed), available_schedulers(),
                              solve=SolveOptions(time_limit=budget), restart_cost=restart_cost)
        interval, exact = evaluation.interval, evaluation.restart_opt
        rows.append({"seed": seed, "proven": interval.proven, "low": interval.low, "high": interval.high,
                     "seconds": evaluation.seconds.get("restart_opt"),
                     "relaxation_seconds": evaluation.seconds.get("opt"),
                     "best_online": max(interval.lower_candidates.get(k, 0.0) for k in interval.lower_candidates
                                        if k.startswith("online:")),
                     "status": None if exact is None else exact.solve.status,
                     "points": all(r.lower == r.upper for r in evaluation.ratios.values())})
    return rows


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def run(args) -> int:
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise InputError(f"--seeds: must be comma-separated integers, got {args.seeds!r}") from None
    labels = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in labels if s not in {name for name, *_ in SIZES}]
    if unknown or not seeds or not args.budget > 0:
        raise InputError(f"--sizes: unknown {unknown}" if unknown else "--seeds/--budget: need seeds and a budget > 0")
    out = {"budget": args.budget, "seeds": seeds}
    if args.only != "restart":
        rows = solver_rows(labels, seeds, args.budget)
        out["solvers"] = rows
        out["solver_medians"] = {label: {
            "highs_seconds": _median([r["highs"]["seconds"] for r in rows if r["size"] == label]),
            "scip_seconds": _median([r["scip"]["seconds"] for r in rows if r["size"] == label]),
            "scip_over_highs": _median([r["scip_over_highs_seconds"] for r in rows if r["size"] == label]),
            "placements": _median([r["placements"] for r in rows if r["size"] == label])} for label in labels}
    if args.only != "solvers" and args.restart_cost > 0:
        rows = restart_rows(seeds, args.budget, args.restart_cost)
        out["restart"] = {"restart_cost": args.restart_cost, "rows": rows,
                          "proven": sum(r["proven"] for r in rows), "of": len(rows),
                          "median_seconds": _median([r["seconds"] for r in rows]),
                          "median_total_seconds": _median([(r["seconds"] or 0) + (r["relaxation_seconds"] or 0)
                                                           for r in rows])}
    if args.json:
        print_json(out)
        return 0
    for label, m in out.get("solver_medians", {}).items():
        print(f"{label:12} placements {m['placements']:>7.0f}  highs {m['highs_seconds']:8.2f} s  scip "
              f"{m['scip_seconds']:8.2f} s  scip/highs {m['scip_over_highs']:.2f}")
    if "restart" in out:
        r = out["restart"]
        print(f"restart cost {r['restart_cost']:g}: proven on {r['proven']} of {r['of']} small seeds, median "
              f"{r['median_seconds']:.1f} s")
        for row in r["rows"]:
            print(f"  seed {row['seed']}: proven {row['proven']}  [{row['low']:.6f}, {row['high']:.6f}]  "
                  f"{row['seconds']:.1f} s  best online {row['best_online']:.6f}")
    return 0
