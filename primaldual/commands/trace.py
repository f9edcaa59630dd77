"""``primaldual trace``: real job arrivals as instances (docs/traces.md).

``trace import SOURCE -o instance.json`` converts a Gavel trace (7- or 10-field lines), a CSV of one's own jobs
or a packaged Philly VC (``philly:0/6214e9``); every assumption is a flag with a default, recorded in the
instance's meta. ``trace list`` lists the packaged VCs.
"""

from __future__ import annotations

import sys

from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.commands._gpu_types import HELP, gpu_types
from primaldual.commands._progress import add_progress_flag, with_activity
from primaldual.core.errors import InputError
from primaldual.core.plural import counted

ORDER = 15


def _window(text: str) -> tuple[float, float]:
    """``--window START_HOUR:HOURS``, both ASCII decimal numbers (:mod:`primaldual.core.numerals`)."""
    from primaldual.core.numerals import echo, read_number

    start, colon, hours = text.partition(":")
    values = (read_number(start), read_number(hours))
    if not colon or None in values:
        raise InputError(f"--window: must be START_HOUR:HOURS in ASCII decimal, e.g. 0:168, got {echo(text)}")
    return values


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "trace", help="import real job traces (Philly via Gavel, or a CSV) as instances",
        description="Real job arrivals as instances: trace import, trace list (docs/traces.md).")
    commands = parser.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: (parser.print_help(sys.stderr), 2)[1])

    convert = commands.add_parser(
        "import", help="convert a trace into an instance file",
        description="Convert SOURCE (a Gavel .trace file, a CSV, or a packaged name philly:SEED/VC) into an "
                    "instance. Every assumption is a flag below; its value is recorded in the file's meta.")
    convert.add_argument("source", metavar="SOURCE", help="trace file or packaged name (primaldual trace list)")
    convert.add_argument("--format", choices=("gavel", "csv"), help="default: csv for *.csv, else gavel")
    convert.add_argument("--slot-hours", type=float, default=1.0, help="slot length in hours (default 1)")
    convert.add_argument("--window", help="START_HOUR:HOURS, jobs arriving in [start, "
                         "start+hours); horizon = HOURS (+ --tail-hours). Default: the whole trace")
    convert.add_argument("--tail-hours", type=float, default=0.0,
                         help="hours added to the horizon after the window (default 0)")
    convert.add_argument("--gpus", type=int, help="cluster GPUs, in 8-GPU servers (default: the fewest servers "
                         "at which the mean GPU load is at most --target-load)")
    convert.add_argument("--ps-servers", type=int, help="PS servers (default: as many as worker servers)")
    convert.add_argument("--target-load", type=float, default=0.8,
                         help="mean GPU load / capacity of the default cluster size (default 0.8)")
    convert.add_argument("--utility", default="sigmoid", help="sigmoid|step|linear|constant[:slack=2,"
                         "steepness=5,value_per_gpu_hour=1] (default sigmoid)")
    convert.add_argument("--scaling-efficiency", type=float, default=0.9,
                         help="throughput efficiency at GPU counts not measured (default 0.9)")
    convert.add_argument("--outlasting", choices=("drop", "keep"), default="drop",
                         help="jobs that cannot finish by the horizon even alone (default drop)")
    convert.add_argument("--oversize", choices=("cap", "drop"), default="cap",
                         help="jobs wider than the cluster: cap their workers, or drop them (default cap)")
    convert.add_argument("--seed", type=int, help="Gavel's preparation seed for philly:VC (default 0)")
    convert.add_argument("--gpu-types", help=HELP.replace("worker servers", "8-GPU worker servers") + "; instead of --gpus")
    convert.add_argument("-o", "--output", required=True, help="instance file to write")
    add_json_flag(convert)
    add_progress_flag(convert)
    convert.set_defaults(handler=with_activity("trace import", run_import))

    busiest = commands.add_parser(
        "busiest", help="the window of a trace whose own arrivals bring the most GPU-hours",
        description="Scan the windows of --hours starting every --step-hours (default: each midnight of the trace's "
                    "clock) and print the one whose own arrivals bring the most GPU-hours into it "
                    "(primaldual/traces/windows.py), as the --window value of trace import.")
    busiest.add_argument("source", metavar="SOURCE", help="trace file or packaged name (primaldual trace list)")
    busiest.add_argument("--format", choices=("gavel", "csv"), help="default: csv for *.csv, else gavel")
    busiest.add_argument("--hours", type=float, default=168.0, help="window length in hours (default 168)")
    busiest.add_argument("--step-hours", type=float, default=24.0, help="start every this many hours (default 24)")
    busiest.add_argument("--seed", type=int, help="Gavel's preparation seed for philly:VC (default 0)")
    add_json_flag(busiest)
    busiest.set_defaults(handler=run_busiest)

    listing = commands.add_parser("list", help="list the packaged Philly VCs with job counts and spans")
    add_json_flag(listing)
    listing.set_defaults(handler=run_list)


