#!/usr/bin/env python3
"""Where a megakernel launch spends its time, from `mkrun --trace` (a Chrome
trace: one "X" event per task run, a "wait" event before it when its SM
waited) and the model's task graph (`mkc inspect MODEL.mk --format=json`).

  python3 bench/trace_summary.py trace.json inspect.json [--skip-steps 1]

Per step: the wall time, and how the SMs' time splits into running tasks,
waiting on events, and the rest (between tasks: barriers, record copies, the
end of the step). Per operation (in graph order, summed over steps): its
span from the first task start to the last task end across SMs, the weight
bytes its tasks stream and the rate that makes over the span and over the
tasks' own running time; the gaps between consecutive spans are where the
GPU streams nothing.

Then, for the operations run by tasks of several kinds (attention: its
chunks, then the merge), each kind's phase: where it starts and ends inside
the operation's span, and its tasks' median run, so that an operation's
time splits into its phases and the gaps between them.

Then the hops, per operation: for each task run that was already waiting
when its inputs became ready, the time from the end of the last task it
waited on (the run that completed its events) to its own start, which is
what one dependency costs: the producer's barrier and release, the count
reaching the waiter, its poll and barrier. And the spread of the
operation's task ends (first to last), its tail.

Then each operation's tail beside the spread of the times its tasks' SMs
came free (their previous runs' ends) and of its runs, and how closely an
SM's end follows when it came free: whether the tail is the operations
before it or the operation's own.

Last, per operation, the time between a run's predecessor on the same SM
ending and the run asking for its inputs: the interpreter's own cost
between two tasks.
"""
import argparse
import collections
import json
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("inspect")
    ap.add_argument("--skip-steps", type=int, default=1, help="leading steps left out (warm-up)")
    a = ap.parse_args()
    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    with open(a.inspect) as f:
        graph = json.load(f)
    tasks = {t["id"]: t for t in graph["tasks"]}
    operations = graph["operations"]
    num_sms = graph["schedule"]["numSms"]

    runs = [e for e in events if e.get("ph") == "X" and e["name"] != "wait"
            and e["args"]["step"] >= a.skip_steps]
    waits = [e for e in events if e.get("ph") == "X" and e["name"] == "wait"
             and e["args"]["step"] >= a.skip_steps]
    steps = sorted({e["args"]["step"] for e in runs})
    if not steps:
        raise SystemExit("trace_summary: no task runs after the skipped steps")

    by_step = collections.defaultdict(list)
    for e in runs:
        by_step[e["args"]["step"]].append(e)
    walls = []
    for s in steps:
        start = min(e["ts"] for e in by_step[s])
        end = max(e["ts"] + e["dur"] for e in by_step[s])
        walls.append(end - start)
    wall = statistics.median(walls)
    busy = sum(e["dur"] for e in runs) / len(steps)
    waiting = sum(e["dur"] for e in waits) / len(steps)
    total = wall * num_sms
    print(f"{len(steps)} steps, median wall {wall:.1f} us; of {num_sms} SMs x wall: "
          f"tasks {busy / total:.1%}, waits {waiting / total:.1%}, "
          f"other {(total - busy - waiting) / total:.1%}")

    # Per operation, per step: span and bytes; then medians over steps.
    spans = collections.defaultdict(list)
    run_time = collections.defaultdict(float)
    for s in steps:
        per_op = collections.defaultdict(list)
        for e in by_step[s]:
            per_op[tasks[e["args"]["task"]]["op"]].append(e)
        for op, items in per_op.items():
            start = min(e["ts"] for e in items)
            end = max(e["ts"] + e["dur"] for e in items)
            spans[op].append((start - min(x["ts"] for x in by_step[s]), end - start))
            run_time[op] += sum(e["dur"] for e in items)
    weight_bytes = collections.defaultdict(int)
    for t in graph["tasks"]:
        weight_bytes[t["op"]] += t["weightBytes"]

    print(f"\n{'operation':34} {'kind':10} {'start':>8} {'span us':>8} {'MB':>8} "
          f"{'GB/s span':>10} {'GB/s/SM run':>12}")
    rows = []
    for op in sorted(spans, key=lambda o: statistics.median(x[0] for x in spans[o])):
        start = statistics.median(x[0] for x in spans[op])
        span = statistics.median(x[1] for x in spans[op])
        mb = weight_bytes[op] / 1e6
        per_task_run = run_time[op] / len(steps)  # summed over SMs
        rate_span = weight_bytes[op] / (span * 1e-6) / 1e9 if span > 0 else 0
        rate_run = weight_bytes[op] / (per_task_run * 1e-6) / 1e9 if per_task_run > 0 else 0
        rows.append((op, start, span, mb))
        name = operations[op]["name"] if op < len(operations) else str(op)
        print(f"{name[:34]:34} {operations[op]['kind'][:10]:10} {start:8.1f} {span:8.1f} "
              f"{mb:8.2f} {rate_span:10.0f} {rate_run:12.1f}")

    gemv = [r for r in rows if r[3] > 0]
    streamed = sum(r[3] for r in gemv) * 1e6
    span_sum = sum(r[2] for r in gemv)
    print(f"\nweights {streamed / 1e9:.3f} GB per step: {streamed / (wall * 1e-6) / 1e9:.0f} GB/s "
          f"over the wall; the GEMV spans sum to {span_sum:.1f} us "
          f"({streamed / (span_sum * 1e-6) / 1e9:.0f} GB/s inside them), the rest of the wall "
          f"({wall - span_sum:.1f} us) is attention, argmax and gaps")

    phases(graph, runs, steps, operations)
    hops(graph, runs, waits, operations)
    spreads(graph, runs, operations)
    between(graph, runs, waits, operations)


