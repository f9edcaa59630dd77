"""primaldual: scheduling distributed machine-learning training in shared clusters.

The offline optimum of Bao et al. (INFOCOM 2018) as a Pyomo model, the online primal-dual
scheduler OASiS and its baselines in one simulator, and LB-BSP batch sizing (Chen et al., SoCC 2020).
"""

__version__ = "0.1.0"
