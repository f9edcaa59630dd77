"""Sweeps: many (instance, schedulers, solve options) experiments, on local processes or a Dask cluster, resumable.

- :mod:`~primaldual.sweep.spec`: :class:`Spec` says what to run (generator preset, knobs and seed, schedulers
  with their parameters, the solve options, a restart cost); :func:`spec_key` is the sha256 of its canonical
  JSON, the record's identity in a results file. A spec is validated when it is made, with the same
  :class:`primaldual.offline.options.SolveOptions` as the command line, so a bad sweep fails before any work.
- :mod:`~primaldual.sweep.task`: :func:`run` is a pure task ``spec -> record`` built on
  :func:`primaldual.evaluation.pipeline.evaluate` (the record's ``opt_interval`` and ``ratios`` are exactly those of
  ``compare`` on the same instance). Everything but ``record["timings"]`` and ``record["provenance"]`` is a deterministic function of the
  spec (on one software stack) as long as the solver finishes within its time limit; a time-limited solve is
  marked ``record["opt"]["time_limited"]``.
- :mod:`~primaldual.sweep.executors`: spawned local processes (which end with their parent) or Dask.
- :mod:`~primaldual.sweep.driver`: :func:`sweep` maps :func:`run` over specs with any executor and streams the
  records to a JSON Lines file (:mod:`primaldual.sweep.records`); keys already there are skipped, so an interrupted
  sweep resumes where it stopped.
- :mod:`~primaldual.sweep.summary`: per-scheduler OPT/ALG tables over records, and utility per knob value;
  :mod:`~primaldual.sweep.distributions`: the per-job distributions (JCT, fairness, utilisation) over records.
  Both read records through :class:`primaldual.sweep.records.Record`, the typed reader of the format.

The record format is documented with an example in ``docs/formats.md``.
"""

from primaldual.sweep.records import Record, read_records
from primaldual.sweep.driver import SweepResult, sweep
from primaldual.sweep.executors import dask_executor, local_executor
from primaldual.sweep.spec import DEFAULT_SCHEDULERS, SPEC_VERSION, Spec, ratio_specs, spec_key
from primaldual.sweep.summary import RatioSample, format_summary, ratio_sample, summarize, utility_table
from primaldual.sweep.task import RECORD_FORMAT, RECORD_VERSION, deterministic_part, ratio_interval, run, versions

__all__ = [
    "DEFAULT_SCHEDULERS", "RECORD_FORMAT", "RECORD_VERSION", "RatioSample", "Record", "SPEC_VERSION", "Spec", "SweepResult",
    "dask_executor", "deterministic_part", "format_summary", "local_executor", "ratio_interval", "ratio_sample",
    "ratio_specs", "read_records", "run", "spec_key", "summarize", "sweep", "utility_table", "versions",
]
