"""``plot schedule``: a Gantt chart of one schedule, job states over time, and utilisation per pool.

Slot ``t`` spans ``[t, t + 1)`` on the time axis: a job arriving in slot ``a`` starts its row at ``a``; a job
completing in slot ``c`` (eq. 8) ends it at ``c + 1``. Per job row: a thin grey line while it waits, a bar per
run of slots with the same worker count (colour = workers), a black tick at completion, a red cross for a job
that never ran (rejected), an open square for one that got resources but did not complete (abandoned), and a
dashed tick at its deadline where there is one (a step or linear-decay utility's deadline, or a deadline the
scheduler promised, from ``schedule.meta["promised_deadlines"]``). Abandoned jobs are known only where the
schedule's ``meta["received"]`` lists the jobs that got resources (or ``received`` is passed).

With more jobs than ``max_rows`` the chart shows an evenly spaced sample of the jobs in arrival order and says
so in its title; the job-state panel below it always counts every job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.plural import counted
from primaldual.core.schedule import Schedule
from primaldual.core.utility import DeadlineUtility
from primaldual.evaluation.outcomes import JobOutcomes, job_outcomes, utilisation_over_time

#: Rows drawn before the chart switches to a sample of the jobs.
MAX_ROWS = 40
#: Colours of the job-state panel.
STATE_COLOURS = {"waiting": "#bdbdbd", "running": "#3182bd", "completed": "#31a354", "rejected": "#de2d26",
                 "abandoned": "#fd8d3c"}


@dataclass(frozen=True)
class Segment:
    """``workers`` workers in every slot of ``[start, stop)``."""

    start: int
    stop: int
    workers: int


def segments(workers_per_slot: np.ndarray) -> list[Segment]:
    """Maximal runs of consecutive slots with the same positive worker count."""
    counts = np.asarray(workers_per_slot)
    out: list[Segment] = []
    for slot, count in enumerate(counts.tolist()):
        if count <= 0:
            continue
        if out and out[-1].stop == slot and out[-1].workers == count:
            out[-1] = Segment(out[-1].start, slot + 1, count)
        else:
            out.append(Segment(slot, slot + 1, int(count)))
    return out


def sampled_rows(n_jobs: int, max_rows: int = MAX_ROWS) -> np.ndarray:
    """All job indices, or ``max_rows`` of them evenly spaced (first and last included)."""
    if n_jobs <= max_rows:
        return np.arange(n_jobs)
    return np.unique(np.round(np.linspace(0, n_jobs - 1, max_rows)).astype(int))


def deadlines(instance: Instance, schedule: Schedule) -> dict[int, tuple[int, str]]:
    """Per job, the last slot it may complete in and where that comes from (``"promise"`` or ``"utility"``).

    A promise in ``schedule.meta["promised_deadlines"]`` (``{"job": slot}``) wins over the utility's deadline;
    a step or linear-decay utility is worth nothing after ``arrival + deadline``.
    """
    out: dict[int, tuple[int, str]] = {}
    for i, job in enumerate(instance.jobs):
        if isinstance(job.utility, DeadlineUtility) and np.isfinite(job.utility.deadline):
            out[i] = (job.arrival + int(np.floor(job.utility.deadline)), "utility")
    promised = schedule.meta.get("promised_deadlines") or {}
    if not isinstance(promised, Mapping):
        raise InputError("meta.promised_deadlines: must map job indices to slots")
    for key, slot in promised.items():
        try:
            job, slot = int(key), int(slot)
        except (TypeError, ValueError):
            raise InputError(f"meta.promised_deadlines.{key}: must be a slot number, got {slot!r}") from None
        if not 0 <= job < instance.n_jobs:
            raise InputError(f"meta.promised_deadlines.{key}: no such job ({instance.n_jobs} jobs)")
        out[job] = (slot, "promise")
    return out


def schedule_name(schedule: Schedule) -> str:
    """Who made the schedule, from its meta: the online scheduler's name, or the offline solve and its status."""
    meta = schedule.meta
    if meta.get("scheduler"):
        return str(meta["scheduler"])
    if meta.get("source") == "offline":
        return f"offline optimum ({meta.get('solver', 'solver')}, {meta.get('status', 'status unknown')})"
    return "schedule"


def received_jobs(schedule: Schedule) -> list[int] | None:
    """The jobs that got resources, from ``schedule.meta["received"]`` where the writer recorded them (a schedule
    file holds completed jobs only, so without it abandoned jobs cannot be told from rejected ones)."""
    received = schedule.meta.get("received")
    if received is None:
        return None
    if not isinstance(received, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in received):
        raise InputError("meta.received: must be a list of job indices")
    return received


