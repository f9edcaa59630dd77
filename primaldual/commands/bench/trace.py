"""``primaldual bench trace``: every scheduler on whole Philly VCs, wall time and peak memory, against RRH.

**What is measured.** Each (instance, scheduler) runs in a child process of its own (``python -c``), which loads
the instance file, runs :func:`primaldual.simulation.simulator.simulate` and reports the wall seconds of that
call (``time.perf_counter``) and its peak resident memory, the child's ``ru_maxrss`` from ``getrusage``
(kernel-measured, so numpy's buffers count; read right after the run, before the child verifies the schedule
with :func:`primaldual.core.verify.verify`). ``rss_base`` is the child's ``ru_maxrss`` before the run
(interpreter, numpy, the package and the instance), so ``peak - rss_base`` is what the run itself added. A
child that exceeds ``--timeout`` is reported as such. Every figure is also given as a ratio against RRH in
the same run and on the same instance, which is what carries over to another machine.

**Growth.** On one VC (``--growth-vc``) the jobs, the slots and the servers are varied one at a time over three
sizes each: every 4th, 2nd and every job (the cluster held at the whole VC's size); slots of 4, 2 and 1 hours
(the same jobs and cluster: the horizon and every job's work in worker-slots scale together); and 1, 2 and 4
times the VC's default GPUs (the same jobs). The exponent is the least-squares slope of ``log seconds``
(and of ``log (peak - rss_base)``) against ``log size``: 1 is linear growth.

**The whole cluster** (``--cluster``): all 15 VCs of a seed merged (their records concatenated and sorted by
arrival, as :func:`primaldual.traces.convert.build_instance` does) on 500 GPUs, Gavel's Philly cluster.

Dorm is left out unless named with ``--schedulers``: it solves a MILP at every arrival and departure with a
wall-clock limit per decision (``time_limit``, 2 s), so a whole VC's ~4,000 decisions are bounded by its limit,
not by its representation.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from primaldual.commands._common import print_json
from primaldual.core.errors import InputError

NAME = "trace"
HELP = ("every scheduler on whole Philly VCs: wall seconds and peak memory (a child's ru_maxrss), as ratios "
        "against RRH, and how each grows with jobs, slots and servers (measured exponents)")

LARGEST = ("11cb48", "6214e9", "ee9e8c")
GROWTH_VC = "6214e9"
QUICK_VC, QUICK_WINDOW, QUICK_TAIL = "b436b2", (200.0, 96.0), 24.0
CLUSTER_GPUS = 500
DEFAULT_SCHEDULERS = ("fifo", "drf", "rrh", "rrh-nonpreemptive", "rrh-full-reward", "greedy", "oasis", "oasis-lr",
                      "oasis-p")

CHILD = """
import json, resource, sys, time
from primaldual.core.files import load_instance
from primaldual.core.verify import verify
from primaldual.simulation.simulator import simulate
import primaldual.reproduce.readings  # registers rrh-full-reward and rrh-nonpreemptive, as the command line does
instance = load_instance(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
began = time.perf_counter()
result = simulate(instance, sys.argv[2])
seconds = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = verify(instance, result.schedule)
print(json.dumps({"seconds": seconds, "rss_kib": peak, "rss_base_kib": base, "utility": report.utility,
                  "feasible": report.feasible, "completed": len(report.completion_slots)}))
"""


def add_arguments(parser) -> None:
    parser.add_argument("--seed", type=int, default=0, choices=(0, 1), help="trace seed (default 0)")
    parser.add_argument("--vcs", default=",".join(LARGEST),
                        help=f"comma-separated VCs run whole (default the largest: {','.join(LARGEST)})")
    parser.add_argument("--growth-vc", default=GROWTH_VC, help=f"VC of the growth table (default {GROWTH_VC})")
    parser.add_argument("--schedulers", default=",".join(DEFAULT_SCHEDULERS),
                        help="comma-separated schedulers (default every registered one but dorm)")
    parser.add_argument("--growth-schedulers", metavar="LIST",
                        help="comma-separated schedulers of the growth table (default: --schedulers)")
    parser.add_argument("--cluster", action="store_true",
                        help=f"also the whole cluster: all 15 VCs of the seed merged, {CLUSTER_GPUS} GPUs")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per child run (default 900)")
    parser.add_argument("--quick", action="store_true",
                        help=f"hours {QUICK_WINDOW[0]:g}-{sum(QUICK_WINDOW):g} of {QUICK_VC} (+{QUICK_TAIL:g} h to "
                             "finish) instead of whole VCs")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


def _measure(instance, scheduler: str, folder: Path, timeout: float) -> dict:
    """One child run of ``scheduler`` on ``instance`` (module docstring)."""
    from primaldual.core.files import save_instance

    path = folder / "instance.json"
    save_instance(instance, path)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(path), scheduler], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"scheduler": scheduler, "error": f"over {timeout:g} s"}
    if done.returncode != 0:
        return {"scheduler": scheduler, "error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    row = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"bench trace: {instance.n_jobs} jobs x {instance.horizon} slots, {scheduler}: {row['seconds']:.1f} s, "
          f"{row['rss_kib'] / 1024:.0f} MiB", file=sys.stderr, flush=True)  # progress of a long run
    return {"scheduler": scheduler, "seconds": row["seconds"], "peak_mib": row["rss_kib"] / 1024,
            "run_mib": (row["rss_kib"] - row["rss_base_kib"]) / 1024, "utility": row["utility"],
            "feasible": row["feasible"], "completed": row["completed"]}


def _against_rrh(rows: list[dict]) -> list[dict]:
    rrh = next((r for r in rows if r["scheduler"] == "rrh" and "error" not in r), None)
    for row in rows:
        if rrh is not None and "error" not in row:
            row["seconds_vs_rrh"] = row["seconds"] / rrh["seconds"] if rrh["seconds"] > 0 else None
            row["peak_vs_rrh"] = row["peak_mib"] / rrh["peak_mib"]
    return rows


def _slope(sizes, values) -> float | None:
    """Least-squares slope of log value against log size (None with fewer than two positive points)."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if v is not None and v > 0 and s > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread > 0 else None


def _growth_instances(source: str, options):
    """``{dimension: [(size, instance), ...]}`` for jobs, slots and servers (module docstring)."""
    from dataclasses import replace

    from primaldual.traces import import_trace, read_records
    from primaldual.traces.convert import build_instance
    from primaldual.traces.throughput import packaged_table

    whole = import_trace(source, options)
    gpus = whole.meta["trace"]["cluster"]["gpus"]
    records, found = read_records(source, options)
    fixed = replace(options, gpus=gpus)
    jobs = [build_instance(records[::k], fixed, packaged_table(), source=found.name, format=found.format,
                           seed=found.seed, vc=found.vc) for k in (4, 2, 1)]
    slots = [import_trace(source, replace(fixed, slot_hours=h)) for h in (4.0, 2.0, 1.0)]
    servers = [import_trace(source, replace(options, gpus=gpus * m)) for m in (1, 2, 4)]
    return {"jobs": [(i.n_jobs, i) for i in jobs], "slots": [(i.horizon, i) for i in slots],
            "servers": [(i.cluster.n_worker_servers + i.cluster.n_ps_servers, i) for i in servers]}


def _whole_cluster(seed: int):
    from primaldual.traces import TraceOptions, packaged_vcs, read_records
    from primaldual.traces.convert import build_instance
    from primaldual.traces.throughput import packaged_table

    records = [r for vc in packaged_vcs(seed) for r in read_records(f"philly:{seed}/{vc}")[0]]
    return build_instance(records, TraceOptions(gpus=CLUSTER_GPUS), packaged_table(), source=f"philly:{seed}/*",
                          format="gavel", seed=seed)


def run(args) -> int:
    from primaldual.simulation.scheduler import available_schedulers
    from primaldual.traces import TraceOptions, import_trace, packaged_vcs

    schedulers = [s for s in args.schedulers.split(",") if s]
    growing = [s for s in (args.growth_schedulers or args.schedulers).split(",") if s]
    unknown = [s for s in schedulers + growing if s not in available_schedulers()]
    vcs = [v for v in args.vcs.split(",") if v]
    missing = [v for v in vcs + [args.growth_vc] if v not in packaged_vcs(args.seed)]
    if unknown or missing or "rrh" not in schedulers or not args.timeout > 0:
        raise InputError(f"--schedulers must name registered schedulers, rrh among them, --vcs/--growth-vc "
                         f"packaged VCs of seed {args.seed}, --timeout > 0; got {unknown + missing or args.timeout}")
    options = TraceOptions(window=QUICK_WINDOW, tail_hours=QUICK_TAIL) if args.quick else TraceOptions()
    vcs, growth_vc = ([QUICK_VC], QUICK_VC) if args.quick else (vcs, args.growth_vc)
    result = {"seed": args.seed, "quick": args.quick, "memory": "child ru_maxrss (getrusage)", "whole": [],
              "growth": {}}
    with tempfile.TemporaryDirectory() as folder:
        for vc in vcs:
            instance = import_trace(f"philly:{args.seed}/{vc}", options)
            rows = _against_rrh([_measure(instance, s, Path(folder), args.timeout) for s in schedulers])
            result["whole"].append({"instance": _describe(f"philly:{args.seed}/{vc}", instance), "rows": rows})
        if args.cluster and not args.quick:
            instance = _whole_cluster(args.seed)
            rows = _against_rrh([_measure(instance, s, Path(folder), args.timeout) for s in schedulers])
            result["whole"].append({"instance": _describe(f"philly:{args.seed}/* merged", instance), "rows": rows})
        for dimension, sized in _growth_instances(f"philly:{args.seed}/{growth_vc}", options).items():
            runs = {s: [_measure(i, s, Path(folder), args.timeout) for _, i in sized] for s in growing}
            sizes = [size for size, _ in sized]
            result["growth"][dimension] = {"sizes": sizes, "exponents": {
                s: {"seconds": _slope(sizes, [r.get("seconds") for r in rows]),
                    "memory": _slope(sizes, [r.get("run_mib") for r in rows])} for s, rows in runs.items()},
                "runs": runs}
    if args.json:
        print_json(result)
    else:
        print(format_result(result))
    return 0


def _describe(name: str, instance) -> dict:
    return {"name": name, "jobs": instance.n_jobs, "slots": instance.horizon,
            "worker_servers": instance.cluster.n_worker_servers, "ps_servers": instance.cluster.n_ps_servers}


def _number(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_result(result: dict) -> str:
    lines = [f"bench trace (seed {result['seed']}{', quick' if result['quick'] else ''}); memory: "
             f"{result['memory']}, seconds: the simulate() call"]
    for block in result["whole"]:
        d = block["instance"]
        lines += ["", f"{d['name']}: {d['jobs']} jobs x {d['slots']} slots x {d['worker_servers']}+"
                      f"{d['ps_servers']} servers",
                  f"{'scheduler':<18} {'seconds':>8} {'peak MiB':>9} {'run MiB':>8} {'s/RRH':>6} {'mem/RRH':>7} "
                  f"{'utility':>11} feasible"]
        for r in block["rows"]:
            if "error" in r:
                lines.append(f"{r['scheduler']:<18} {r['error']}")
                continue
            lines.append(f"{r['scheduler']:<18} {r['seconds']:>8.1f} {r['peak_mib']:>9.0f} {r['run_mib']:>8.0f} "
                         f"{_number(r.get('seconds_vs_rrh'), '.2f'):>6} {_number(r.get('peak_vs_rrh'), '.2f'):>7} "
                         f"{r['utility']:>11.1f} {r['feasible']}")
    if result["growth"]:
        dims = list(result["growth"])
        sizes = "; ".join(f"{d} {result['growth'][d]['sizes']}" for d in dims)
        lines += ["", f"growth exponents, seconds (memory), sizes: {sizes}",
                  f"{'scheduler':<18} " + " ".join(f"{d:>13}" for d in dims)]
        for s in next(iter(result["growth"].values()))["exponents"]:
            cells = [result["growth"][d]["exponents"][s] for d in dims]
            lines.append(f"{s:<18} " + " ".join(f"{_number(c['seconds'], '.2f'):>6} ({_number(c['memory'], '.2f')})"
                                                  .rjust(13) for c in cells))
    return "\n".join(lines)
