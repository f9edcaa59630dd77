"""Trace import: real job arrivals (Philly, as prepared for Gavel; or one's own CSV) as instances.

``import_trace(source, options) -> Instance``: ``source`` is a Gavel trace file (7- or 10-field lines), a CSV
(:mod:`primaldual.traces.records`) or a packaged name ``philly:SEED/VC``; :class:`TraceOptions` names every
assumption of the conversion (:mod:`primaldual.traces.convert`; docs/traces.md). ``list_packaged()`` describes
the shipped VCs. This layer imports only ``core``.
"""

from __future__ import annotations

from primaldual.core.errors import InputError
from primaldual.traces.convert import TraceOptions, build_instance
from primaldual.traces.packaged import SEEDS, packaged_vcs, read_source
from primaldual.traces.records import TraceJob, read_csv, read_gavel, write_csv
from primaldual.traces.throughput import packaged_table
from primaldual.traces.utility_rules import UtilityRule, parse_rule


def read_records(source, options: TraceOptions | None = None):
    """``(records, Source)`` of ``source`` (no conversion)."""
    options = options or TraceOptions()
    found = read_source(source, options.format, options.seed)
    reader = read_csv if found.format == "csv" else read_gavel
    records = reader(found.text, found.name)
    if not records:  # one answer for import and busiest alike
        raise InputError(f"{found.name}: no jobs (the file is empty, blank or a CSV header only); a trace needs "
                         f"at least one job line")
    return records, found


def import_trace(source, options: TraceOptions | None = None):
    """The instance of ``source`` under ``options`` (default :class:`TraceOptions`)."""
    options = options or TraceOptions()
    records, found = read_records(source, options)
    return build_instance(records, options, packaged_table(), source=found.name, format=found.format,
                          seed=found.seed, vc=found.vc)


def list_packaged() -> list[dict]:
    """One row per shipped VC: seed, VC, jobs, arrival span (hours), GPU-hours, mean busy GPUs, default servers."""
    from primaldual.traces.convert import cluster_for, running_times, window_of

    rows = []
    table = packaged_table()
    for seed in SEEDS:
        for vc in packaged_vcs(seed):
            records, found = read_records(f"philly:{seed}/{vc}")
            timed = running_times(records, table, TraceOptions().scaling_efficiency, found.name)
            window = window_of(records, TraceOptions())
            _, facts = cluster_for(timed, window, TraceOptions())
            rows.append({"source": found.name, "seed": seed, "vc": vc, "jobs": len(records), "span_hours": window[1],
                         "gpu_hours": round(sum(t.record.gpus * t.running_seconds for t in timed) / 3600.0, 1),
                         "mean_gpu_load": facts["mean_gpu_load"], "max_gpus": max(r.gpus for r in records),
                         "default_gpus": facts["gpus"]})
    return rows


__all__ = ["TraceJob", "TraceOptions", "UtilityRule", "build_instance", "import_trace", "list_packaged",
           "packaged_vcs", "parse_rule", "read_csv", "read_gavel", "read_records", "write_csv"]
