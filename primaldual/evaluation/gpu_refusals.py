"""What an evaluation does on a heterogeneous cluster (issue 64) while some schedulers do not take gpu types.

The offline solve (ILP, LP, pooled) takes gpu types; the simulator's schedulers learn them on another branch and
until then refuse a heterogeneous instance in one line (:func:`primaldual.core.gpu_types.refuse_heterogeneous`).
:func:`primaldual.evaluation.pipeline.evaluate` with an OPT solve leaves such schedulers out, with a warning naming
them, and still gives the OPT interval (its ends: the solver's incumbent and bound, the standalone bound); without
a solve there is nothing to show, so the refusal stands.
"""

from __future__ import annotations

#: How :func:`primaldual.core.gpu_types.refuse_heterogeneous` begins: a scheduler that does not take gpu types yet.
NOT_YET_HETEROGENEOUS = "heterogeneous clusters (gpu types): not yet supported"


def refusals(instance, solve) -> list | None:
    """A list to collect the schedulers that refuse gpu types, on a heterogeneous instance evaluated with a solve;
    None where a refusal is the answer."""
    if instance.cluster.worker_types is None:
        return None
    return [] if solve is not None else None


__all__ = ["NOT_YET_HETEROGENEOUS", "refusals"]
