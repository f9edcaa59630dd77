"""Measured training throughput (steps per second) of a job type at a GPU count, and its extrapolation.

Gavel measured each job type alone (co-located job ``"null"``) on V100s at 1, 2, 4 and 8 GPUs (a few types at
1 GPU only), and on P100s and K80s the same way (:func:`packaged_tables`, for ``--gpu-types``); a step is one
synchronous data-parallel iteration of the whole job, so the running time of a job of ``S`` steps at ``g`` GPUs
is ``S / throughput(g)``.

**Extrapolation** (a stated assumption, the table has no other data): for a GPU count ``g`` that was not
measured, take the largest measured count ``m <= g`` and assume the per-GPU throughput of ``m`` carries over at
an efficiency ``eta`` (``scaling_efficiency``, default 0.9)::

    throughput(g) = throughput(m) / m * g * eta        (g not measured; m = largest measured count <= g)

``eta`` is applied once, not per doubling: beyond 8 GPUs a job spans servers, and the 10% loss stands for the
slower cross-server links; the same rule fills 3, 5-7 GPUs (between measured counts) and types measured at 1 GPU
only. The extrapolated throughput never exceeds ``g / m`` times the measured one (``eta <= 1``), so work grows
with ``g`` at least as fast as linear scaling says.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: The GPU type whose measurements the conversion uses (Gavel's Philly cluster spec is V100, P100 and K80;
#: this package's worker servers are 8-V100 servers, see :mod:`primaldual.traces.profiles`).
GPU_TYPE = "v100"
DEFAULT_SCALING_EFFICIENCY = 0.9


@dataclass(frozen=True)
class ThroughputTable:
    """``steps_per_second[job_type][gpus]``: measured alone on :data:`GPU_TYPE`."""

    steps_per_second: dict[str, dict[int, float]]
    gpu_type: str = GPU_TYPE

    def measured(self, job_type: str) -> dict[int, float]:
        return self.steps_per_second.get(job_type, {})

    def throughput(self, job_type: str, gpus: int, efficiency: float) -> tuple[float, bool]:
        """``(steps/s at gpus GPUs, extrapolated?)`` by the module's rule; ``KeyError`` for an unknown type."""
        measured = self.steps_per_second[job_type]
        if gpus in measured:
            return measured[gpus], False
        below = [m for m in measured if m <= gpus]
        base = max(below) if below else min(measured)
        return measured[base] / base * gpus * efficiency, True


def parse_table(data: dict, gpu_type: str = GPU_TYPE) -> ThroughputTable:
    """The ``"null"`` (alone) entries of Gavel's ``simulation_throughputs.json`` for ``gpu_type``."""
    table: dict[str, dict[int, float]] = {}
    for key, colocated in data[gpu_type].items():
        job_type, gpus = ast.literal_eval(key)
        alone = colocated.get("null")
        if alone is not None and float(alone) > 0:
            table.setdefault(str(job_type), {})[int(gpus)] = float(alone)
    return ThroughputTable(steps_per_second=table, gpu_type=gpu_type)


@lru_cache(maxsize=1)
def _packaged_data() -> dict:
    text = resources.files("primaldual.traces").joinpath("data", "philly", "simulation_throughputs.json").read_text(
        encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def packaged_table() -> ThroughputTable:
    """The shipped table (``primaldual/traces/data/philly/simulation_throughputs.json``) for V100s, read once."""
    return parse_table(_packaged_data())


@lru_cache(maxsize=1)
def packaged_tables() -> dict[str, ThroughputTable]:
    """The shipped table for each GPU type Gavel measured (``v100``, ``p100``, ``k80``): ``--gpu-types``."""
    from primaldual.core.gpu_types import GAVEL_TYPES

    return {gpu_type: parse_table(_packaged_data(), gpu_type) for gpu_type in GAVEL_TYPES}


def family(job_type: str) -> str:
    """The model family of a job type: the text before ``" (batch size ..."``, e.g. ``ResNet-50``."""
    return job_type.split(" (")[0].strip()
