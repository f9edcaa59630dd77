"""What each of OASiS-LR's caches and shortcuts buys: the run with it against the run without it.

Usage (from a checkout, with the package installed)::

    primaldual trace import philly:0/11cb48 --window 1944:168 -o week.json
    python examples/cache_ablation.py week.json --reps 3

Each *variant* is a copy of the checkout's ``primaldual`` with one cache or shortcut switched off by a
text edit listed in :data:`VARIANTS` (each edit must match exactly once, so a variant that no longer applies
to the code fails loudly instead of measuring the unchanged tree). Every variant must give the same
schedule's utility as the tree itself, to the last bit, which the script checks: a cache that changed a
float would not be a cache. Each run is its own process (an RRH run to warm up, then OASiS-LR timed by
process CPU time), in adjacent pairs with the tree itself (:func:`paired`). The figures are in ``docs/measurements.md``, "What each cache buys".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# name -> [(file, text, replacement)]: the one edit that switches the cache off.
VARIANTS: dict[str, list[tuple[str, str, str]]] = {
    "price cache refreshes all slots": [(
        "primaldual/oasis/lr/price_cache.py", "            rows = np.flatnonzero(changed)\n",
        "            rows = np.arange(slot, ledger.worker_used.shape[0])\n")],
    "twins rebuild their prices": [(
        "primaldual/oasis/lr/state.py",
        "price_cache=cache.copy_onto(ledger) if cache is not None and cache.ledger is self.ledger\n"
        "                       else None,", "price_cache=None,")],
    "present values every call": [(
        "primaldual/oasis/lr/order.py", "    if known is None or known.slot != slot:\n", "    if True:\n")],
    "no-room profiles searched": [
        ("primaldual/oasis/lr/reference.py", "    if plan.no_room[profile] and not plan.placed[m] and not own:\n",
         "    if False:\n"),
        ("primaldual/oasis/lr/reference.py", "    elif plan.no_room[profile]:\n        return\n", "")],
    "Z(D) computed per placement": [(
        "primaldual/oasis/lr/state.py",
        "ps_needed = tuple(np.array(ps_needed_table(job), dtype=np.int64) for job in instance.jobs)",
        "ps_needed = tuple(np.zeros(0, dtype=np.int64) for job in instance.jobs)")],
    "utilities per job": [(
        "primaldual/oasis/lr/order.py",
        "        value = tables.utilities.at(missing, slot + needed - 1 - instance.arrivals[missing])\n",
        "        value = np.array([float(instance.jobs[j].utility(d)) for j, d in zip(missing.tolist(), "
        "(slot + needed - 1 - instance.arrivals[missing]).tolist())])\n")],
}

TIMER = """
import json, sys, time
from primaldual.core.files import load_instance
from primaldual.simulation.simulator import simulate
instance, restart_cost = load_instance(sys.argv[1]), float(sys.argv[2])
simulate(instance, "rrh", restart_cost=restart_cost)  # imports and compiled loops loaded before the clock
start = time.process_time(); run = simulate(instance, "oasis-lr", restart_cost=restart_cost)
print(json.dumps({"oasis_lr": time.process_time() - start, "utility": run.utility.hex()}))
"""


def build(root: Path, checkout: Path, names: list[str]) -> dict[str, Path]:
    """One tree per variant of ``names`` (and ``"none"``, the checkout as it is) under ``root``."""
    trees = {}
    for name, edits in [("none", [])] + [(name, VARIANTS[name]) for name in names]:
        tree = root / str(len(trees))
        tree.mkdir()
        shutil.copytree(checkout / "primaldual", tree / "primaldual", ignore=shutil.ignore_patterns("__pycache__"))
        for file, text, replacement in edits:
            path = tree / file
            path.write_text(edited(path.read_text(), name, file, text, replacement))
        trees[name] = tree
    return trees


def edited(source: str, name: str, file: str, text: str, replacement: str) -> str:
    if source.count(text) != 1:
        sys.exit(f"variant {name!r}: its edit of {file} matches {source.count(text)} times, not once")
    return source.replace(text, replacement)


def time_one(tree: Path, instance: str, restart_cost: float) -> dict:
    environment = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", TIMER, instance, str(restart_cost)], env=environment, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def paired(base: Path, variant: Path, instance: str, args) -> str:
    """The variant against the tree in adjacent pairs of runs (the first of a pair alternating), so that the
    machine's slow and fast phases, which last minutes here, fall on both alike: the median over pairs of
    the variant's seconds over the tree's."""
    ratios, seconds = [], []
    for rep in range(args.reps):
        pair = [("none", base), ("variant", variant)]
        if rep % 2:
            pair.reverse()
        results = {label: time_one(tree, instance, args.restart_cost) for label, tree in pair}
        if results["variant"]["utility"] != results["none"]["utility"]:
            sys.exit(f"a variant changed the utility on {instance}: not a cache")
        ratios.append(results["variant"]["oasis_lr"] / results["none"]["oasis_lr"])
        seconds.append(results["none"]["oasis_lr"])
    return f"without it x{statistics.median(ratios):.2f} (pairs: {', '.join(f'{r:.2f}' for r in ratios)}; " \
           f"oasis-lr {statistics.median(seconds):.1f} s with it)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--restart-cost", type=float, default=0.0)
    parser.add_argument("--only", action="append", choices=sorted(VARIANTS), help="these variants (default: all)")
    args = parser.parse_args()
    checkout = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as root:
        trees = build(Path(root), checkout, args.only or list(VARIANTS))
        for instance in args.instances:
            for name, tree in trees.items():
                if name != "none":
                    print(f"{Path(instance).name}\t{name}\t{paired(trees['none'], tree, instance, args)}", flush=True)


if __name__ == "__main__":
    main()
