"""``primaldual bench oasis``: milliseconds per OASiS job decision, against a pure-Python DP in the same run.

For every job of a ``paper``-preset instance, in arrival order, the benchmark times one OASiS decision
(the vectorised dual subroutine of :mod:`primaldual.dual.subroutine` plus admission and price update). On every third
job (every tenth with ``--quick``), at the same prices and residual capacities, it also times the
straightforward pure-Python implementation of the same recurrence below (:func:`reference_best_schedule`:
loops over servers, slots, work states and worker counts, over all slots, without the early stop). Both
must find the same ``mu`` (checked, mismatches counted). The figure to report is the ratio of the median
times; the ratio against the vectorised subroutine also run over all slots isolates what vectorisation alone
buys. It also times the whole preset end to end (constants, every decision, the certificate) and a second
configuration at the target size (``T = 100``, 100 servers per pool, ``N_i <= 16``), and records
OASiS's and ``greedy``'s utilities and the certificate's ``D / ALG`` as context. Wall-clock times
(``perf_counter``) and CPU times (``process_time``, robust to a busy machine) are both reported.

``--quality`` runs the other benchmark of this command instead: utility and OPT/ALG of OASiS, OASiS-LR,
OASiS-P and the baselines on fresh seeds, with and without restart costs
(:mod:`primaldual.commands.bench._oasis_quality`). ``--compare-lr`` times OASiS-LR against OASiS on ``paper``
instances: the median whole-run wall-time ratio and OASiS-LR's per-job decision time, defined exactly in
:mod:`primaldual.commands.bench._oasis_lr_speed`.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

from primaldual.commands._common import add_json_flag, print_json
from primaldual.dual.subroutine import best_schedule
from primaldual.core.generate import generate
from primaldual.core.instance import Instance
from primaldual.oasis.engine import OnlineEngine, arrival_order, run_greedy, run_oasis
from primaldual.oasis.prices import compute_constants

NAME = "oasis"
HELP = "OASiS per-job decision time on the paper preset, against a pure-Python DP of the same recurrence"

#: The target median decision time for T <= 100, N_i <= 16, 100 servers per pool.
TARGET_MEDIAN_MS = 5.0


def reference_best_schedule(instance: Instance, i: int, worker_prices, ps_prices, worker_free, ps_free,
                            early_stop: bool = False):
    """The dual subroutine written plainly in Python: returns ``(mu, payoff, completion_slot)``.

    Same recurrence as :mod:`primaldual.dual.subroutine` (cheapest-first fill per slot, ``Z(D) = ceil(D b/B)`` PSs,
    ``F_t(v) = min_D F_{t-1}(v - D) + c_t(D)`` for every slot, earliest maximiser of ``f - C``), with Python
    lists and loops only; ``early_stop`` adds the subroutine's stop once ``f <= max(0, best)``. Used as the
    benchmark's reference and nowhere else.
    """
    job = instance.jobs[i]
    horizon = instance.horizon
    work = int(instance.work_units[i])
    max_workers = min(job.chunks, work)
    worker_demand = [float(x) for x in job.worker_demand]
    ps_demand = [float(x) for x in job.ps_demand]
    needed = [int(job.min_parameter_servers(d)) for d in range(max_workers + 1)]
    ps_max = min(max(needed), max_workers)

    def fill_costs(prices_t, free_t, demand, count):
        servers = []
        for h in range(len(prices_t)):
            cap = count
            for r, d in enumerate(demand):
                if d > 0:
                    cap = min(cap, int(math.floor((free_t[h][r] + 2e-10) / d)))
            if cap > 0:
                price = 0.0
                for r, d in enumerate(demand):
                    if d > 0:
                        price += prices_t[h][r] * d
                servers.append((price, h, cap))
        servers.sort()
        costs = [0.0]
        for price, _, cap in servers:
            for _ in range(cap):
                if len(costs) > count:
                    break
                costs.append(costs[-1] + price)
        return costs + [math.inf] * (count + 1 - len(costs))

    previous = [0.0] + [math.inf] * work
    best_payoff, best_slot = -math.inf, None
    for t in range(job.arrival, horizon):
        worker_costs = fill_costs(worker_prices[t], worker_free[t], worker_demand, max_workers)
        ps_costs = fill_costs(ps_prices[t], ps_free[t], ps_demand, ps_max)
        slot_cost = [0.0]
        for d in range(1, max_workers + 1):
            z = needed[d]
            slot_cost.append(worker_costs[d] + ps_costs[z] if z <= d and z <= ps_max else math.inf)
        current = [math.inf] * (work + 1)
        for v in range(work + 1):
            best = math.inf
            for d in range(min(max_workers, v) + 1):
                candidate = previous[v - d] + slot_cost[d]
                if candidate < best:
                    best = candidate
            current[v] = best
        previous = current
        value = float(job.utility(t - job.arrival))
        if current[work] < math.inf and value - current[work] > best_payoff:
            best_payoff, best_slot = value - current[work], t
        if early_stop and t + 1 < horizon and float(job.utility(t + 1 - job.arrival)) <= max(0.0, best_payoff):
            break
    return max(0.0, best_payoff), best_payoff, best_slot


def _percentile(values, q):
    return float(np.percentile(np.asarray(values), q)) if values else None


def time_decisions(instance: Instance, reference_every: int = 1) -> dict:
    """Time every decision of one OASiS run; every ``reference_every``-th job (0: none) is also solved, at the
    same prices, by the vectorised subroutine with and without its early stop and by the pure-Python
    reference (without early stop: the straightforward DP over all slots)."""
    constants = compute_constants(instance)
    engine = OnlineEngine(instance, constants)
    wall, cpu = [], []
    as_used, full, reference = [], [], []
    mismatches = 0
    state = engine.state
    for n, i in enumerate(arrival_order(instance)):
        if reference_every and n % reference_every == 0:
            worker_free, ps_free = state.worker_free, state.ps_free
            start = time.perf_counter()
            vectorised = best_schedule(instance, i, state.worker_prices, state.ps_prices, worker_free, ps_free)
            as_used.append(time.perf_counter() - start)
            start = time.perf_counter()
            best_schedule(instance, i, state.worker_prices, state.ps_prices, worker_free, ps_free, early_stop=False)
            full.append(time.perf_counter() - start)
            start = time.perf_counter()
            mu, _, _ = reference_best_schedule(instance, i, state.worker_prices, state.ps_prices, worker_free, ps_free)
            reference.append(time.perf_counter() - start)
            if abs(mu - vectorised.mu) > 1e-9 * max(1.0, abs(mu)):
                mismatches += 1
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        engine.decide(i)
        wall.append(time.perf_counter() - start_wall)
        cpu.append(time.process_time() - start_cpu)
    out = {
        "jobs": instance.n_jobs,
        "horizon": instance.horizon,
        "worker_servers": instance.cluster.n_worker_servers,
        "ps_servers": instance.cluster.n_ps_servers,
        "max_chunks": int(max(job.chunks for job in instance.jobs)),
        "max_work_units": int(instance.work_units.max()),
        "decision_ms_median": 1e3 * statistics.median(wall),
        "decision_ms_p99": 1e3 * _percentile(wall, 99),
        "decision_cpu_ms_median": 1e3 * statistics.median(cpu),
        "decision_cpu_ms_p99": 1e3 * _percentile(cpu, 99),
        "decisions_seconds_total": float(sum(wall)),
        "admitted": sum(d.admitted for d in engine.decisions.values()),
    }
    if reference:
        out.update({
            "reference_jobs": len(reference),
            "subroutine_ms_median": 1e3 * statistics.median(as_used),
            "subroutine_full_ms_median": 1e3 * statistics.median(full),
            "reference_ms_median": 1e3 * statistics.median(reference),
            "reference_ms_p99": 1e3 * _percentile(reference, 99),
            # The figure to report: the subroutine as OASiS runs it against the straightforward DP.
            "speedup_median": statistics.median(reference) / max(statistics.median(as_used), 1e-12),
            "speedup_total": sum(reference) / max(sum(as_used), 1e-12),
            # Same work on both sides (no early stop): what vectorisation alone buys.
            "vectorisation_speedup_median": statistics.median(reference) / max(statistics.median(full), 1e-12),
            "reference_mismatches": mismatches,
        })
    return out


def run_benchmark(seed: int = 0, quick: bool = False, jobs: int | None = None) -> dict:
    """All figures of ``primaldual bench oasis`` as one dict (see the module docstring)."""
    n_jobs = jobs if jobs is not None else (60 if quick else None)
    paper = generate("paper", seed, jobs=n_jobs)
    figures = {"seed": seed, "quick": quick, "paper": time_decisions(paper, reference_every=10 if quick else 3)}

    start_wall, start_cpu = time.perf_counter(), time.process_time()
    result = run_oasis(paper)
    figures["paper"]["run_seconds"] = time.perf_counter() - start_wall
    figures["paper"]["run_cpu_seconds"] = time.process_time() - start_cpu
    certificate = result.certificate
    figures["paper"]["oasis_utility"] = result.total_utility
    figures["paper"]["greedy_utility"] = run_greedy(paper).total_utility
    figures["paper"]["dual_objective"] = certificate.dual_objective
    figures["paper"]["ratio_upper_bound"] = certificate.ratio_upper_bound
    figures["paper"]["best_ratio_upper_bound"] = certificate.best_ratio_upper_bound
    figures["paper"]["alpha"] = certificate.constants.alpha

    target_jobs = 50 if quick else 200
    target = generate("paper", seed, jobs=target_jobs, horizon=100, worker_servers=100, ps_servers=100,
                      load=target_jobs / 100.0)
    figures["target"] = time_decisions(target, reference_every=0)
    figures["target"]["target_median_ms"] = TARGET_MEDIAN_MS
    return figures


def add_arguments(parser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="instance seed (default 0)")
    parser.add_argument("--quick", action="store_true",
                        help="60 jobs instead of 300, the reference on every 10th job (else every 3rd), "
                             "a 50-job target run")
    parser.add_argument("--jobs", type=int, default=None, help="override the number of jobs of the paper run")
    parser.add_argument("--quality", action="store_true",
                        help="utility of oasis, oasis-lr, oasis-p and the baselines on fresh seeds instead")
    parser.add_argument("--compare-lr", action="store_true",
                        help="oasis-lr against oasis (and against itself without the lookahead) on --preset instances "
                             "instead: median whole-run wall-time ratios (same process, rotating order) and "
                             "oasis-lr's per-job decision time")
    parser.add_argument("--seeds", default="500,501,502",
                        help="with --compare-lr: comma-separated seeds (default 500,501,502)")
    parser.add_argument("--preset", choices=("paper", "small"), default="paper",
                        help="with --compare-lr: the instances' preset (default paper, where issue 10's runtime "
                             "targets apply; small with --jobs 20 shows the lookahead's cost where it runs)")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="with --compare-lr: timed runs of each scheduler per instance (default 5)")
    parser.add_argument("--restart-cost", type=float, default=0.0,
                        help="with --compare-lr: the simulator's restart cost (default 0)")
    parser.add_argument("--sets", default="tiny,small,small20",
                        help="with --quality: comma-separated sets among tiny, small, small20, paper")
    parser.add_argument("--first-seed", type=int, default=100,
                        help="with --quality: first seed (default 100, disjoint from the design seeds 0-19)")
    parser.add_argument("--count", type=int, default=16, help="with --quality: instances per set (default 16)")
    parser.add_argument("--paper-count", type=int, default=3, help="with --quality: paper instances (default 3)")
    parser.add_argument("--restart-costs", default="0,0.1",
                        help="with --quality: comma-separated restart costs (default 0,0.1)")
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="with --quality: seconds per offline optimum (default 30)")
    add_json_flag(parser)


def _quality(args) -> int:
    from primaldual.commands.bench._oasis_quality import SETS, print_quality, run_quality
    from primaldual.core.errors import InputError
    from primaldual.simulation.simulator import check_restart_cost

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown or not sets:
        raise InputError(f"--sets: must list sets among {', '.join(SETS)}, got {args.sets!r}")
    costs = []
    for n, text in enumerate(args.restart_costs.split(",")):
        # Parse first, then the simulator's own rule (InputError is a ValueError: one try would swallow it).
        label = f"--restart-costs entry {n + 1}"
        try:
            value = float(text)
        except ValueError:
            value = text.strip()  # not a number: check_restart_cost refuses it with the same message
        costs.append(check_restart_cost(value, label))
    for flag, value in (("--first-seed", args.first_seed), ("--count", args.count), ("--paper-count", args.paper_count)):
        if value < (0 if flag == "--first-seed" else 1):
            raise InputError(f"{flag}: must be {'>= 0' if flag == '--first-seed' else '>= 1'}, got {value}")
    figures = run_quality(sets, args.first_seed, args.count, costs, args.time_limit, args.paper_count)
    if args.json:
        print_json(figures)
    else:
        print_quality(figures)
    return 0


def _compare_lr(args) -> int:
    from primaldual.commands.bench._oasis_lr_speed import compare_lr, print_compare_lr
    from primaldual.core.errors import InputError
    from primaldual.simulation.simulator import check_restart_cost

    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0:
        raise InputError(f"--seeds: must be comma-separated seeds >= 0, got {args.seeds!r}")
    if args.repetitions < 1:
        raise InputError(f"--repetitions: must be >= 1, got {args.repetitions}")
    restart_cost = check_restart_cost(args.restart_cost, "--restart-cost")
    figures = compare_lr(seeds, args.repetitions, restart_cost, args.jobs, args.preset)
    if args.json:
        print_json(figures)
    else:
        print_compare_lr(figures)
    return 0


def run(args) -> int:
    if args.compare_lr and args.quality:
        from primaldual.core.errors import InputError

        raise InputError("--compare-lr: cannot be combined with --quality (two different benchmarks)")
    if args.compare_lr:
        return _compare_lr(args)
    if args.quality:
        return _quality(args)
    figures = run_benchmark(seed=args.seed, quick=args.quick, jobs=args.jobs)
    if args.json:
        print_json(figures)
        return 0
    paper, target = figures["paper"], figures["target"]
    print(f"paper preset (seed {figures['seed']}): {paper['jobs']} jobs, T = {paper['horizon']}, "
          f"{paper['worker_servers']}+{paper['ps_servers']} servers, N_i <= {paper['max_chunks']}")
    print(f"  decision: median {paper['decision_ms_median']:.2f} ms, p99 {paper['decision_ms_p99']:.2f} ms "
          f"(CPU median {paper['decision_cpu_ms_median']:.2f} ms)")
    if "speedup_median" in paper:
        print(f"  subroutine vs pure-Python DP on {paper['reference_jobs']} jobs: median "
              f"{paper['subroutine_ms_median']:.2f} ms vs {paper['reference_ms_median']:.1f} ms, "
              f"x{paper['speedup_median']:.0f} (median), x{paper['speedup_total']:.0f} (total); without the "
              f"early stop {paper['subroutine_full_ms_median']:.2f} ms, x{paper['vectorisation_speedup_median']:.0f}; "
              f"mismatches: {paper['reference_mismatches']}")
    print(f"  whole preset (constants, decisions, certificate): {paper['run_seconds']:.2f} s "
          f"(CPU {paper['run_cpu_seconds']:.2f} s)")
    print(f"  utility: OASiS {paper['oasis_utility']:.1f}, greedy {paper['greedy_utility']:.1f}; "
          f"D/ALG {paper['ratio_upper_bound']:.1f}, min(D, standalone)/ALG {paper['best_ratio_upper_bound']:.3f}")
    print(f"target size: {target['jobs']} jobs, T = {target['horizon']}, {target['worker_servers']}+"
          f"{target['ps_servers']} servers: decision median {target['decision_ms_median']:.2f} ms, "
          f"p99 {target['decision_ms_p99']:.2f} ms (target <= {TARGET_MEDIAN_MS:g} ms median; "
          f"CPU median {target['decision_cpu_ms_median']:.2f} ms)")
    return 0
