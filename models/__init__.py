"""Declarative Pyomo models, installed as :mod:`primaldual.models`.

Each model is a pure function ``instance -> pyomo ConcreteModel``; solving is separate.
"""
