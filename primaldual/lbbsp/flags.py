"""The type and finite range of every flag of ``primaldual lbbsp ...`` and ``bench lbbsp`` (docs/input-ranges.md).

:data:`FLAGS` maps each subcommand to each of its flags: a :class:`FlagRange` for a number, or the kind of a
non-numeric flag (a choice list argparse checks, a trace or path read later, a switch, an ``A-B`` range).
``tests/hardening/test_lbbsp_inputs.py`` compares this table with the argparse parsers, so a flag cannot be
added without a range, and tests both edges of every range. :func:`check_flags` runs first in every handler,
before anything is read, generated or allocated. Cost O(flags).

Where the ranges come from: sizes are capped by the memory of the arrays they size (24 GiB machine) and by the
run time of the loops they drive (measured on 2 shared cores; docs/lbbsp-traces.md, "Cost"); the other numbers
by what is meaningful (a factor that overflows ``exp``, an overhead that leaves no per-sample cost). Products of
flags (workers x iterations, ...) are checked by the handlers, after the single ranges, with the same style of
message.
"""

from __future__ import annotations

from primaldual.core.domains import show
from primaldual.core.errors import InputError
from primaldual.core.ranges import SEED_HIGH, FlagRange, integer, number
from primaldual.lbbsp.replay import MAX_OVERHEAD_FRACTION, MAX_REPLAY_CELLS
from primaldual.lbbsp.traces import MAX_TRACE_CELLS, MAX_TRACE_WORKERS

CHOICE, TRACE, PATH, SWITCH, SPAN = "choice", "trace", "path", "switch", "A-B range"
#: Largest global batch of any command: 10^6 samples per worker at the largest trace width (int64-safe).
MAX_GLOBAL_BATCH = 10 ** 9
#: ``lbbsp limits``: each draw holds 20,000 x workers costs and solves an LP of 1,500 x workers rows, about
#: 0.15-0.2 s per worker per draw, so workers x draws <= 2,000 keeps a run within ~6 minutes.
MAX_LIMITS_WORKER_DRAWS = 2000
#: ``lbbsp simulate``: iterations x workers (per-method arrays of this many batches and times).
MAX_SIMULATE_CELLS = 10 ** 6
#: ``lbbsp train``: emulated compute seconds of the slowest worker, iterations x (X / K) x per-sample seconds x
#: straggler factor, per method: a bound on the wall clock of a run that only sleeps.
MAX_TRAIN_SECONDS = 3600.0
#: ``lbbsp sweep``: traces in one sweep (seeds x CoV jobs).
MAX_SWEEP_TRACES = 10_000


SEED = integer(0, SEED_HIGH)
FACTOR = number(0, 100, low_open=True)

FLAGS: dict[str, dict[str, object]] = {
    "simulate": {"--scenario": CHOICE, "--workers": integer(1, 1000), "--iterations": integer(1, 100_000),
                 "--global-batch": integer(1, MAX_GLOBAL_BATCH), "--seed": SEED, "--predictor": CHOICE,
                 "--target-samples": integer(1, 10 ** 15), "--json": SWITCH},
    "aggregate": {"--kind": CHOICE, "--iterations": integer(1, 100_000), "--seed": SEED, "--json": SWITCH},
    "replay": {"--trace": TRACE, "--cov-job": integer(0, 99), "--predictor": CHOICE,
               "--global-batch": integer(2, MAX_GLOBAL_BATCH),
               "--overhead-fraction": number(0, MAX_OVERHEAD_FRACTION), "--seed": SEED, "--output": PATH,
               "--json": SWITCH},
    "cov": {"--jobs": integer(1, 100), "--first-job": integer(0, 99), "--seed": SEED,
            "--max-iterations": integer(2, 2000), "--json": SWITCH},
    "train": {"--workers": integer(2, 64), "--iterations": integer(1, 10_000), "--straggle": TRACE,
              "--straggler-factor": number(1, 100), "--global-batch": integer(2, 4096),
              "--per-sample-seconds": number(0, 0.1, low_open=True), "--seed": SEED, "--json": SWITCH},
    "generate": {"--kind": CHOICE, "--base": TRACE, "--factor": FACTOR, "--cov-job": integer(0, 99),
                 "--workers": integer(2, MAX_TRACE_WORKERS), "--iterations": integer(2, 100_000), "--seed": SEED,
                 "--output": PATH},
    "limits": {"--workers": integer(2, 1000), "--persistent-sigma": number(0, 3),
               "--noise-sigma": number(0, 3, low_open=True), "--draws": integer(1, 1000), "--seed": SEED,
               "--json": SWITCH},
    "sweep": {"--kind": CHOICE, "--seeds": SPAN, "--base": TRACE, "--factor": FACTOR, "--cov-jobs": SPAN,
              "--workers": integer(2, MAX_TRACE_WORKERS), "--iterations": integer(2, 100_000),
              "--global-batch": integer(2, MAX_GLOBAL_BATCH), "--law-aware-samples": integer(2, 10_000, off=True),
              "--sample-seed": SEED, "--law-aware-target": CHOICE, "--json": SWITCH},
    "bench lbbsp": {"--seed": SEED, "--quick": SWITCH, "--json": SWITCH},
}
# Every command but generate shows progress on stderr when it runs long (primaldual.commands._progress).
for _command in FLAGS:
    if _command != "generate":
        FLAGS[_command]["--no-progress"] = SWITCH



def check_flags(command: str, args) -> None:
    """Refuse the first numeric flag of ``command`` outside its range: ``--flag: must be RANGE, got VALUE``.
    A flag left at ``None`` (an optional default) is not checked."""
    for flag, kind in FLAGS[command].items():
        if not isinstance(kind, FlagRange):
            continue
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None and not kind.contains(value):
            raise InputError(f"{flag}: must be {kind.describe()}, got {show(value)}")


def check_product(flags: str, value: int, high: int, why: str) -> None:
    """A product of flags (``--workers x --iterations``) above its documented cap ``high``."""
    if value > high:
        raise InputError(f"{flags}: {value:,} is more than {high:,} ({why}; docs/input-ranges.md)")


__all__ = ["FLAGS", "FlagRange", "check_flags", "check_product", "MAX_REPLAY_CELLS", "MAX_TRACE_CELLS"]
