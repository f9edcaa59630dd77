"""A reproducible sweep over a family of generated traces (``primaldual lbbsp sweep``, ``docs/lbbsp-traces.md``).

Each trace of the family is generated exactly as ``lbbsp generate`` writes it (:mod:`.generators`, or
:func:`.traces.cov_trace` for ``cov``), replayed with ``select`` at the linear law (:func:`.replay.replay`),
and reported with its speedup, the oracle's, the share of the oracle's gain, the hindsight references of
:mod:`.limits` and, for ``cov`` on request, the law-aware reference of :mod:`.law_aware` (an upper reference
that knows the coming iteration's CoV; causal only with ``known_target`` false).
"""

from __future__ import annotations

import numpy as np

from primaldual.lbbsp.replay import DEFAULT_PREDICTOR, _times, make_law, replay, share_of_gain

SWEEP_KINDS = ("amplified", "persistent", "mid_run", "several", "iid", "cov")


def _traces(kind: str, seeds, base: str, factor: float, jobs, workers: int, iterations: int):
    """``(labels, trace)`` pairs of the family, in the order seeds (outer) x jobs (inner, ``cov`` only)."""
    from primaldual.lbbsp.generators import amplified, generated
    from primaldual.lbbsp.traces import cov_trace, load_trace

    base_trace = load_trace(base) if kind == "amplified" else None
    for seed in seeds:
        if kind == "cov":
            for job in jobs:
                yield {"seed": seed, "job": job}, cov_trace(job, workers, seed, max_iterations=iterations)
        elif kind == "amplified":
            yield {"seed": seed}, amplified(base_trace, factor, seed)
        else:
            yield {"seed": seed}, generated(kind, workers, iterations, seed)


def _share(bsp: float, oracle_speedup: float, times) -> tuple[float, float | None]:
    speedup = bsp / float(np.mean(times))
    return speedup, share_of_gain(speedup, oracle_speedup)


def sweep(kind: str, seeds, base: str = "pai:job_1", factor: float = 3.0, jobs=(), workers: int = 10,
          iterations: int = 300, global_batch: int | None = None, law_aware_samples: int = 0,
          sample_seed: int = 0, known_target: bool = True, progress=None) -> dict:
    """Per-trace figures and a summary (module docstring). ``law_aware_samples > 0`` (``cov`` only) adds the
    law-aware reference with that many draws per iteration, drawn from ``sample_seed``; ``known_target``
    false gives it the last measured CoV instead of the row's schedule (:func:`.law_aware.cov_law_aware_batches`).
    ``progress``, if given, is called once per trace. Cost: one replay of ``select`` per trace (linear in its
    length, :func:`.replay.replay`), so linear in the family's total cells."""
    from primaldual.lbbsp.law_aware import cov_law_aware_batches, cov_row_levels

    rows = []
    for labels, trace in _traces(kind, seeds, base, factor, jobs, workers, iterations):
        result = replay(trace, global_batch, predictors=(DEFAULT_PREDICTOR,), gpu=False, seed=labels["seed"])
        summary = result.summary()
        row = labels | {"trace": trace.name, "iterations": trace.n_iterations, "speedup": summary["speedup"],
                        "oracle_speedup": summary["oracle_speedup"], "share": summary["share_of_oracle_gain"],
                        "reaches_half": summary["captures_half_of_oracle_gain"]}
        for key, reference in summary["hindsight_references"].items():
            row[key] = {"rule": reference["rule"], "share": reference["share_of_oracle_gain"]}
        if law_aware_samples:
            levels, target = cov_row_levels(labels["job"], labels["seed"], workers, iterations)
            batches = cov_law_aware_batches(levels, target, result.law.global_batch, law_aware_samples, sample_seed,
                                            known_target)
            speedup, share = _share(result.mean("bsp"), summary["oracle_speedup"], _times(result.law, batches))
            row["law_aware"] = {"speedup": speedup, "share": share}
        rows.append(row)
        if progress is not None:
            progress()
    return {"kind": kind, "base": base if kind == "amplified" else None,
            "factor": factor if kind == "amplified" else None, "global_batch": result.law.global_batch,
            "lbbsp_method": f"lbbsp_cpu[{DEFAULT_PREDICTOR}]", "law_aware_samples": law_aware_samples,
            "sample_seed": sample_seed if law_aware_samples else None,
            "law_aware_target": ("known" if known_target else "last") if law_aware_samples else None,
            "traces": len(rows),
            "reaching_half": int(sum(row["reaches_half"] for row in rows)), "summary": _summary(rows),
            "per_trace": rows}


def _summary(rows: list) -> dict:
    """min / median / max of the shares; for the law-aware reference, how many rows reach 0.5 and the gap."""
    columns = {"share": [row["share"] for row in rows]}
    for key in ("best_bank_member", "best_static_split", "law_aware"):
        if key in rows[0]:
            columns[key] = [row[key]["share"] for row in rows]
    summary = {}
    for key, values in columns.items():
        values = np.array([np.nan if value is None else value for value in values], dtype=float)
        summary[key] = {"min": float(np.nanmin(values)), "median": float(np.nanmedian(values)),
                        "max": float(np.nanmax(values)), "reaching_half": int(np.sum(values >= 0.5))}
    if "law_aware" in columns:
        gap = np.array(columns["law_aware"], dtype=float) - np.array(columns["share"], dtype=float)
        summary["law_aware_minus_share"] = {"min": float(np.nanmin(gap)), "median": float(np.nanmedian(gap)),
                                            "max": float(np.nanmax(gap))}
    return summary
