"""Subcommands of the ``primaldual`` CLI, one module each, discovered by :mod:`primaldual.cli`.

A module here defines ``ORDER`` (position in ``--help``) and ``register(subparsers)``, which adds its
parser and sets ``handler=function(args) -> exit code``.
"""
