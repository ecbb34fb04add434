#!/usr/bin/env python3
"""bench/trace_summary.py's tail split and its time between tasks on a
hand-made trace whose answer is known: three SMs run an operation A, then an
operation B.

  check_trace_summary.py
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import trace_summary  # noqa: E402


def run(sm, task, ts, dur, step=1):
    return {"name": f"task {task}", "ph": "X", "ts": ts, "dur": dur, "tid": sm,
            "args": {"step": step, "task": task}}


def main():
    graph = {"tasks": [{"id": i, "op": i // 3} for i in range(6)]}
    # A: tasks 0-2 on SMs 0-2 from 0, ending at 10, 4 and 7; B: tasks 3-5
    # from 12, ending at 17, 20 and 18.
    runs = [run(0, 0, 0, 10), run(1, 1, 0, 4), run(2, 2, 0, 7),
            run(0, 3, 12, 5), run(1, 4, 12, 8), run(2, 5, 12, 6)]
    split = trace_summary.tail_split(graph, runs)
    tail, free, spread, r = split[1]
    # B's SMs came free at 10, 4 and 7 and ended at 17, 20 and 18.
    frees, ends = [10, 4, 7], [17, 20, 18]
    mx, my = sum(frees) / 3, sum(ends) / 3
    expected_r = sum((x - mx) * (y - my) for x, y in zip(frees, ends)) / math.sqrt(
        sum((x - mx) ** 2 for x in frees) * sum((y - my) ** 2 for y in ends))
    checks = [
        (tail == 3, f"B's tail {tail}, not 3"),
        (free == 6, f"B's SMs came free over {free}, not 6"),
        (spread == 3, f"B's runs spread {spread}, not 3"),
        (r is not None and abs(r - expected_r) < 1e-12, f"B's r {r}, not {expected_r:.6f}"),
        # A: every SM free at the step's start, so no r.
        (split[0] == (6, 0, 6, None), f"A's split {split[0]}, not (6, 0, 6, None)"),
    ]
    # A second step, its B's ends the same apart: the medians hold.
    runs += [run(s, t, ts + 100, d, step=2) for s, t, ts, d in
             [(0, 0, 0, 10), (1, 1, 0, 4), (2, 2, 0, 7), (0, 3, 12, 5), (1, 4, 12, 8), (2, 5, 12, 6)]]
    checks.append((trace_summary.tail_split(graph, runs)[1][:3] == (3, 6, 3),
                   "two equal steps change the medians"))
    # Between tasks: B's tasks 3 and 5 waited from 11 and 8; task 4 asked
    # for its inputs only as it started, at 12.
    waits = [{"name": "wait", "ph": "X", "ts": ts, "dur": 12 - ts, "tid": sm,
              "args": {"step": 1, "task": task}} for sm, task, ts in [(0, 3, 11), (2, 5, 8)]]
    gaps = trace_summary.between_gaps(graph, runs[:6], waits)
    checks.append((sorted(gaps[1]) == [1, 1, 8] and 0 not in gaps,
                   f"between tasks {dict(gaps)}, not B's [1, 1, 8] and none for A"))
    failed = [what for ok, what in checks if not ok]
    for what in failed:
        print("check_trace_summary.py: " + what)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