def job_states(outcomes: JobOutcomes, schedule: Schedule, horizon: int) -> dict[str, np.ndarray]:
    """How many jobs are in each state in each slot: arrived and waiting, running, completed; plus jobs that
    arrived and were never run (rejected) or ran without completing (abandoned, counted after their arrival)."""
    slots = np.arange(horizon)
    arrived = outcomes.arrival[:, None] <= slots[None, :]
    running = np.zeros((outcomes.n_jobs, horizon), dtype=bool)
    for i, assignment in schedule.assignments.items():
        running[i] = assignment.workers_per_slot > 0
    done = outcomes.completed[:, None] & (outcomes.completion[:, None] < slots[None, :])
    rejected = arrived & ~outcomes.admitted[:, None]
    abandoned = arrived & outcomes.abandoned[:, None] & ~running
    waiting = arrived & ~running & ~done & ~rejected & ~abandoned
    return {"waiting": waiting.sum(0), "running": running.sum(0), "completed": done.sum(0),
            "rejected": rejected.sum(0), "abandoned": abandoned.sum(0)}


def slot_label(slot_seconds: float) -> str:
    """The time axis' label, with the slot length in the unit that reads best."""
    if slot_seconds % 3600 == 0:
        length = f"{slot_seconds / 3600:g} h"
    elif slot_seconds % 60 == 0:
        length = f"{slot_seconds / 60:g} min"
    else:
        length = f"{slot_seconds:g} s"
    return f"time slot (1 slot = {length})"


def marker_scale(rows: int) -> float:
    """Marker area factor: dense charts (many rows) get smaller markers, or the markers would cover the bars."""
    return 1.0 if rows <= 60 else max(0.15, 60 / rows)


def _draw_rows(ax, instance: Instance, schedule: Schedule, outcomes: JobOutcomes, rows: np.ndarray, cmap, norm):
    """One row per job in ``rows`` (top to bottom): waiting line, running bars, and the markers."""
    horizon = instance.horizon
    limits = deadlines(instance, schedule)
    annotate = len(rows) <= 25
    size = marker_scale(len(rows))
    marks: dict[str, tuple[list, list]] = {key: ([], []) for key in
                                          ("arrival", "completion", "rejected", "abandoned", "utility", "promise")}
    for y, i in enumerate(rows.tolist()):
        arrival = int(outcomes.arrival[i])
        end = int(outcomes.completion[i]) + 1 if outcomes.completed[i] else horizon
        if outcomes.admitted[i]:
            # A rejected job never waits for anything: only admitted jobs get a waiting line.
            ax.hlines(y, arrival, end, color="#9e9e9e", linewidth=size, zorder=1)
        marks["arrival"][0].append(arrival)
        marks["arrival"][1].append(y)
        runs = segments(schedule[i].workers_per_slot) if i in schedule else []
        if runs:
            ax.barh([y] * len(runs), [s.stop - s.start for s in runs], left=[s.start for s in runs], height=0.7,
                    color=[cmap(norm(s.workers)) for s in runs], edgecolor="white", linewidth=0.3, zorder=2)
            if annotate:
                for s in runs:
                    if (s.stop - s.start) * 40 >= horizon:
                        ax.text((s.start + s.stop) / 2, y, str(s.workers), ha="center", va="center", fontsize=7,
                                color="white" if norm(s.workers) < 0.6 else "black", zorder=3)
        if outcomes.completed[i]:
            marks["completion"][0].append(end)
            marks["completion"][1].append(y)
        elif outcomes.admitted[i]:
            marks["abandoned"][0].append(runs[-1].stop if runs else arrival)
            marks["abandoned"][1].append(y)
        else:
            marks["rejected"][0].append(arrival)
            marks["rejected"][1].append(y)
        if i in limits and limits[i][0] < horizon:
            slot, source = limits[i]
            marks[source][0].append(slot + 1)
            marks[source][1].append(y)
    styles = {
        "arrival": dict(marker=">", color="#616161", s=14 * size, label="arrival"),
        "completion": dict(marker="|", color="black", s=90 * size, linewidths=1.6 * size, label="completion"),
        "rejected": dict(marker="x", color=STATE_COLOURS["rejected"], s=30 * max(size, 0.5), label="rejected (never ran)"),
        "abandoned": dict(marker="s", facecolors="none", edgecolors=STATE_COLOURS["abandoned"], s=30 * max(size, 0.5),
                          label="abandoned (ran, did not complete)"),
        "utility": dict(marker="|", color="#8e24aa", s=90 * size, linewidths=size, label="utility deadline"),
        "promise": dict(marker="|", color="#d81b60", s=120 * size, linewidths=2 * size, label="promised deadline"),
    }
    for key, (xs, ys) in marks.items():
        if xs:
            ax.scatter(xs, ys, zorder=4, **styles[key])


