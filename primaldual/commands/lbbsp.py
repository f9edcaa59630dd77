"""``primaldual lbbsp``: LB-BSP batch sizing on a simulated BSP cluster (Chen et al., SoCC 2020).

``lbbsp simulate`` runs BSP, LB-BSP (CPU rule and GPU stepper) and the oracle on one scenario and
reports mean iteration time, time to a fixed number of samples and speedup over BSP.
``lbbsp aggregate`` trains logistic / least-squares regression with the batch sizes LB-BSP chose and
shows that weighted aggregation reproduces single-batch SGD while the plain mean does not.
"""

from __future__ import annotations

import argparse
import math

from primaldual.commands._common import add_json_flag, print_json
from primaldual.errors import InputError
from primaldual.lbbsp.aggregation import KINDS
from primaldual.lbbsp.predictors import PREDICTORS
from primaldual.lbbsp.scenarios import SCENARIOS

ORDER = 70


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lbbsp", help="LB-BSP batch sizing for stragglers: simulate, compare with BSP and an oracle",
        description="Semi-dynamic batch sizing (LB-BSP) on a simulated BSP cluster.")
    commands = parser.add_subparsers(dest="lbbsp_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: _usage(parser))

    simulate = commands.add_parser(
        "simulate", help="BSP vs LB-BSP vs oracle on one scenario",
        description="Run BSP (equal batches), LB-BSP's CPU rule, LB-BSP's GPU stepper and an oracle that "
                    "knows the true speeds on the same random streams.")
    simulate.add_argument("--scenario", choices=tuple(SCENARIOS), default="gpu",
                          help="gpu: heterogeneous dedicated GPUs; cpu: non-dedicated CPUs with interference "
                               "(default gpu)")
    simulate.add_argument("--workers", type=int, default=8, help="number of workers n (default 8)")
    simulate.add_argument("--iterations", type=int, default=300, help="BSP iterations (default 300)")
    simulate.add_argument("--global-batch", type=int, default=None,
                          help="global batch X (default 96 per worker on gpu, 64 on cpu)")
    simulate.add_argument("--seed", type=int, default=0, help="seed of the random streams (default 0)")
    simulate.add_argument("--predictor", choices=tuple(PREDICTORS), default="narx",
                          help="speed predictor of the CPU rule (default narx)")
    simulate.add_argument("--target-samples", type=int, default=None,
                          help="report the time to process this many samples (default: all of the run)")
    add_json_flag(simulate)
    simulate.set_defaults(handler=_simulate)

    aggregate = commands.add_parser(
        "aggregate", help="weighted vs plain-mean gradient aggregation on real SGD",
        description="Train regression with the unequal batches LB-BSP chose on the cpu scenario and compare "
                    "with single-batch SGD on the union of the batches.")
    aggregate.add_argument("--kind", choices=KINDS, default="logistic", help="regression model (default logistic)")
    aggregate.add_argument("--iterations", type=int, default=100, help="SGD steps (default 100)")
    aggregate.add_argument("--seed", type=int, default=0, help="seed of the data and the sample order (default 0)")
    add_json_flag(aggregate)
    aggregate.set_defaults(handler=_aggregate)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise InputError(f"{name}: must be >= 1, got {value}")


def _check_seed(seed: int) -> None:
    # numpy's generators reject negative seeds with a bare ValueError deep in the simulation.
    if seed < 0:
        raise InputError(f"--seed: must be an integer >= 0, got {seed}")


def _scenario(args):
    _positive("--workers", args.workers)
    _positive("--iterations", args.iterations)
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
    _check_seed(args.seed)
    if args.target_samples is not None:
        _positive("--target-samples", args.target_samples)
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

    _positive("--iterations", args.iterations)
    _check_seed(args.seed)
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
