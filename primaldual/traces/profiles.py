"""What the traces do not hold: per-worker and per-PS demands by model family, and the servers.

**Resources** ``gpu, cpu, memory, bandwidth`` (GPUs, vCPUs, GB, Gbps), as the generator's ``paper`` preset.

**Worker servers**: an 8-V100 server with the host of an AWS ``p3dn.24xlarge`` (8 V100, 96 vCPU, 768 GiB, 100 Gbps):
``gpu 8, cpu 96, memory 768, bandwidth 100``. **PS servers**: a CPU server like ``c5n.18xlarge`` (72 vCPU,
192 GiB, 100 Gbps): ``gpu 0, cpu 72, memory 192, bandwidth 100``.

**Workers = GPUs**: a worker is one GPU of the trace's job (``w^gpu = 1``); the rest of its demand depends on
the model family (:data:`FAMILY_PROFILES`):

* ``cpu`` (vCPUs per GPU for input pipelines): image models decode and augment images on the CPU (ResNet-50 on
  ImageNet 12, the whole share of a 96-vCPU server; ResNet-18 on CIFAR-10 and CycleGAN 8); reinforcement
  learning runs its environments on the CPU (A3C 12); text and recommendation models read small tokenised or
  sparse inputs (4).
* ``memory`` (host GB per GPU): the data set or its cache (ImageNet pipelines 64, ML-20M ratings 32, others 16).
* ``bandwidth`` ``b`` (Gbps per worker, gradient traffic to the PSs): larger for more parameters per step:
  ResNet-50, Transformer and LM (tens of millions of parameters at high step rates) 10; ResNet-18, CycleGAN and
  Recommendation 5; A3C (a small network) 1. Eight workers of any family fit one server's 100 Gbps, so the GPUs,
  as in the trace, bound how many workers a server holds.

**Parameter servers**: every PS of a job has bandwidth ``B = 25`` Gbps (a quarter of a PS server's NIC), 4 vCPU
and 16 GB; eq. (6) then asks for ``ceil(D b / B)`` PSs for ``D`` workers (2 per 5 workers at ``b = 10``), and
``b <= B`` holds for every family, as eq. (7) requires. A job type of unknown family (e.g. a CSV job with no
``model``) gets :data:`DEFAULT_PROFILE`, the medium row.

These are modelling choices (docs/traces.md), not data: the instance's ``meta["trace"]["profiles"]`` records
the table it was built with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RESOURCES = ("gpu", "cpu", "memory", "bandwidth")
WORKER_SERVER = {"gpu": 8.0, "cpu": 96.0, "memory": 768.0, "bandwidth": 100.0}
PS_SERVER = {"gpu": 0.0, "cpu": 72.0, "memory": 192.0, "bandwidth": 100.0}
GPUS_PER_SERVER = int(WORKER_SERVER["gpu"])
PS_BANDWIDTH_GBPS = 25.0
PS_CPU = 4.0
PS_MEMORY_GB = 16.0


@dataclass(frozen=True)
class Profile:
    """Per-worker demand of one model family (besides its one GPU) and its worker bandwidth ``b``."""

    cpu: float
    memory: float
    bandwidth: float

    def worker_demand(self) -> list[float]:
        return [1.0, self.cpu, self.memory, self.bandwidth]

    @staticmethod
    def ps_demand() -> list[float]:
        return [0.0, PS_CPU, PS_MEMORY_GB, PS_BANDWIDTH_GBPS]


FAMILY_PROFILES: dict[str, Profile] = {
    "ResNet-50": Profile(cpu=12, memory=64, bandwidth=10),
    "ResNet-18": Profile(cpu=8, memory=16, bandwidth=5),
    "Transformer": Profile(cpu=4, memory=16, bandwidth=10),
    "LM": Profile(cpu=4, memory=16, bandwidth=10),
    "Recommendation": Profile(cpu=4, memory=32, bandwidth=5),
    "A3C": Profile(cpu=12, memory=16, bandwidth=1),
    "CycleGAN": Profile(cpu=8, memory=16, bandwidth=5),
}
DEFAULT_PROFILE = Profile(cpu=8, memory=32, bandwidth=5)


def profile_of(family: str) -> Profile:
    return FAMILY_PROFILES.get(family, DEFAULT_PROFILE)


def profiles_meta() -> dict:
    """The table as recorded in an instance's meta."""
    return {
        "worker_server": WORKER_SERVER,
        "ps_server": PS_SERVER,
        "families": {name: asdict(p) for name, p in FAMILY_PROFILES.items()},
        "default": asdict(DEFAULT_PROFILE),
        "ps": {"cpu": PS_CPU, "memory": PS_MEMORY_GB, "bandwidth": PS_BANDWIDTH_GBPS},
    }