def draw_schedule(instance: Instance, schedule: Schedule, *, received=None, max_rows: int = MAX_ROWS,
                  title: str | None = None):
    """The whole figure: Gantt rows, job states per slot, and utilisation per pool; returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize
    from matplotlib.ticker import MaxNLocator

    if received is None:
        received = received_jobs(schedule)
    outcomes = job_outcomes(instance, schedule, received=received)
    usage = utilisation_over_time(instance, schedule)
    pools = [pool for pool in ("worker", "ps") if any(key.startswith(pool + "/") for key in usage)]
    rows = sampled_rows(instance.n_jobs, max_rows)
    # Rows get thinner past ~60 so that drawing every job of a large instance stays a printable figure.
    heights = [min(14.0, max(2.2, 0.22 * len(rows) + 0.8)), 1.6] + [1.4] * len(pools)
    fig, axes = plt.subplots(len(heights), 1, figsize=(11, sum(heights) + 0.8), sharex=True,
                             gridspec_kw={"height_ratios": heights, "hspace": 0.12})
    fig.subplots_adjust(top=1 - 0.65 / (sum(heights) + 0.8))
    peak = max([int(schedule[i].workers_per_slot.max()) for i in schedule.admitted if schedule[i].workers.size]
               + [1])
    cmap, norm = plt.get_cmap("viridis"), Normalize(vmin=0.5, vmax=peak + 0.5)
    gantt = axes[0]
    _draw_rows(gantt, instance, schedule, outcomes, rows, cmap, norm)
    gantt.set_ylim(len(rows) - 0.5, -0.5)
    sampled = len(rows) < instance.n_jobs
    if len(rows) <= 60:
        gantt.set_yticks(range(len(rows)))
        gantt.set_yticklabels([f"job {i}" for i in rows.tolist()], fontsize=7 if len(rows) > 20 else 8)
    gantt.set_ylabel(f"{len(rows)} of {counted(instance.n_jobs, 'job')}\n(evenly spaced sample)" if sampled else "job")
    # The colour bar sits in an inset beside the Gantt panel so that every panel keeps the same width.
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), cax=gantt.inset_axes([1.01, 0.0, 0.015, 1.0]),
                       ticks=range(1, peak + 1, max(1, -(-peak // 8))))
    bar.set_label("workers running (bar colour)", fontsize=8)
    # Markers shrink on dense charts; the legend shows them at full size.
    gantt.legend(loc="upper left", bbox_to_anchor=(1.09, 1.0), fontsize=7, frameon=False,
                 markerscale=1 / marker_scale(len(rows)) ** 0.5)
    gantt.grid(axis="x", alpha=0.3)
    _draw_states(axes[1], job_states(outcomes, schedule, instance.horizon), instance.n_jobs)
    # One colour per resource in both pools.
    colours = {name: f"C{r}" for r, name in enumerate(instance.cluster.resources)}
    for ax, pool in zip(axes[2:], pools):
        _draw_usage(ax, pool, usage, colours)
    axes[-1].set_xlabel(slot_label(instance.slot_seconds))
    axes[-1].set_xlim(0, instance.horizon)
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    name = schedule_name(schedule)
    summary = (f"{name}: utility {outcomes.utility.sum():.4g}; completed {int(outcomes.completed.sum())}, "
               f"abandoned {int(outcomes.abandoned.sum())}, rejected {int((~outcomes.admitted).sum())} "
               f"of {counted(instance.n_jobs, 'job')}")
    if sampled:
        summary += (f"\nGantt rows: {counted(len(rows), 'evenly spaced job')} of {instance.n_jobs}; "
                    "panels below count all jobs")
    fig.suptitle(title or summary, fontsize=10)
    return fig


def _draw_states(ax, states: dict[str, np.ndarray], n_jobs: int) -> None:
    """Stacked counts of jobs per state per slot (every job, sampled or not)."""
    from matplotlib.ticker import MaxNLocator

    horizon = len(next(iter(states.values())))
    x = np.arange(horizon + 1)
    # Repeat the last slot so that the step shape covers [T - 1, T).
    values = [np.append(series, series[-1]) for series in states.values()]
    ax.stackplot(x, values, step="post", colors=[STATE_COLOURS[k] for k in states], labels=list(states),
                 alpha=0.85)
    ax.set_ylim(0, max(1, n_jobs))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    ax.set_ylabel("jobs")
    ax.legend(loc="upper left", bbox_to_anchor=(1.09, 1.0), fontsize=7, frameon=False, title="jobs by state",
              title_fontsize=7)


def _draw_usage(ax, pool: str, usage: dict[str, np.ndarray], colours: dict[str, str]) -> None:
    """Share of the pool's capacity in use per resource per slot, with its mean in the label."""
    for key, series in usage.items():
        if not key.startswith(pool + "/"):
            continue
        resource = key.split("/", 1)[1]
        ax.step(np.arange(len(series) + 1), 100 * np.append(series, series[-1]), where="post", linewidth=1.2,
                color=colours[resource], label=f"{resource} (mean {100 * series.mean():.0f}%)")
    ax.set_ylim(0, 105)
    ax.set_ylabel(f"{'worker' if pool == 'worker' else 'PS'} pool\n% of capacity")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.09, 1.0), fontsize=7, frameon=False)


def save_schedule_figure(instance: Instance, schedule: Schedule, path, **options) -> None:
    """Draw :func:`draw_schedule` into ``path`` (PNG, PDF or SVG, from the suffix)."""
    from primaldual.views.style import use_agg

    use_agg()
    import matplotlib.pyplot as plt

    from primaldual.core.output import replacing

    fig = draw_schedule(instance, schedule, **options)
    try:
        with replacing(path, "--out") as temporary:
            fig.savefig(temporary, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)


__all__ = ["MAX_ROWS", "Segment", "deadlines", "draw_schedule", "job_states", "received_jobs", "sampled_rows",
           "save_schedule_figure", "segments", "slot_label"]
