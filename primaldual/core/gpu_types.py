"""Heterogeneous accelerators (issue 64): worker servers of several GPU types, a job's speed per type.

**The model.** Worker server ``h`` carries a type ``g(h)`` (``Cluster.worker_types``, from the declared
``Cluster.gpu_types``); job ``i`` carries its compute time per mini-batch on each type, ``tau_i^g``
(``Job.compute_seconds_by_type``). One worker of type ``g`` in one slot does one slot of work at that type's
speed, so the job's work *measured on type g* is, as eq. (2)'s right-hand side with ``tau_i^g`` for ``tau_i``::

    W_i^g = E_i N_i M_i (tau_i^g + 2 e_i / b_i) / slot_seconds        (worker-slots of type g)

(communication ``2 e_i / b_i`` is the network's, the same on every type), and **eq. (2) becomes**::

    sum_t sum_h  y_iht / W_i^{g(h)}  >=  1                              (2, heterogeneous)

each worker-slot on type ``g`` doing the fraction ``1 / W_i^g`` of the job. **Gavel's rule**: in each slot, a job's
workers are all of one type (it may change type between slots). With one type this is eq. (2) as it was
(``sum y >= W_i``, which for integral ``y`` is ``sum y >= ceil(W_i)``).

A job's ``compute_seconds`` (``tau_i``) is its time on its *fastest* type, ``min_g tau_i^g``, checked on load: so
``Instance.work``, ``shortest_duration``, ``can_finish`` and ``best_utility`` are those of the fastest type,
optimistic bounds that stay valid for every mix of types (no type finishes a job sooner).

An instance without types (``worker_types`` None) is exactly the homogeneous model: none of this runs.

**Generated jobs** (:mod:`primaldual.core.generate`) get ``tau_i^g = tau_i x RATIO[g] / RATIO[fastest listed]``
from :data:`GAVEL_TIME_RATIO`: the median, over Gavel's job types measured alone at 1 GPU, of the time per step on
``g`` over the time on a V100 (``traces/data/philly/simulation_throughputs.json``; the test recomputes it).
"""

from __future__ import annotations

from primaldual.core.domains import JOB_FIELDS, MAX_NAME_LENGTH, MAX_WORK_CELLS, show
from primaldual.core.errors import InputError

#: The types Gavel measured (its Philly cluster: V100, P100, K80), fastest first by the median below.
GAVEL_TYPES = ("v100", "p100", "k80")
#: Time per mini-batch on each type over the time on a V100: the median over the 26 job types of Gavel's table
#: measured alone at 1 GPU on all three (V100 1, P100 1.23x slower, K80 4.05x slower).
GAVEL_TIME_RATIO = {"v100": 1.0, "p100": 1.2307097421899487, "k80": 4.053573034955936}


def refuse_heterogeneous(instance, name: str) -> None:
    """One line (:class:`InputError`, exit 2) when ``instance`` has GPU types and ``name`` does not handle them
    yet (the schedulers and the offline solve learn them in later steps of issue 64)."""
    if instance.cluster.worker_types is not None:
        raise InputError(f"heterogeneous clusters (gpu types): not yet supported by {name}")


