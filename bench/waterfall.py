#!/usr/bin/env python3
"""Where each microsecond of one layer goes, from a trace of the megakernel
(`mkrun --trace`, Chrome trace events: an "X" event per task run and a
"wait" event before it when its SM waited on its events) and the model's
graph (`mkc inspect MODEL.mk --format=json`).

  python3 bench/waterfall.py trace.json inspect.json [--step N] [--layer L] \\
      [--json summary.json] [--png waterfall.png] [--title TEXT]
  python3 bench/waterfall.py --summary summary.json --png waterfall.png

For one step (default: the last traced) and one layer (default: the middle
one), one row per operation and task kind (attention splits into its
prepare, chunk and merge phases), in the order they start: when the row's
first task started and its last ended, across SMs (its span), how many SMs
ran its tasks and how many waited on their events at each moment, the SM
time spent running and waiting, and the weights the row streams. Times are
microseconds from the start of the layer's first task. The summary JSON
holds the rows and every task's intervals, so the picture can be redrawn
without the trace (bench/report.py does). The PNG needs matplotlib; the
table does not.
"""
import argparse
import collections
import json


def summarize(trace, graph, step=None, layer=None):
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = sorted({e["args"]["step"] for e in events})
    if not steps:
        raise ValueError("the trace has no task events")
    step = steps[-1] if step is None else step
    operations, tasks = graph["operations"], {t["id"]: t for t in graph["tasks"]}
    layers = sorted({op["layer"] for op in operations if op["layer"] >= 0})
    layer = layers[len(layers) // 2] if layer is None else layer
    in_step = [e for e in events if e["args"]["step"] == step]
    position = in_step[0]["args"].get("position") if in_step else None
    wall = (max(e["ts"] + e["dur"] for e in in_step) - min(e["ts"] for e in in_step))

    rows = collections.OrderedDict()
    for e in in_step:
        task = tasks[e["args"]["task"]]
        op = operations[task["op"]]
        if op["layer"] != layer:
            continue
        key = (task["op"], task["kind"])
        row = rows.setdefault(key, {"operation": op["name"], "kind": task["kind"], "runs": [],
                                    "waits": [], "weight_bytes": 0, "task_ids": set()})
        interval = [e["ts"], e["ts"] + e["dur"]]
        if e["name"] == "wait":
            row["waits"].append(interval)
        else:
            row["runs"].append(interval)
            if task["id"] not in row["task_ids"]:
                row["task_ids"].add(task["id"])
                row["weight_bytes"] += task["weightBytes"]
    if not rows:
        raise ValueError(f"no task of layer {layer} ran in step {step}")
    origin = min(r[0] for row in rows.values() for r in row["runs"])
    out = []
    for row in rows.values():
        runs = [[a - origin, b - origin] for a, b in row["runs"]]
        waits = [[a - origin, b - origin] for a, b in row["waits"]]
        out.append({
            "operation": row["operation"], "kind": row["kind"], "tasks": len(row["task_ids"]),
            "start_us": min(a for a, _ in runs), "end_us": max(b for _, b in runs),
            "run_sm_us": sum(b - a for a, b in runs), "wait_sm_us": sum(b - a for a, b in waits),
            "weight_bytes": row["weight_bytes"], "runs": runs, "waits": waits})
    out.sort(key=lambda r: (r["start_us"], r["end_us"]))
    for r in out:
        r["span_us"] = r["end_us"] - r["start_us"]
    return {"step": step, "position": position, "layer": layer, "num_layers": len(layers),
            "num_sms": graph["schedule"]["numSms"], "step_wall_us": wall,
            "layer_us": max(r["end_us"] for r in out), "rows": out}


def table(summary):
    """The rows as a markdown table, and a line on the layer as a whole."""
    lines = ["| operation | task kind | tasks | start us | end us | span us | run SM-us | "
             "wait SM-us | weights MB | GB/s over span |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in summary["rows"]:
        rate = r["weight_bytes"] / (r["span_us"] * 1e-6) / 1e9 if r["span_us"] > 0 else 0
        lines.append(f"| {r['operation']} | {r['kind']} | {r['tasks']} | {r['start_us']:.1f} | "
                     f"{r['end_us']:.1f} | {r['span_us']:.1f} | {r['run_sm_us']:.0f} | "
                     f"{r['wait_sm_us']:.0f} | {r['weight_bytes'] / 1e6:.2f} | "
                     f"{f'{rate:.0f}' if rate else ''} |")
    run = sum(r["run_sm_us"] for r in summary["rows"])
    wait = sum(r["wait_sm_us"] for r in summary["rows"])
    total = summary["layer_us"] * summary["num_sms"]
    lines += ["", f"Layer {summary['layer']} of {summary['num_layers']}, step {summary['step']} "
                  f"(position {summary['position']}): {summary['layer_us']:.1f} us from its first "
                  f"task's start to its last task's end, of a {summary['step_wall_us']:.1f} us step; "
                  f"of {summary['num_sms']} SMs x {summary['layer_us']:.1f} us, running tasks "
                  f"{run / total:.1%}, waiting on events {wait / total:.1%}."]
    return "\n".join(lines)


def occupancy(intervals, grid):
    """How many intervals cover each point of `grid`."""
    counts = [0] * len(grid)
    if not grid:
        return counts
    step = grid[1] - grid[0] if len(grid) > 1 else 1.0
    for a, b in intervals:
        i = max(0, int((a - grid[0]) / step))
        while i < len(grid) and grid[i] < b:
            if grid[i] >= a:
                counts[i] += 1
            i += 1
    return counts


def draw(summary, png, title=None):
    """One row per operation and kind: its span outlined, the share of SMs
    running its tasks (dark) and waiting on its events (light) at each
    moment inside it, and its figures at the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["rows"]
    sms = summary["num_sms"]
    left, right = -2.0, summary["layer_us"] * 1.02 + 1
    grid = [left + i * (right - left) / 800 for i in range(800)]
    fig, ax = plt.subplots(figsize=(12, 0.55 * len(rows) + 1.6))
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        running = [c / sms for c in occupancy(r["runs"], grid)]
        waiting = [c / sms for c in occupancy(r["waits"], grid)]
        ax.fill_between(grid, y, [y + 0.8 * v for v in running], color="tab:blue", step="mid", lw=0)
        ax.fill_between(grid, [y + 0.8 * v for v in running],
                        [y + 0.8 * min(1.0, v + w) for v, w in zip(running, waiting)],
                        color="tab:orange", alpha=0.45, step="mid", lw=0)
        ax.add_patch(plt.Rectangle((r["start_us"], y), r["span_us"], 0.8, fill=False, ec="black", lw=0.8))
        ax.text(right, y + 0.4, f"  {r['span_us']:.1f} us, {r['tasks']} tasks, "
                f"{r['weight_bytes'] / 1e6:.1f} MB", va="center", fontsize=8)
    ax.set_yticks([len(rows) - 1 - i + 0.4 for i in range(len(rows))])
    ax.set_yticklabels([f"{r['operation'].split('.', 1)[-1]} ({r['kind']})" for r in rows], fontsize=8)
    ax.set_xlim(left, right)
    ax.set_ylim(-0.2, len(rows))
    ax.set_xlabel("us from the layer's first task start")
    ax.set_title(title or f"layer {summary['layer']}, step at position {summary['position']}: "
                 f"span per operation; share of {sms} SMs running (blue) and waiting (orange)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?")
    ap.add_argument("inspect", nargs="?")
    ap.add_argument("--summary", help="draw from this summary JSON instead of a trace")
    ap.add_argument("--step", type=int)
    ap.add_argument("--layer", type=int)
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--png", help="draw the waterfall here (needs matplotlib)")
    ap.add_argument("--title")
    a = ap.parse_args()
    if a.summary:
        with open(a.summary) as f:
            summary = json.load(f)
    elif a.trace and a.inspect:
        with open(a.trace) as f, open(a.inspect) as g:
            summary = summarize(json.load(f), json.load(g), a.step, a.layer)
    else:
        ap.error("give TRACE and INSPECT, or --summary")
    print(table(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f)
    if a.png:
        draw(summary, a.png, a.title)


if __name__ == "__main__":
    main()
