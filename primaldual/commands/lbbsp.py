"""``primaldual lbbsp``: LB-BSP batch sizing on a simulated BSP cluster (Chen et al., SoCC 2020).

``lbbsp simulate`` runs BSP, LB-BSP (CPU rule and GPU stepper) and the oracle on one scenario and
reports mean iteration time, time to a fixed number of samples and speedup over BSP.
``lbbsp aggregate`` trains logistic / least-squares regression with the batch sizes LB-BSP chose and
shows that weighted aggregation reproduces single-batch SGD while the plain mean does not.
``lbbsp replay`` replays a recorded straggler trace (packaged PAI jobs, a PAI-format or a simple CSV, or a
synthetic trace following a job of the CoV table); ``lbbsp cov`` gives the speedup distribution over the
CoV table's jobs; ``lbbsp train`` runs real data-parallel SGD with spawned worker processes.
"""

from __future__ import annotations

import argparse
import math

from primaldual.commands._common import add_json_flag, print_json
from primaldual.commands._progress import add_progress_flag, progress_bar, with_activity
from primaldual.core.errors import InputError
from primaldual.lbbsp.aggregation import KINDS
from primaldual.lbbsp.flags import (MAX_LIMITS_WORKER_DRAWS, MAX_REPLAY_CELLS, MAX_SIMULATE_CELLS, MAX_TRACE_CELLS,
                                    MAX_TRAIN_SECONDS, check_flags, check_product)
from primaldual.lbbsp.predictors.registry import PREDICTORS
from primaldual.lbbsp.scenarios import SCENARIOS