def check_type_counts(pairs, flag: str, known=GAVEL_TYPES) -> list[tuple[str, int]]:
    """``[(type, servers), ...]`` of ``--gpu-types``: each type known, listed once, with a positive count."""
    seen = set()
    for gpu_type, count in pairs:
        if gpu_type not in known:
            raise InputError(f"{flag}: unknown gpu type {show(gpu_type)} (known: {', '.join(known)})")
        if gpu_type in seen:
            raise InputError(f"{flag}: listed twice: {gpu_type}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"{flag}: {gpu_type}: the server count must be a positive integer, got {show(count)}")
        seen.add(gpu_type)
    if not seen:
        raise InputError(f"{flag}: an empty list; give at least one TYPE:SERVERS")
    return [(gpu_type, int(count)) for gpu_type, count in pairs]


def parse_type_counts(entries, flag: str) -> list[tuple[str, int]]:
    """``TYPE:SERVERS`` entries (``--gpu-types``'s, or a sweep spec's ``gpu_types`` split at commas) as
    :func:`check_type_counts`' pairs; an entry of another shape is one line naming ``flag``."""
    from primaldual.core.numerals import echo, read_integer

    pairs = []
    for entry in entries:
        name, colon, count = entry.partition(":")
        servers = read_integer(count) if colon else None
        if servers is None:
            raise InputError(f"{flag}: each entry must be TYPE:SERVERS with SERVERS a positive integer, got {echo(entry)}")
        pairs.append((name, servers))
    return check_type_counts(pairs, flag)


# ------------------------------------------------------------------------------------------ validation


def version_problems(data: dict, plain: int, typed_version: int) -> list[str]:
    """An instance file's version names what it holds (docs/formats.md): ``typed_version`` with GPU types,
    ``plain`` without, so an older reader refuses a file of types by its version, not by a field it skips."""
    cluster = data.get("cluster")
    typed = isinstance(cluster, dict) and ("gpu_types" in cluster or "worker_types" in cluster)
    if data.get("version") == plain and typed:
        return [f"version: an instance with cluster.gpu_types is version {typed_version}, got {plain}"]
    if data.get("version") == typed_version and not typed:
        return [f"version: version {typed_version} is a heterogeneous instance, but cluster.gpu_types is missing"]
    return []


def cluster_type_problems(cluster) -> list[str]:
    """The declared types (unique names) and one declared type per worker server, every type with a server."""
    types, per_server = cluster.gpu_types, cluster.worker_types
    if types is None and per_server is None:
        return []
    if types is None or per_server is None:
        return ["cluster.gpu_types: give both gpu_types and worker_types, or neither (a homogeneous cluster)"]
    problems = [f"cluster.gpu_types: a type must be a name of 1..{MAX_NAME_LENGTH} characters, got {show(g)}"
                for g in types if not (isinstance(g, str) and 0 < len(g) <= MAX_NAME_LENGTH)]
    if not types:
        problems.append("cluster.gpu_types: must list at least one type")
    duplicates = sorted({g for g in types if types.count(g) > 1}, key=str)
    if duplicates:
        problems.append(f"cluster.gpu_types: listed twice: {', '.join(map(str, duplicates))}")
    if len(per_server) != cluster.n_worker_servers:
        problems.append(f"cluster.worker_types: must give one type per worker server ({cluster.n_worker_servers}), "
                        f"got {len(per_server)}")
    for h, g in enumerate(per_server):
        if g not in types:
            problems.append(f"cluster.worker_types[{h}]: unknown type {show(g)} (gpu_types: {list(types)})")
    empty = [g for g in types if g not in per_server]
    if empty and not problems:  # (after an unknown or missing server type, the type it displaced is no news)
        problems.append(f"cluster.gpu_types: {', '.join(map(str, empty))}: a type with no worker servers")
    return problems


def job_type_problems(instance, i: int, job, where: str) -> list[str]:
    """Job ``i``'s ``compute_seconds_by_type``: absent on a homogeneous cluster; else every declared type, each in
    the domain of ``compute_seconds``, none unknown, the least equal to ``compute_seconds``, each ``W_i^g`` in range."""
    types, given = instance.cluster.gpu_types, job.compute_seconds_by_type
    field = f"{where}.compute_seconds_by_type"
    if types is None:
        return [] if given is None else [f"{field}: the cluster declares no gpu_types (leave this field out)"]
    if given is None:
        return [f"{field}: missing (the cluster declares gpu_types {list(types)})"]
    problems, names = [], [g for g, _ in given]
    problems += [f"{field}.{g}: unknown type (gpu_types: {list(types)})" for g in names if g not in types]
    problems += [f"{field}.{g}: missing (give the time on every type of the cluster)" for g in types if g not in names]
    for g, seconds in given:
        problems += JOB_FIELDS["compute_seconds"].problem(f"{field}.{g}", seconds)
    if problems:
        return problems
    fastest = min(seconds for _, seconds in given)
    if job.compute_seconds != fastest:
        return [f"{where}.compute_seconds: must equal the least of compute_seconds_by_type ({show(fastest)}, the "
                f"fastest type), got {show(job.compute_seconds)}"]
    slowest = max(seconds for _, seconds in given)
    work = job.epochs * job.chunks * job.minibatches_per_chunk * (slowest + job.communication_seconds)
    work /= instance.slot_seconds
    slots = instance.horizon - job.arrival
    if work > MAX_WORK_CELLS or slots * work > MAX_WORK_CELLS or work * min(work, job.chunks) > MAX_WORK_CELLS:
        return [f"{field}: work W = {work:.4g} worker-slots on the slowest type is too large (see "
                "docs/input-ranges.md)"]
    return []


def type_problems(instance) -> list[str]:
    """Every problem of the types of ``instance`` (none to check on a homogeneous one with no job carrying types)."""
    problems = cluster_type_problems(instance.cluster)
    if problems:
        return problems
    for i, job in enumerate(instance.jobs):
        problems += job_type_problems(instance, i, job, f"jobs[{i}]")
        if problems and instance.cluster.gpu_types is None:
            break  # times per type on a homogeneous cluster: the first job says it for all
    return problems


__all__ = ["GAVEL_TIME_RATIO", "GAVEL_TYPES", "check_type_counts", "parse_type_counts", "refuse_heterogeneous",
           "type_problems"]