def phases(graph, runs, steps, operations):
    """Per operation of several task kinds, per kind: its start and end
    relative to the operation's start and its tasks' median run (medians
    over the steps)."""
    tasks = {t["id"]: t for t in graph["tasks"]}
    kinds = collections.defaultdict(set)
    for t in graph["tasks"]:
        kinds[t["op"]].add(t["kind"])
    mixed = {op for op, k in kinds.items() if len(k) > 1}
    if not mixed:
        return
    # (op, kind) -> per step (start, end) relative to the op's start; runs
    extent = collections.defaultdict(list)
    durations = collections.defaultdict(list)
    for s in steps:
        per_op = collections.defaultdict(list)
        for e in runs:
            if e["args"]["step"] == s and tasks[e["args"]["task"]]["op"] in mixed:
                per_op[tasks[e["args"]["task"]]["op"]].append(e)
        for op, items in per_op.items():
            origin = min(e["ts"] for e in items)
            by_kind = collections.defaultdict(list)
            for e in items:
                by_kind[tasks[e["args"]["task"]]["kind"]].append(e)
            for kind, group in by_kind.items():
                extent[(op, kind)].append((min(e["ts"] for e in group) - origin,
                                           max(e["ts"] + e["dur"] for e in group) - origin))
                durations[(op, kind)] += [e["dur"] for e in group]
    print(f"\n{'operation':34} {'task kind':16} {'tasks':>6} {'from us':>8} {'to us':>8} "
          f"{'run us':>8}")
    for op, kind in sorted(extent, key=lambda k: (k[0], statistics.median(x[0] for x in extent[k]))):
        name = operations[op]["name"] if op < len(operations) else str(op)
        count = len(durations[(op, kind)]) // len(extent[(op, kind)])
        print(f"{name[:34]:34} {kind[:16]:16} {count:6d} "
              f"{statistics.median(x[0] for x in extent[(op, kind)]):8.2f} "
              f"{statistics.median(x[1] for x in extent[(op, kind)]):8.2f} "
              f"{statistics.median(durations[(op, kind)]):8.2f}")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def hops(graph, runs, waits, operations):
    """Per operation: how long its waiting tasks took to start after their
    inputs were complete, and how far apart its tasks ended."""
    tasks = {t["id"]: t for t in graph["tasks"]}
    producers = collections.defaultdict(list)  # event -> tasks triggering it
    for t in graph["tasks"]:
        producers[t["trigger"]].append(t["id"])
    ends = {(e["args"]["step"], e["args"]["task"]): e["ts"] + e["dur"] for e in runs}
    wait_begins = {(e["args"]["step"], e["args"]["task"]): e["ts"] for e in waits}

    hop = collections.defaultdict(list)
    for e in runs:
        step, task = e["args"]["step"], e["args"]["task"]
        began = wait_begins.get((step, task))
        if began is None:
            continue  # it did not wait: its inputs were ready before it asked
        ready = None
        for w in tasks[task]["waits"]:
            producer_step = step + w["stepOffset"]
            for p in producers[w["event"]]:
                end = ends.get((producer_step, p))
                if end is not None and (ready is None or end > ready):
                    ready = end
        if ready is not None and began < ready:
            hop[tasks[task]["op"]].append(e["ts"] - ready)

    tails = collections.defaultdict(list)
    by_step_op = collections.defaultdict(list)
    for e in runs:
        by_step_op[(e["args"]["step"], tasks[e["args"]["task"]]["op"])].append(e["ts"] + e["dur"])
    for (_, op), items in by_step_op.items():
        tails[op].append(max(items) - min(items))

    print(f"\n{'operation':34} {'kind':10} {'hops':>6} {'median us':>10} {'p90 us':>8} "
          f"{'tail us':>8}")
    every = []
    for op in sorted(tails):
        name = operations[op]["name"] if op < len(operations) else str(op)
        values = hop.get(op, [])
        every += values
        median = f"{statistics.median(values):10.2f}" if values else f"{'-':>10}"
        p90 = f"{percentile(values, 0.9):8.2f}" if values else f"{'-':>8}"
        print(f"{name[:34]:34} {operations[op]['kind'][:10]:10} {len(values):6d} {median} {p90} "
              f"{statistics.median(tails[op]):8.2f}")
    if every:
        print(f"\nhops over all operations: {len(every)}, median {statistics.median(every):.2f} us, "
              f"p10 {percentile(every, 0.1):.2f}, p90 {percentile(every, 0.9):.2f}")