def run_import(args) -> int:
    from primaldual.core.files import save_instance
    from primaldual.traces import TraceOptions, import_trace, parse_rule

    options = TraceOptions(format=args.format, slot_hours=args.slot_hours, window=None if args.window is None else _window(args.window),
                           tail_hours=args.tail_hours, gpus=args.gpus, ps_servers=args.ps_servers,
                           target_load=args.target_load, utility=parse_rule(args.utility),
                           scaling_efficiency=args.scaling_efficiency, outlasting=args.outlasting,
                           oversize=args.oversize, seed=args.seed, gpu_types=gpu_types(args.gpu_types))
    check_output_path(args.output, "-o/--output")  # after the options are checked: a refused run makes no folder
    instance = import_trace(args.source, options)
    save_instance(instance, args.output)
    trace = instance.meta["trace"]
    for note in trace["notes"]:
        print(f"primaldual trace import: note: {note}", file=sys.stderr)
    summary = {"output": args.output, "jobs": instance.n_jobs, "horizon": instance.horizon,
               "worker_servers": instance.cluster.n_worker_servers, "ps_servers": instance.cluster.n_ps_servers,
               **{key: value for key, value in trace.items() if key != "profiles"}}
    if args.json:
        print_json(summary)
    else:
        print(f"wrote {args.output}: {counted(instance.n_jobs, 'job')}, {counted(instance.horizon, 'slot')} of "
              f"{trace['slot_hours']:g} h, {trace['cluster']['gpus']} GPUs on {instance.cluster.n_worker_servers} "
              f"worker + {counted(instance.cluster.n_ps_servers, 'PS server')} (from {trace['source']})")
    return 0


def run_busiest(args) -> int:
    from primaldual.core.domains import MAX_HORIZON
    from primaldual.traces import TraceOptions, read_records
    from primaldual.traces.throughput import packaged_table
    from primaldual.traces.windows import busiest_window

    options = TraceOptions(format=args.format, seed=args.seed)
    records, found = read_records(args.source, options)
    window = busiest_window(records, packaged_table(), args.hours, args.step_hours, options, found.name)
    if window.hours > MAX_HORIZON:  # the window is valid, but not in slots of 1 h (trace import's default)
        print(f"primaldual trace busiest: note: import this window with --slot-hours >= "
              f"{window.hours / MAX_HORIZON:g} (at most {MAX_HORIZON} slots)", file=sys.stderr)
    if args.json:
        print_json({"source": found.name, "window": window.flag, "start_hour": window.start_hour,
                    "hours": window.hours, "arrivals": window.arrivals, "gpu_hours": window.gpu_hours,
                    "mean_gpus": window.mean_gpus})
    else:
        print(f"{window.flag}  ({found.name}: {window.arrivals} arrivals, {window.gpu_hours:.1f} GPU-hours inside, "
              f"{window.mean_gpus:.1f} GPUs on average)")
    return 0


def run_list(args) -> int:
    from primaldual.traces import list_packaged

    rows = list_packaged()
    if args.json:
        print_json({"vcs": rows})
        return 0
    print(f"{'source':<18} {'jobs':>5} {'span h':>7} {'GPU-h':>10} {'mean GPUs':>9} {'max job':>7} {'default GPUs':>12}")
    for row in rows:
        print(f"{row['source']:<18} {row['jobs']:>5} {row['span_hours']:>7g} {row['gpu_hours']:>10.1f} "
              f"{row['mean_gpu_load']:>9.1f} {row['max_gpus']:>7} {row['default_gpus']:>12}")
    return 0
