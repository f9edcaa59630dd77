"""Conversion properties: order and counts, work, standalone time, windows, cluster, caps, drops, utilities."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.traces import TraceOptions, parse_rule
from primaldual.traces.convert import build_instance
from primaldual.traces.records import TraceJob
from primaldual.traces.throughput import packaged_table

TABLE = packaged_table()
RESNET = "ResNet-50 (batch size 128)"


def job(arrival, gpus=1, steps=10000, model=RESNET, line=1, **more):
    return TraceJob(name=f"line{line}", arrival_seconds=float(arrival), gpus=gpus, model=model, steps=steps,
                    line=line, **more)


def build(records, **options):
    return build_instance(records, TraceOptions(**options), TABLE, source="test", format="gavel")


def running_hours(model, gpus, steps, efficiency=0.9):
    rate, _ = TABLE.throughput(model, gpus, efficiency)
    return steps / rate / 3600.0


records_strategy = st.lists(st.tuples(st.floats(0, 300_000, allow_nan=False), st.sampled_from([1, 2, 4, 8, 16]),
                                      st.integers(1, 200_000)), min_size=1, max_size=25)


@settings(max_examples=40, deadline=None)
@given(records_strategy)
def test_arrival_order_and_counts_are_preserved(rows):
    records = [job(a, g, s, line=n + 1) for n, (a, g, s) in enumerate(rows)]
    instance = build(records, outlasting="keep", gpus=64)
    assert instance.n_jobs == len(records) == instance.meta["trace"]["counts"]["kept"]
    expected = sorted(range(len(records)), key=lambda n: records[n].arrival_seconds)  # stable: ties in file order
    assert [j.name.split(":")[0] for j in instance.jobs] == [records[n].name for n in expected]
    assert list(instance.arrivals) == [math.floor(records[n].arrival_seconds / 3600) for n in expected]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**7), st.integers(1, 10**7), st.sampled_from([1, 2, 4, 8, 16, 32]))
def test_work_is_monotone_in_steps(a, b, gpus):
    low, high = sorted((a, b))
    instance = build([job(0, gpus, low, line=1), job(0, gpus, high, line=2)], outlasting="keep", gpus=64,
                     tail_hours=10_000)
    assert instance.work[0] <= instance.work[1]
    assert instance.work_units[0] <= instance.work_units[1]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**6), st.sampled_from([1, 2, 4, 8]), st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]),
       st.sampled_from(sorted({RESNET, "LM (batch size 20)", "Transformer (batch size 64)", "ResNet-18 (batch size 32)"})))
def test_standalone_completion_is_the_traces_running_time_rounded_up_to_slots(steps, gpus, slot_hours, model):
    instance = build([job(0, gpus, steps, model)], outlasting="keep", gpus=64, slot_hours=slot_hours,
                     tail_hours=10_000)
    hours = running_hours(model, gpus, steps)
    assert instance.jobs[0].chunks == gpus  # workers = GPUs
    assert instance.work[0] == pytest.approx(gpus * hours / slot_hours, rel=1e-12)
    assert instance.shortest_duration[0] == max(1, math.ceil(hours / slot_hours - 1e-9))


def test_window_boundaries_are_exact():
    start, hours = 10, 5
    edge = [start * 3600 - 0.001, start * 3600, (start + hours) * 3600 - 0.001, (start + hours) * 3600]
    records = [job(a, 1, 10, line=n + 1) for n, a in enumerate(edge)]
    instance = build(records, window=(start, hours), gpus=8)
    assert [j.name.split(":")[0] for j in instance.jobs] == ["line2", "line3"]
    assert list(instance.arrivals) == [0, hours - 1]
    assert instance.horizon == hours
    assert instance.meta["trace"]["counts"]["outside_window"] == 2
    assert build(records, window=(start, hours), tail_hours=3, gpus=8).horizon == hours + 3
    assert build(records, window=(start, hours), slot_hours=2, gpus=8).horizon == 3  # ceil(5 / 2)


def test_the_whole_trace_window_ends_at_the_first_whole_hour_after_the_last_arrival():
    instance = build([job(0), job(7200.0, line=2)], gpus=8)
    assert instance.meta["trace"]["window_hours"] == [0.0, 3.0]
    assert instance.horizon == 3


def test_gpu_counts_not_measured_are_extrapolated_once_at_the_stated_efficiency():
    measured8 = TABLE.measured(RESNET)[8]
    assert TABLE.throughput(RESNET, 16, 0.9) == (pytest.approx(measured8 * 2 * 0.9), True)
    assert TABLE.throughput(RESNET, 6, 0.8) == (pytest.approx(TABLE.measured(RESNET)[4] * 1.5 * 0.8), True)
    assert TABLE.throughput("A3C", 2, 0.9) == (pytest.approx(TABLE.measured("A3C")[1] * 2 * 0.9), True)
    assert TABLE.throughput(RESNET, 4, 0.5) == (TABLE.measured(RESNET)[4], False)
    low = build([job(0, 16, 10**6)], scaling_efficiency=0.5, gpus=64, outlasting="keep", tail_hours=10**4)
    high = build([job(0, 16, 10**6)], scaling_efficiency=1.0, gpus=64, outlasting="keep", tail_hours=10**4)
    assert low.work[0] == pytest.approx(2 * high.work[0])
    assert low.meta["trace"]["counts"]["extrapolated"] == 1


def test_a_job_wider_than_the_cluster_is_capped_with_its_work_kept_or_dropped():
    wide = [job(0, 16, 10**5), job(0, 1, 10**3, line=2)]
    capped = build(wide, gpus=8, tail_hours=1000)
    free = build(wide, gpus=16, tail_hours=1000)
    assert capped.jobs[0].chunks == 8 and free.jobs[0].chunks == 16
    assert capped.work[0] == pytest.approx(free.work[0])
    assert capped.meta["trace"]["counts"]["capped"] == 1
    assert any("capped" in note for note in capped.meta["trace"]["notes"])
    dropped = build(wide, gpus=8, tail_hours=1000, oversize="drop")
    assert dropped.n_jobs == 1 and dropped.meta["trace"]["counts"]["dropped_oversize"] == 1


def test_jobs_that_cannot_finish_alone_by_the_horizon_are_dropped_or_kept_and_counted():
    long = [job(0, 1, 10**6), job(0, 1, 10, line=2)]  # ~111 h and seconds on one V100
    dropped = build(long, gpus=8)
    assert dropped.n_jobs == 1 and dropped.meta["trace"]["counts"]["dropped_outlasting"] == 1
    kept = build(long, gpus=8, outlasting="keep")
    assert kept.n_jobs == 2 and not kept.can_finish[0] and kept.meta["trace"]["counts"]["kept_outlasting"] == 1


def test_the_default_cluster_is_the_fewest_servers_at_the_target_load():
    # Three 8-GPU jobs each running ~the whole 10-hour window: mean load ~24 GPUs -> ceil(24 / 6.4) = 4 servers.
    steps = math.ceil(TABLE.measured(RESNET)[8] * 10 * 3600)
    records = [job(0, 8, steps, line=n + 1) for n in range(3)]
    instance = build(records, window=(0, 10), outlasting="keep")
    facts = instance.meta["trace"]["cluster"]
    assert facts["mean_gpu_load"] == pytest.approx(24, rel=1e-3)
    assert instance.cluster.n_worker_servers == 4 == instance.cluster.n_ps_servers
    assert build(records, window=(0, 10), target_load=1.0, outlasting="keep").cluster.n_worker_servers == 3
    odd = build(records, window=(0, 10), gpus=20, ps_servers=2, outlasting="keep").cluster
    assert odd.n_worker_servers == 3 and odd.worker_capacity[:, 0].tolist() == [8, 8, 4] and odd.n_ps_servers == 2


def test_demands_follow_the_family_and_eq6_gives_the_ps_count():
    instance = build([job(0, 8, 100), job(0, 1, 100, "A3C", line=2)], gpus=8, tail_hours=10)
    resnet, a3c = instance.jobs
    assert resnet.worker_demand.tolist() == [1, 12, 64, 10] and a3c.worker_demand.tolist() == [1, 12, 16, 1]
    assert resnet.ps_demand.tolist() == [0, 4, 16, 25]
    assert resnet.min_parameter_servers(8) == 4 and a3c.min_parameter_servers(1) == 1


@pytest.mark.parametrize("rule", ["sigmoid", "step:slack=1.5", "linear:slack=3", "constant:value_per_gpu_hour=2"])
def test_the_utility_rule_and_its_parameters_are_in_meta_and_applied(rule):
    steps = math.ceil(TABLE.measured(RESNET)[1] * 4.5 * 3600)  # 4.5 h alone: 5 one-hour slots
    instance = build([job(0, 1, steps)], gpus=8, utility=parse_rule(rule), tail_hours=100)
    parsed = parse_rule(rule)
    assert instance.meta["trace"]["utility"] == parsed.to_meta()
    utility, s = instance.jobs[0].utility, int(instance.shortest_duration[0])
    weight = parsed.value_per_gpu_hour * running_hours(RESNET, 1, steps)
    tau = math.ceil(parsed.slack * s) - 1
    assert s == 5
    if parsed.kind == "sigmoid":
        assert (utility.gamma1, utility.gamma3, utility.gamma2) == (pytest.approx(weight), tau, 5.0 / s)
        assert utility(s - 1) > 0.99 * weight and utility(3 * s) < 0.01 * weight
    elif parsed.kind == "step":
        assert utility(tau) == pytest.approx(weight) and utility(tau + 1) == 0
    elif parsed.kind == "linear":
        assert utility(tau + 1) == 0 and utility(0) == pytest.approx(weight)
    else:
        assert utility(10**6) == pytest.approx(weight)


def test_a_csv_deadline_and_value_set_the_utility():
    record = TraceJob(name="x", arrival_seconds=0, gpus=2, duration_seconds=3 * 3600, value=7.0,
                      deadline_seconds=6.5 * 3600, line=2)
    instance = build([record], gpus=8, utility=parse_rule("step"), tail_hours=10)
    assert (instance.jobs[0].utility.value, instance.jobs[0].utility.deadline) == (7.0, 5.0)


def test_bad_options_are_refused_by_flag():
    from primaldual.core.errors import InputError

    for options, flag in ((dict(slot_hours=0), "--slot-hours"), (dict(window=(0, float("inf"))), "--window"),
                          (dict(target_load=0), "--target-load"), (dict(scaling_efficiency=2), "--scaling"),
                          (dict(outlasting="x"), "--outlasting"), (dict(gpus=0), "--gpus")):
        with pytest.raises(InputError, match=flag):
            build([job(0)], **options)
    with pytest.raises(InputError, match="--utility"):
        parse_rule("step:slack=0.5")


def test_the_notes_say_1_job_and_keep_their_plural_texts():
    from primaldual.traces.convert import NOTES, _counts_and_notes

    plural = [
        "2 jobs arrive outside the window and are left out",
        "2 jobs ask for more than the cluster's 16 GPUs: workers capped to 16 (same work, longer running time)",
        "2 jobs ask for more than the cluster's 16 GPUs: dropped (--oversize drop)",
        "2 jobs cannot finish by the horizon even alone: dropped (--outlasting keep keeps them; add --tail-hours to "
        "give them time)",
        "2 jobs cannot finish by the horizon even alone: kept (they earn nothing)",
        "2 jobs have more work than the package's ranges allow (docs/input-ranges.md): dropped",
        "2 jobs run at a GPU count not measured: throughput extrapolated with efficiency 0.9",
    ]
    singular = [
        "1 job arrives outside the window and is left out",
        "1 job asks for more than the cluster's 16 GPUs: workers capped to 16 (same work, longer running time)",
        "1 job asks for more than the cluster's 16 GPUs: dropped (--oversize drop)",
        "1 job cannot finish by the horizon even alone: dropped (--outlasting keep keeps it; add --tail-hours to "
        "give it time)",
        "1 job cannot finish by the horizon even alone: kept (it earns nothing)",
        "1 job has more work than the package's ranges allow (docs/input-ranges.md): dropped",
        "1 job runs at a GPU count not measured: throughput extrapolated with efficiency 0.9",
    ]
    options = TraceOptions(scaling_efficiency=0.9)
    keys = [key for key, _ in NOTES]
    assert _counts_and_notes(dict.fromkeys(keys, 2), options, 16) == plural
    assert _counts_and_notes(dict.fromkeys(keys, 1), options, 16) == singular
    assert _counts_and_notes(dict.fromkeys(keys, 0), options, 16) == []
    only = _counts_and_notes({**dict.fromkeys(keys, 0), "capped": 3}, options, 8)
    assert only == ["3 jobs ask for more than the cluster's 8 GPUs: workers capped to 8 (same work, longer running time)"]
    # Through a conversion: one extrapolated job says so in the singular.
    one = build([job(0, 16, 10**6)], scaling_efficiency=0.5, gpus=64, outlasting="keep", tail_hours=10**4)
    assert one.meta["trace"]["notes"] == ["1 job runs at a GPU count not measured: throughput extrapolated with "
                                          "efficiency 0.5"]
