"""``primaldual bench lbbsp``: BSP vs LB-BSP vs oracle on the GPU and CPU scenarios, one run each.

The paper's headline figures (docs/papers.md, LB-BSP): "up to 54%" faster training on a heterogeneous GPU
cluster ([paper] abstract, attributed to the GPU cluster by [reported] R1) and 38.7% on a CPU
cluster ([reported] R1). We read "x% faster" as a throughput gain, i.e. a speedup of 1 + x/100 in
mean iteration time; the paper measures real training on EC2, we simulate, so the comparison is
one of order of magnitude, not a reproduction.

All figures except ``decision_seconds`` are simulated time and deterministic given the seed; the
decision times are wall-clock and are reported as ratios against BSP's in the same run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from primaldual.lbbsp.scenarios import cpu_scenario, gpu_scenario
from primaldual.lbbsp.simulator import simulate

PAPER_IMPROVEMENT_PERCENT = {"gpu": 54.0, "cpu": 38.7}
HEADLINE_METHOD = {"gpu": "lbbsp_gpu", "cpu": "lbbsp_cpu"}


@dataclass(frozen=True)
class ScenarioSetting:
    """What one scenario ran: its description, workers, global batch, iterations and the LB-BSP method shown."""

    description: str
    workers: int
    global_batch: int
    iterations: int
    lbbsp_method: str


@dataclass(frozen=True)
class OracleGains:
    """LB-BSP's and the oracle's speedups over BSP, as gains in percent against the paper's, and how far LB-BSP
    stays from the oracle (the gap and the share of the oracle's gain it captures, NaN without a gain)."""

    lbbsp_speedup: float
    oracle_speedup: float
    lbbsp_improvement_percent: float
    oracle_improvement_percent: float
    paper_improvement_percent: float
    gap_to_oracle_percent: float
    share_of_oracle_gain: float


@dataclass(frozen=True)
class ScenarioFigures:
    """One scenario: its setting, mean iteration seconds and speedups over BSP per method, the gains, and the
    decision seconds per method with their ratio to BSP's. :meth:`to_dict` is flat, in this order."""

    setting: ScenarioSetting
    mean_iteration_seconds: dict[str, float]
    speedup: dict[str, float]
    gains: OracleGains
    decision_seconds: dict[str, float]
    decision_ratio_to_bsp: dict[str, float]

    def to_dict(self) -> dict:
        return {**asdict(self.setting), "mean_iteration_seconds": self.mean_iteration_seconds,
                "speedup": self.speedup, **asdict(self.gains), "decision_seconds": self.decision_seconds,
                "decision_ratio_to_bsp": self.decision_ratio_to_bsp}


@dataclass(frozen=True)
class TraceReplay:
    """One packaged PAI job replayed: LB-BSP's and the oracle's speedups, the gap, each predictor's error."""

    iterations: int
    global_batch: int
    lbbsp_method: str
    speedup: float
    oracle_speedup: float
    gap_to_oracle_percent: float
    share_of_oracle_gain: float
    speedups: dict
    mape_percent: dict


@dataclass(frozen=True)
class LbbspBench:
    """``bench lbbsp``: the GPU and CPU scenarios by name, and the packaged traces' replays by name."""

    seed: int
    quick: bool
    scenarios: dict[str, ScenarioFigures]
    traces: dict[str, TraceReplay]

    def to_dict(self) -> dict:
        return {"seed": self.seed, "quick": self.quick,
                "scenarios": {name: figures.to_dict() for name, figures in self.scenarios.items()},
                "traces": {name: asdict(replay) for name, replay in self.traces.items()}}


def _scenario(result, name: str) -> ScenarioFigures:
    from primaldual.lbbsp.replay import gap_to_oracle_percent, share_of_gain

    summary = result.summary()
    headline = HEADLINE_METHOD[name]
    lbbsp, oracle = result.speedup(headline), result.speedup("oracle")
    bsp_decision = max(summary["decision_seconds"]["bsp"], 1e-12)
    share = share_of_gain(lbbsp, oracle)
    return ScenarioFigures(
        setting=ScenarioSetting(summary["description"], summary["workers"], summary["global_batch"],
                                summary["iterations"], headline),
        mean_iteration_seconds=summary["mean_iteration_seconds"],
        speedup=summary["speedup"],
        gains=OracleGains(
            lbbsp_speedup=lbbsp, oracle_speedup=oracle, lbbsp_improvement_percent=100.0 * (lbbsp - 1.0),
            oracle_improvement_percent=100.0 * (oracle - 1.0), paper_improvement_percent=PAPER_IMPROVEMENT_PERCENT[name],
            gap_to_oracle_percent=gap_to_oracle_percent(lbbsp, oracle),
            share_of_oracle_gain=float("nan") if share is None else share),
        decision_seconds=summary["decision_seconds"],
        decision_ratio_to_bsp={m: s / bsp_decision for m, s in summary["decision_seconds"].items()},
    )


def run_benchmark(seed: int = 0, quick: bool = False) -> LbbspBench:
    """Simulate both scenarios (300 iterations, or 100 when ``quick``) and replay the packaged traces."""
    iterations = 100 if quick else 300
    scenarios = {name: _scenario(simulate(factory(iterations=iterations), seed=seed), name)
                 for name, factory in (("gpu", gpu_scenario), ("cpu", cpu_scenario))}
    return LbbspBench(seed, quick, scenarios, replay_traces())


def replay_traces() -> dict[str, TraceReplay]:
    """Replay of the packaged PAI jobs (deterministic, linear law): LB-BSP (``select``) and oracle speedups."""
    from primaldual.lbbsp.replay import replay
    from primaldual.lbbsp.traces import PACKAGED, load_trace

    traces = {}
    for name in PACKAGED:
        summary = replay(load_trace(name), predictors=("last", "ewma", "select")).summary()
        traces[name] = TraceReplay(**{key: summary[key] for key in (
            "iterations", "global_batch", "lbbsp_method", "speedup", "oracle_speedup", "gap_to_oracle_percent",
            "share_of_oracle_gain", "speedups", "mape_percent")})
    return traces


def format_benchmark(bench: LbbspBench) -> str:
    """Text table of :func:`run_benchmark`'s figures."""
    result = bench.to_dict()
    lines = [f"LB-BSP benchmark (seed {result['seed']}{', quick' if result['quick'] else ''}): "
             "speedup = BSP mean iteration time / method's"]
    header = f"{'scenario':<9}{'BSP s/it':>10}{'LB-BSP s/it':>13}{'oracle s/it':>13}{'LB-BSP':>9}{'oracle':>9}" \
             f"{'paper':>9}{'gap to oracle':>15}{'share of gain':>15}"
    lines += [header, "-" * len(header)]
    for name, s in result["scenarios"].items():
        mean = s["mean_iteration_seconds"]
        lines.append(
            f"{name:<9}{mean['bsp']:>10.3f}{mean[s['lbbsp_method']]:>13.3f}{mean['oracle']:>13.3f}"
            f"{s['lbbsp_speedup']:>8.2f}x{s['oracle_speedup']:>8.2f}x"
            f"{'+' + format(s['paper_improvement_percent'], '.1f') + '%':>9}"
            f"{s['gap_to_oracle_percent']:>14.1f}%{100 * s['share_of_oracle_gain']:>14.0f}%")
    lines.append("")
    lines.append("ours as throughput gain: " + "; ".join(
        f"{name} LB-BSP +{s['lbbsp_improvement_percent']:.1f}% (oracle +{s['oracle_improvement_percent']:.1f}%, "
        f"paper up to +{s['paper_improvement_percent']:.1f}%)" for name, s in result["scenarios"].items()))
    lines.append("LB-BSP = leader/straggler stepper on GPU, proportional rule on CPU with the readings regression (rreg) predictor.")
    lines.append("")
    lines.append("decision logic wall-clock, ratio to BSP's in the same run (all methods, both scenarios):")
    for name, s in result["scenarios"].items():
        lines.append(f"  {name}: " + ", ".join(
            f"{m} {s['decision_ratio_to_bsp'][m]:.0f}x ({1e3 * s['decision_seconds'][m]:.1f} ms)"
            for m in s["decision_seconds"]))
    lines.append("")
    lines.append("recorded PAI traces (replay, linear law; docs/lbbsp-traces.md):")
    for name, t in result.get("traces", {}).items():
        lines.append(f"  {name}: LB-BSP ({t['lbbsp_method']}) {t['speedup']:.3f}x, oracle {t['oracle_speedup']:.3f}x, "
                     f"gap {t['gap_to_oracle_percent']:.2f}%, share of gain {t['share_of_oracle_gain']:.2f}")
    lines.append("")
    lines.append("other LB-BSP variant for reference: " + "; ".join(
        f"{name} {m} {s['speedup'][m]:.2f}x" for name, s in result["scenarios"].items()
        for m in ("lbbsp_gpu", "lbbsp_cpu") if m != s["lbbsp_method"]))
    return "\n".join(lines)
