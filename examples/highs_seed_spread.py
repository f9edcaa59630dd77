"""Plain HiGHS's own run-to-run spread on the package's exported model: the same instance, only HiGHS's
``random_seed`` changed, gives the time to a 10% / 1% / 0.1% gap and the gap at the budget per seed.

This is the yardstick behind issue 27's "1.1x plain highspy at every gap" (docs/measurements.md, "Offline
strength"): a ratio within 1.1x per gap is only meaningful where the solver is itself within 1.1x of itself.

    python examples/highs_seed_spread.py 20 m30_41001.json m30_41003.json
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from primaldual.backends.highs import quiet_highs
from primaldual.core.files import load_instance
from primaldual.offline.export import write_model
from primaldual.offline.trace import gap_at, record_progress, time_to_gap

GAPS = (0.1, 0.01, 0.001)


def spread(path: str, budget: float, seeds=(0, 1, 2)) -> list[tuple[int, list[float | None], float]]:
    """Per HiGHS ``random_seed``: seconds to each gap of :data:`GAPS` (None if never) and the gap at ``budget``."""
    with tempfile.TemporaryDirectory() as folder:
        mps = str(Path(folder) / "model.mps")
        write_model(load_instance(path), mps)
        rows = []
        for seed in seeds:
            origin = time.time()
            highs = quiet_highs()
            highs.readModel(mps)
            highs.setOptionValue("time_limit", budget)
            highs.setOptionValue("mip_rel_gap", 1e-7)
            highs.setOptionValue("random_seed", seed)
            trace: list = []
            record_progress(highs, trace, origin)
            highs.run()
            info = highs.getInfo()
            trace.append((time.time() - origin, info.objective_function_value, info.mip_dual_bound))
            rows.append((seed, [time_to_gap(trace, gap) for gap in GAPS], gap_at(trace, budget)))
        return rows


if __name__ == "__main__":
    budget_seconds = float(sys.argv[1])
    for instance_path in sys.argv[2:]:
        for seed, times, final in spread(instance_path, budget_seconds):
            shown = ", ".join("never" if t is None else f"{t:.1f} s" for t in times)
            print(f"{instance_path} random_seed {seed}: to 10%/1%/0.1%: {shown}; gap at {budget_seconds:g} s {final:.2%}")
