"""``primaldual generate``: write a seeded instance file."""

from __future__ import annotations

import inspect
import sys

from primaldual.commands._gpu_types import HELP, gpu_types
from primaldual.commands._common import add_json_flag, check_output_path, print_json
from primaldual.core.files import save_instance
from primaldual.core.generate import PRESETS, generate
from primaldual.core.plural import counted

ORDER = 10


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="write a seeded instance (cluster + jobs + horizon) as JSON",
        description="Draw an instance from a preset with numpy's PCG64 seeded by --seed; same flags, same file.",
        epilog="Presets: " + "; ".join(f"{name}: {p.notes}" for name, p in PRESETS.items()),
    )
    parser.add_argument("--preset", default="small", help=f"one of {', '.join(PRESETS)} (default: small)")
    parser.add_argument("--jobs", type=int, help="number of jobs (default: the preset's)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--horizon", type=int, help="number of slots T (default: the preset's)")
    parser.add_argument("--load", type=float, help="arrival rate in jobs per slot (default: the preset's)")
    parser.add_argument("--worker-servers", type=int, help="number of worker servers H")
    parser.add_argument("--ps-servers", type=int, help="number of PS servers K")
    parser.add_argument("--capacity-scale", type=float, default=1.0,
                        help="multiply every server capacity; below 1, demands are drawn within what fits (said on "
                             "stderr and in the file's meta), or refused if nothing fits")
    parser.add_argument("--gpu-types", help=HELP)
    parser.add_argument("-o", "--output", required=True, help="instance file to write")
    add_json_flag(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    # Every parameter of generate() is a flag of the same name: the call takes them from the namespace.
    # Generated first (it checks every flag, and takes well under a second): a refused run creates no folder.
    flags = {**vars(args), "gpu_types": gpu_types(args.gpu_types)}
    instance = generate(**{name: flags[name] for name in inspect.signature(generate).parameters})
    check_output_path(args.output, "-o/--output")
    save_instance(instance, args.output)
    summary = {
        "output": args.output,
        "jobs": instance.n_jobs,
        "horizon": instance.horizon,
        "worker_servers": instance.cluster.n_worker_servers,
        "ps_servers": instance.cluster.n_ps_servers,
        "resources": list(instance.cluster.resources),
        **instance.meta,
    }
    for note in instance.meta.get("fitted_to_capacity", []):
        # Said on stderr as well as recorded in the file's meta: the draw differs from the preset's ranges.
        print(f"primaldual generate: note: --capacity-scale {args.capacity_scale:g}: {note}", file=sys.stderr)
    if args.json:
        print_json(summary)
    else:
        print(
            f"wrote {args.output}: {counted(instance.n_jobs, 'job')}, {counted(instance.horizon, 'slot')}, "
            f"{instance.cluster.n_worker_servers} worker + {counted(instance.cluster.n_ps_servers, 'PS server')} "
            f"(preset {args.preset}, seed {args.seed})"
        )
    return 0