def correlation(xs, ys):
    """Pearson's r, or None where either side does not vary."""
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        return None


def runs_by_step_sm(runs):
    """Each (step, SM)'s runs in the order they started."""
    by_step_sm = collections.defaultdict(list)
    for e in runs:
        by_step_sm[(e["args"]["step"], e["tid"])].append(e)
    for sm_runs in by_step_sm.values():
        sm_runs.sort(key=lambda e: e["ts"])
    return by_step_sm


def tail_split(graph, runs):
    """Per operation, medians over the steps of: its tail (the spread of its
    tasks' ends), the spread of the times their SMs came free (each SM's
    previous run's end, or the step's first start for an SM's first run),
    the spread of the runs themselves, and Pearson's r between an SM's free
    time and its end (None where no step has three runs that vary). A tail
    that the free times explain comes from the operations before; one the
    runs explain, from the operation's own tasks."""
    tasks = {t["id"]: t for t in graph["tasks"]}
    step_start = collections.defaultdict(lambda: float("inf"))
    for e in runs:
        step_start[e["args"]["step"]] = min(step_start[e["args"]["step"]], e["ts"])
    # (step, op) -> [(free, end, run)] of its tasks' runs
    items = collections.defaultdict(list)
    for (step, _), sm_runs in runs_by_step_sm(runs).items():
        free = step_start[step]
        for e in sm_runs:
            items[(step, tasks[e["args"]["task"]]["op"])].append((free, e["ts"] + e["dur"], e["dur"]))
            free = e["ts"] + e["dur"]
    tail, free_spread, run_spread, follow = (collections.defaultdict(list) for _ in range(4))
    for (_, op), values in items.items():
        frees, ends, durations = zip(*values)
        tail[op].append(max(ends) - min(ends))
        free_spread[op].append(max(frees) - min(frees))
        run_spread[op].append(max(durations) - min(durations))
        r = correlation(frees, ends) if len(values) > 2 else None
        if r is not None:
            follow[op].append(r)
    return {op: (statistics.median(tail[op]), statistics.median(free_spread[op]),
                 statistics.median(run_spread[op]),
                 statistics.median(follow[op]) if follow[op] else None) for op in tail}


def spreads(graph, runs, operations):
    """Prints tail_split's table, an operation a line."""
    print(f"\n{'operation':34} {'kind':10} {'tail us':>8} {'free us':>8} {'runs us':>8} "
          f"{'r(free, end)':>13}")
    for op, (tail, free, run, r) in sorted(tail_split(graph, runs).items()):
        name = operations[op]["name"] if op < len(operations) else str(op)
        follows = f"{r:13.2f}" if r is not None else f"{'-':>13}"
        print(f"{name[:34]:34} {operations[op]['kind'][:10]:10} {tail:8.2f} {free:8.2f} "
              f"{run:8.2f} {follows}")


def between_gaps(graph, runs, waits):
    """Per operation, every run's time between its SM's previous run (in the
    same step) ending and the run's wait beginning, or its start where it
    did not wait."""
    tasks = {t["id"]: t for t in graph["tasks"]}
    wait_begins = {(e["args"]["step"], e["args"]["task"]): e["ts"] for e in waits}
    gap = collections.defaultdict(list)
    for sm_runs in runs_by_step_sm(runs).values():
        for before, e in zip(sm_runs, sm_runs[1:]):
            asked = wait_begins.get((e["args"]["step"], e["args"]["task"]), e["ts"])
            gap[tasks[e["args"]["task"]]["op"]].append(asked - (before["ts"] + before["dur"]))
    return gap


def between(graph, runs, waits, operations):
    """Per operation: the time from the end of the previous run on the same
    SM (its release marked) to this run's wait, or to its start where it did
    not wait: what the interpreter spends between two tasks (the release,
    the closing barrier, the next queue entry, the task's entry and the
    loads it issues before it waits). On the critical path wherever it is
    longer than the hop it overlaps, as where few of the operation's runs
    waited at all (the last column: the share of its runs that waited)."""
    gap = between_gaps(graph, runs, waits)
    tasks = {t["id"]: t for t in graph["tasks"]}
    waited = collections.Counter(tasks[e["args"]["task"]]["op"] for e in waits)
    runs_of = collections.Counter(tasks[e["args"]["task"]]["op"] for e in runs)
    print(f"\n{'operation':34} {'kind':10} {'runs':>6} {'between us':>11} {'p90 us':>8} "
          f"{'waited':>7}")
    every = []
    for op in sorted(gap):
        name = operations[op]["name"] if op < len(operations) else str(op)
        every += gap[op]
        print(f"{name[:34]:34} {operations[op]['kind'][:10]:10} {len(gap[op]):6d} "
              f"{statistics.median(gap[op]):11.2f} {percentile(gap[op], 0.9):8.2f} "
              f"{waited[op] / runs_of[op]:7.0%}")
    if every:
        print(f"\nbetween tasks over all operations: {len(every)}, median "
              f"{statistics.median(every):.2f} us, p10 {percentile(every, 0.1):.2f}, "
              f"p90 {percentile(every, 0.9):.2f}")


if __name__ == "__main__":
    main()