ORDER = 70


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lbbsp", help="LB-BSP batch sizing for stragglers: simulate, compare with BSP and an oracle",
        description="Semi-dynamic batch sizing (LB-BSP) on a simulated BSP cluster.")
    commands = parser.add_subparsers(dest="lbbsp_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: _usage(parser))

    simulate = _subcommand(commands, _simulate, "simulate", help="BSP vs LB-BSP vs oracle on one scenario",
        description="Run BSP (equal batches), LB-BSP's CPU rule, LB-BSP's GPU stepper and an oracle that "
                    "knows the true speeds on the same random streams.")
    simulate.add_argument("--scenario", choices=tuple(SCENARIOS), default="gpu",
                          help="gpu: heterogeneous dedicated GPUs; cpu: non-dedicated CPUs with interference "
                               "(default gpu)")
    simulate.add_argument("--workers", type=int, default=8, help="number of workers n (default 8)")
    simulate.add_argument("--iterations", type=int, default=300, help="BSP iterations (default 300)")
    _add_optional_int(simulate, "--global-batch", "global batch X (default 96 per worker on gpu, 64 on cpu)")
    _add_seed(simulate, "seed of the random streams (default 0)")
    simulate.add_argument("--predictor", choices=tuple(PREDICTORS), default="rreg",
                          help="speed predictor of the CPU rule (default rreg: regression on the CPU/memory readings)")
    _add_optional_int(simulate, "--target-samples",
                      "report the time to process this many samples (default: all of the run)")

    aggregate = _subcommand(commands, _aggregate, "aggregate",
                            help="weighted vs plain-mean gradient aggregation on real SGD",
        description="Train regression with the unequal batches LB-BSP chose on the cpu scenario and compare "
                    "with single-batch SGD on the union of the batches.")
    aggregate.add_argument("--kind", choices=KINDS, default="logistic", help="regression model (default logistic)")
    aggregate.add_argument("--iterations", type=int, default=100, help="SGD steps (default 100)")
    _add_seed(aggregate, "seed of the data and the sample order (default 0)")
    _register_traces(commands)
    _register_generate(commands)
    _register_limits(commands)
    from primaldual.commands._lbbsp_sweep import register_sweep

    register_sweep(commands, _subcommand)


def _register_traces(commands) -> None:
    from primaldual.lbbsp.replay import DEFAULT_PREDICTOR, REPLAY_PREDICTORS

    replay = _subcommand(commands, _replay, "replay", help="BSP vs LB-BSP vs oracle on a recorded straggler trace",
        description="Replay per-worker mini-batch times (time law T_i(x) = a + (m_i - a) x / x0, see "
                    "docs/lbbsp-traces.md) through BSP, LB-BSP (CPU rule with each predictor, GPU stepper) "
                    "and the clairvoyant oracle.")
    source = replay.add_mutually_exclusive_group(required=True)
    source.add_argument("--trace", help="pai:job_1, pai:job_2, pai:job_3 (packaged) or a CSV file: PAI format "
                                        "(,worker,gpu,time,batch_time_norm) or worker,iteration,time")
    source.add_argument("--cov-job", type=int, help="synthetic trace following row K (0-99) of the CoV table")
    replay.add_argument("--predictor", choices=REPLAY_PREDICTORS, default=DEFAULT_PREDICTOR,
                        help=f"predictor of the LB-BSP method behind 'speedup' (default {DEFAULT_PREDICTOR}); "
                             "all predictors are run and their MAPE reported")
    _add_optional_int(replay, "--global-batch", "global batch X (default 64 per worker)")
    replay.add_argument("--overhead-fraction", type=float, default=0.0,
                        help="fixed per-iteration overhead a as a fraction of the trace's smallest time "
                             "(default 0: linear law)")
    _add_seed(replay, "seed (NARX initialisation, CoV draws; default 0)")
    replay.add_argument("--output", help="also write per-iteration times of every method to this JSON file")

    cov = _subcommand(commands, _cov, "cov", help="speedup distribution over the CoV table's 100 jobs",
        description="Replay one synthetic trace per job of the packaged CoV table and summarise the speedups.")
    cov.add_argument("--jobs", type=int, default=100, help="number of jobs of the table (default 100)")
    cov.add_argument("--first-job", type=int, default=0, help="first job (row) of the table (default 0)")
    _add_seed(cov, "seed of the synthetic traces (default 0)")
    _add_optional_int(cov, "--max-iterations",
                      "replay only the first N iterations of each CoV row (default: the whole row)")

    train = _subcommand(commands, _train, "train",
                        help="real data-parallel SGD with K worker processes: BSP vs LB-BSP wall clock",
        description="Synchronous data-parallel softmax regression on scikit-learn's digits with K spawned "
                    "workers; stragglers sleep in proportion to their batch and a replayed trace slowdown.")
    train.add_argument("--workers", type=int, default=4, help="worker processes K (default 4)")
    train.add_argument("--iterations", type=int, default=60, help="SGD steps per method (default 60)")
    train.add_argument("--straggle", default="pai:job_1", help="trace replayed as slowdowns (default pai:job_1)")
    train.add_argument("--straggler-factor", type=float, default=2.0,
                       help="extra slowdown of worker 0, a persistent straggler (default 2.0)")
    train.add_argument("--global-batch", type=int, default=256, help="global batch X (default 256)")
    train.add_argument("--per-sample-seconds", type=float, default=0.002,
                       help="emulated compute seconds per sample at slowdown 1 (default 0.002)")
    _add_seed(train, "seed of the sample order (default 0)")


def _register_generate(commands) -> None:
    from primaldual.lbbsp.generators import KINDS

    generate = commands.add_parser(
        "generate", help="write a generated straggler trace as a PAI-format CSV",
        description="Write a trace for 'lbbsp replay --trace FILE': a recorded trace with amplified variability, "
                    "a CoV-table job, or a generated kind (docs/lbbsp-traces.md).")
    generate.add_argument("--kind", choices=(*KINDS, "cov"), required=True, help="what to generate")
    generate.add_argument("--base", default="pai:job_1", help="trace amplified by --kind amplified (default pai:job_1)")
    generate.add_argument("--factor", type=float, default=3.0,
                          help="scale of the log deviations from each worker's median (amplified; default 3)")
    generate.add_argument("--cov-job", type=int, default=50, help="CoV-table row (--kind cov; default 50)")
    generate.add_argument("--workers", type=int, default=10, help="workers of a generated kind (default 10)")
    generate.add_argument("--iterations", type=int, default=300, help="iterations of a generated kind (default 300)")
    _add_seed(generate, "seed (default 0)")
    generate.add_argument("--output", required=True, help="CSV file to write")
    generate.set_defaults(handler=_generate)


def _generate(args) -> int:
    from primaldual.commands._common import check_output_path
    from primaldual.lbbsp.generators import amplified, generated, write_pai
    from primaldual.lbbsp.traces import cov_trace, load_trace

    check_flags("generate", args)
    check_product("--workers x --iterations", args.workers * args.iterations, MAX_TRACE_CELLS,
                  "the cells of a trace 'lbbsp replay' can read")
    output = check_output_path(args.output, "--output")
    if args.kind == "amplified":
        trace = amplified(load_trace(args.base), args.factor, args.seed)
    elif args.kind == "cov":
        trace = cov_trace(args.cov_job, seed=args.seed)
    else:
        trace = generated(args.kind, args.workers, args.iterations, args.seed)
    write_pai(trace, output)
    print(f"wrote {trace.name}: {trace.n_workers} workers x {trace.n_iterations} iterations to {output}")
    return 0


def _replay(args) -> int:
    from primaldual.commands._common import check_output_path
    from primaldual.lbbsp.replay import replay
    from primaldual.lbbsp.traces import cov_trace, load_trace

    check_flags("replay", args)
    output = None if args.output is None else check_output_path(args.output, "--output")
    trace = (load_trace(args.trace, max_lines=MAX_REPLAY_CELLS) if args.trace is not None
             else cov_trace(args.cov_job, seed=args.seed))
    with progress_bar("lbbsp replay", enabled=not args.no_progress) as progress:
        result = replay(trace, args.global_batch, overhead_fraction=args.overhead_fraction,
                        default_predictor=args.predictor, seed=args.seed, progress=progress)
    summary = result.summary()
    if output is not None:
        import json

        from primaldual.core.output import write_text
        from primaldual.core.provenance import provenance

        write_text(output, json.dumps({"summary": summary, "iteration_times": {
            m: v.tolist() for m, v in result.iteration_times.items()}, "provenance": provenance()}) + "\n",
            "--output")
    if args.json:
        print_json(summary)
        return 0
    print(f"trace {trace.name}: {trace.n_workers} workers, {trace.n_iterations} iterations "
          f"({trace.skipped_iterations} incomplete skipped), global batch {summary['global_batch']}, "
          f"overhead a = {summary['time_law']['overhead_a']:g}")
    print(f"{'method':<22}{'mean iteration s':>21}{'speedup':>10}")
    for method, mean in summary["mean_iteration_seconds"].items():
        print(f"{method:<22}{mean:>21.3f}{summary['speedups'][method]:>9.3f}x")
    print(f"LB-BSP ({summary['lbbsp_method']}) speedup {summary['speedup']:.3f}x, oracle "
          f"{summary['oracle_speedup']:.3f}x, gap to oracle {summary['gap_to_oracle_percent']:.2f}%")
    print("one-step MAPE: " + ", ".join(f"{p} {v:.2f}%" for p, v in summary["mape_percent"].items()))
    return 0


def _cov(args) -> int:
    from primaldual.lbbsp.replay import cov_distribution

    check_flags("cov", args)
    if not 1 <= args.jobs <= 100 - args.first_job:
        raise InputError(f"--jobs: must be in 1..{100 - args.first_job} (rows after --first-job), got {args.jobs}")
    jobs = range(args.first_job, args.first_job + args.jobs)
    result = cov_distribution(jobs, seed=args.seed, max_iterations=args.max_iterations)
    if args.json:
        print_json(result)
        return 0
    print(f"{result['jobs']} CoV jobs, {result['lbbsp_method']}; quantiles over jobs")
    for key in ("speedup", "oracle_speedup", "gap_to_oracle_percent"):
        print(f"{key:<24}" + "  ".join(f"{q} {v:.3f}" for q, v in result[key].items()))
    print(f"jobs where LB-BSP captures >= half the oracle's gain: {result['jobs_capturing_half_of_oracle_gain']}")
    return 0


def _train(args) -> int:
    from primaldual.lbbsp.traces import load_trace
    from primaldual.lbbsp.training import compare

    check_flags("train", args)
    if args.global_batch < args.workers:
        raise InputError(f"--global-batch: must be >= --workers = {args.workers}, got {args.global_batch}")
    seconds = args.iterations * args.global_batch / args.workers * args.per_sample_seconds * args.straggler_factor
    if seconds > MAX_TRAIN_SECONDS:
        raise InputError(f"--iterations x --global-batch / --workers x --per-sample-seconds x --straggler-factor: "
                         f"{seconds:.0f} emulated seconds of the slowest worker, at most {MAX_TRAIN_SECONDS:.0f} "
                         "(docs/input-ranges.md)")
    trace = load_trace(args.straggle)
    result = compare(args.workers, args.iterations, trace, args.straggler_factor, args.global_batch,
                     args.per_sample_seconds, args.seed)
    if args.json:
        print_json(result)
        return 0
    print(f"{result['dataset']}, {result['model']}; {args.workers} workers, {args.iterations} iterations, "
          f"straggle {trace.name} (worker 0 x{args.straggler_factor:g}); wall clock on a shared machine")
    for method in ("bsp", "lbbsp"):
        print(f"{method:<6} wall clock {result['wall_clock_seconds'][method]:.2f}s  final loss "
              f"{result['final_loss'][method]:.4f}  time to target {result['time_to_target_seconds'][method]:.2f}s")
    print(f"time-to-target speedup {result['time_to_target_speedup']:.2f}x; largest per-iteration loss difference "
          f"{result['max_loss_difference_per_iteration']:.1e}")
    return 0


# Caps of 'lbbsp limits' (primaldual/lbbsp/flags.py): each draw holds 20,000 x workers costs and solves an LP.
MAX_LIMITS_WORKERS, MAX_LIMITS_DRAWS = 1000, 1000


def _register_limits(commands) -> None:
    limits = _subcommand(commands, _limits, "limits",
        help="shares of the oracle's gain a causal rule can reach on persistent levels x exchangeable noise",
        description="Monte Carlo of proofs/lbbsp.md section 3: per-sample costs p_i e_i with p = exp(s_p g) "
                    "known and i.i.d. log-normal noise e; the bound on any causal rule's share of the oracle's "
                    "gain, the share of a split fitted on the true law, and of the proportional rule on p.")
    limits.add_argument("--workers", type=int, default=10,
                        help=f"workers n, 2..{MAX_LIMITS_WORKERS} (default 10; each draw holds 20,000 x n costs)")
    limits.add_argument("--persistent-sigma", type=float, default=0.3,
                        help="log-normal sigma of the persistent levels p (default 0.3)")
    limits.add_argument("--noise-sigma", type=float, default=0.3,
                        help="log-normal sigma of the i.i.d. noise e (default 0.3)")
    limits.add_argument("--draws", type=int, default=20, help=f"draws of p, 1..{MAX_LIMITS_DRAWS} (default 20)")
    _add_seed(limits, "seed (default 0)")


def _limits(args) -> int:
    from primaldual.lbbsp.limits import mixture_limits

    check_flags("limits", args)  # sigmas above 3 overflow exp in the draws
    check_product("--workers x --draws", args.workers * args.draws, MAX_LIMITS_WORKER_DRAWS,
                  "about 0.15-0.2 s per worker per draw")
    result = mixture_limits(args.workers, args.persistent_sigma, args.noise_sigma, args.draws, seed=args.seed)
    if args.json:
        print_json(result)
        return 0
    print(f"n = {args.workers}, persistent sigma {args.persistent_sigma:g}, noise sigma {args.noise_sigma:g}, "
          f"{args.draws} draws: share of the oracle's gain over BSP (min / median / max)")
    for key, figure in result["share_of_oracle_gain"].items():
        print(f"{key:<20}{figure['min']:>7.2f}{figure['median']:>7.2f}{figure['max']:>7.2f}")
    return 0


def _subcommand(commands, handler, name: str, **texts):
    """A subcommand with ``--json`` whose handler is ``handler`` (``texts``: argparse's help and description)."""
    parser = commands.add_parser(name, **texts)
    add_json_flag(parser)
    add_progress_flag(parser)
    parser.set_defaults(handler=with_activity(f"lbbsp {name}", handler))
    return parser


def _add_seed(parser, text: str) -> None:
    """``--seed``, as all lbbsp subcommands but sweep have it: an integer, 0 by default (``text``: what it seeds)."""
    parser.add_argument("--seed", type=int, default=0, help=text)


def _add_optional_int(parser, flag: str, text: str) -> None:
    """An integer ``flag`` whose absence (None) leaves the value to the subcommand (``text`` says how)."""
    parser.add_argument(flag, type=int, default=None, help=text)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _scenario(args):
    check_flags("simulate", args)
    check_product("--workers x --iterations", args.workers * args.iterations, MAX_SIMULATE_CELLS,
                  "per-method arrays of batches and times")
    if args.global_batch is not None and args.global_batch < args.workers:
        raise InputError(f"--global-batch: must be >= workers * min batch = {args.workers} * 1, "
                         f"got {args.global_batch}")
    scenario = SCENARIOS[args.scenario](workers=args.workers, global_batch=args.global_batch,
                                        iterations=args.iterations)
    capacity = int(scenario.memory_cap.sum())
    if scenario.global_batch > capacity:
        raise InputError(f"--global-batch: exceeds the {args.scenario} cluster's total memory cap of {capacity} "
                         f"samples, got {scenario.global_batch}")
    return scenario


def _simulate(args) -> int:
    from primaldual.lbbsp.simulator import simulate

    scenario = _scenario(args)
    result = simulate(scenario, seed=args.seed, predictor=args.predictor, target_samples=args.target_samples)
    summary = result.summary()
    summary["predictor"] = args.predictor
    if args.json:
        print_json(_finite(summary))
        return 0
    print(f"scenario {scenario.name}: {scenario.description}")
    print(f"global batch {scenario.global_batch}, {summary['iterations']} iterations, seed {args.seed}, "
          f"CPU-rule predictor {args.predictor}")
    header = f"{'method':<11}{'s/iteration':>13}{'time to ' + str(summary['target_samples']) + ' samples':>26}" \
             f"{'speedup':>10}{'idle at barrier':>17}"
    print(header)
    print("-" * len(header))
    for method in summary["mean_iteration_seconds"]:
        seconds = summary["time_to_samples_seconds"][method]
        reached = f"{seconds:.1f}s" if math.isfinite(seconds) else "not reached"
        print(f"{method:<11}{summary['mean_iteration_seconds'][method]:>13.4f}{reached:>26}"
              f"{summary['speedup'][method]:>9.3f}x{100 * summary['mean_idle_fraction'][method]:>16.1f}%")
    return 0


def _aggregate(args) -> int:
    from primaldual.lbbsp.aggregation import compare_aggregations, synthetic_regression
    from primaldual.lbbsp.scenarios import cpu_scenario
    from primaldual.lbbsp.simulator import simulate

    check_flags("aggregate", args)
    run = simulate(cpu_scenario(iterations=args.iterations), seed=args.seed, methods=("lbbsp_cpu",))
    schedule = run.runs["lbbsp_cpu"].batches
    data = synthetic_regression(args.kind, samples=4096, dimension=8, seed=args.seed)
    check = compare_aggregations(data, schedule, learning_rate=0.1, seed=args.seed)
    payload = {
        "kind": args.kind,
        "iterations": args.iterations,
        "global_batch": int(schedule[0].sum()),
        "batch_size_range": [int(schedule.min()), int(schedule.max())],
        "weighted_max_deviation": check.weighted_max_deviation,
        "mean_max_deviation": check.mean_max_deviation,
        "final_loss": {"single_batch": check.final_loss_single, "weighted": check.final_loss_weighted,
                       "mean": check.final_loss_mean},
    }
    if args.json:
        print_json(payload)
        return 0
    print(f"{args.kind} regression, {args.iterations} SGD steps, global batch {payload['global_batch']}, "
          f"local batches from LB-BSP's CPU rule in [{schedule.min()}, {schedule.max()}]")
    print(f"max |w_weighted - w_single| = {check.weighted_max_deviation:.3e}   (identical up to rounding)")
    print(f"max |w_mean     - w_single| = {check.mean_max_deviation:.3e}   (plain mean differs)")
    return 0


def _finite(value):
    """JSON has no infinity: an unreachable sample target is reported as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
