"""Benchmarks behind ``primaldual bench NAME``, one module each, discovered by the ``bench`` command.

A module here defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``. Timings are
reported as ratios against a reference measured in the same run, never as absolute pass/fail thresholds.
"""
