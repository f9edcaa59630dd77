"""The measuring side of ``primaldual bench``: each benchmark as a function returning a frozen result.

``primaldual.commands.bench`` parses the flags and prints; the timings, the runs and the comparisons are here,
callable from Python. Every result has ``to_dict()`` (its ``--json`` form) and a ``format_*`` function (its
text form).
"""
