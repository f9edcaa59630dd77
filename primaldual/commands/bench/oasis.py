"""``primaldual bench oasis``: milliseconds per OASiS job decision, against the plain-Python reference in the same run.

For every job of a ``paper``-preset instance, in arrival order, the benchmark times one OASiS decision
(the compiled dual subroutine of :mod:`primaldual.dual.kernel` plus admission and price update). On every third
job (every tenth with ``--quick``), at the same prices and residual capacities, it also times the subroutine
run by its reference as plain Python (:mod:`primaldual.dual.reference`, the same loops uncompiled) and the
compiled one without the early stop. The reference must give the same answer bit for bit (``mu``, payoff,
completion and placement; mismatches counted). The figure to report is the ratio of the median times. It also times the whole preset end to end (constants, every decision, the certificate) and a second
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

import statistics
import time

import numpy as np

from primaldual.commands._common import add_json_flag, print_json
from primaldual.dual import kernel
from primaldual.dual.subroutine import best_schedule
from primaldual.core.generate import generate
from primaldual.core.instance import Instance
from primaldual.oasis.engine import OnlineEngine, arrival_order, run_greedy, run_oasis
from primaldual.oasis.prices import compute_constants

NAME = "oasis"
HELP = "OASiS per-job decision time on the paper preset, against the dual subroutine's plain-Python reference"

#: The target median decision time for T <= 100, N_i <= 16, 100 servers per pool.
TARGET_MEDIAN_MS = 5.0


def _percentile(values, q):
    return float(np.percentile(np.asarray(values), q)) if values else None


def time_decisions(instance: Instance, reference_every: int = 1) -> dict:
    """Time every decision of one OASiS run; every ``reference_every``-th job (0: none) is also solved, at the
    same prices, by the compiled subroutine without its early stop and by the reference as plain Python."""
    constants = compute_constants(instance)
    engine = OnlineEngine(instance, constants)
    wall, cpu = [], []
    as_used, full, plain = [], [], []
    mismatches = 0
    state = engine.state
    for n, i in enumerate(arrival_order(instance)):
        if reference_every and n % reference_every == 0:
            arguments = (instance, i, state.worker_prices, state.ps_prices, state.worker_free, state.ps_free)
            compiled, seconds = _timed(*arguments)
            as_used.append(seconds)
            full.append(_timed(*arguments, early_stop=False)[1])
            with kernel.using("reference"):
                reference, seconds = _timed(*arguments)
            plain.append(seconds)
            mismatches += not _same_answer(compiled, reference)
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
    if plain:
        out.update({
            "reference_jobs": len(plain),
            "subroutine_ms_median": 1e3 * statistics.median(as_used),
            "subroutine_full_ms_median": 1e3 * statistics.median(full),
            "reference_ms_median": 1e3 * statistics.median(plain),
            "reference_ms_p99": 1e3 * _percentile(plain, 99),
            # The figure to report: the compiled subroutine against the same loops as plain Python.
            "speedup_median": statistics.median(plain) / max(statistics.median(as_used), 1e-12),
            "speedup_total": sum(plain) / max(sum(as_used), 1e-12),
            "reference_mismatches": mismatches,
        })
    return out


def _timed(*arguments, **options):
    start = time.perf_counter()
    result = best_schedule(*arguments, **options)
    return result, time.perf_counter() - start


def _same_answer(one, other) -> bool:
    """Bit for bit: the numbers, the per-slot counts and the placement."""
    numbers = ("feasible", "mu", "payoff", "cost", "utility", "completion_slot")
    if any(getattr(one, name) != getattr(other, name) for name in numbers):
        return False
    placed = [(r.schedule.workers.tobytes(), r.schedule.parameter_servers.tobytes()) if r.schedule else None
              for r in (one, other)]
    return placed[0] == placed[1] and np.array_equal(one.workers_per_slot, other.workers_per_slot)


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
        print(f"  compiled subroutine vs its plain-Python reference on {paper['reference_jobs']} jobs: median "
              f"{paper['subroutine_ms_median']:.2f} ms vs {paper['reference_ms_median']:.1f} ms, "
              f"x{paper['speedup_median']:.0f} (median), x{paper['speedup_total']:.0f} (total); without the "
              f"early stop {paper['subroutine_full_ms_median']:.2f} ms; "
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
