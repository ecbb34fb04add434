#!/usr/bin/env python3
"""Assembles a results folder of bench/harness.py from the parts its
commands wrote (DIR/parts/*.json): DIR/decode.json (every part merged and
the table's rows), DIR/README.md (the table of floor, mkc and baselines per
shape and position, the checks, the builds, the waterfall, the machine and
the commands), DIR/ms-per-token.png and DIR/waterfall-SHAPE.png. Needs
neither a GPU nor torch; the pictures need matplotlib and are left out,
with a message, without it.

  python3 bench/report.py DIR      (or python3 bench/harness.py --report DIR)
"""
import glob
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import floor  # noqa: E402
import shapes as known  # noqa: E402
import waterfall  # noqa: E402

VARIANTS = ("eager", "graph", "compiled")
BASELINE_TITLES = {"eager": "HF eager", "graph": "CUDA graph", "compiled": "compiled + graph"}


def load_parts(folder):
    parts = []
    for path in sorted(glob.glob(os.path.join(folder, "parts", "*.json"))):
        if path.endswith(".trace.json"):
            continue
        with open(path) as f:
            part = json.load(f)
        part["_file"] = os.path.relpath(path, folder)
        parts.append(part)
    return parts


def merge(parts):
    """{shape: {"mkc", "baselines": {variant: part}, "waterfall"}}, known shapes first."""
    merged = {}
    for part in parts:
        if part.get("kind") == "invocation" or "shape" not in part:
            continue
        entry = merged.setdefault(part["shape"], {"baselines": {}})
        if part["kind"] == "mkc":
            entry["mkc"] = part
        elif part["kind"] == "baseline":
            entry["baselines"][part["variant"]] = part
        elif part["kind"] == "waterfall":
            entry["waterfall"] = part
        elif part["kind"] == "batch_waterfall":
            entry["batch_waterfall"] = part
    order = list(known.SHAPES)
    return dict(sorted(merged.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])))


def config_of(entry):
    for part in [entry.get("mkc")] + list(entry["baselines"].values()):
        if part and part.get("config"):
            path = part["config"] if os.path.isabs(part["config"]) else os.path.join(os.path.dirname(HERE), part["config"])
            if os.path.exists(path):
                with open(path) as f:
                    return json.load(f)
    return None


def rows_of(merged):
    """One row per shape (and small-context build) and position."""
    rows = []
    for name, entry in merged.items():
        mkc = entry.get("mkc") or {}
        config = config_of(entry)
        trained = config.get("max_position_embeddings") if config else None
        steps = mkc.get("steps") or next((b.get("steps") for b in entry["baselines"].values()), 32)
        positions = set(int(p) for p in mkc.get("positions", {}))
        for b in entry["baselines"].values():
            positions |= set(int(p) for p in b.get("positions", {}))
        for position in sorted(positions):
            row = {"shape": name, "position": position, "steps": steps,
                   "past_trained_context": bool(trained and position + steps > trained)}
            if "weight_bytes" in mkc and mkc.get("rate_bytes_per_s"):
                row["floor_ms"] = floor.floor_ms(mkc["weight_bytes"], mkc["kv_bytes_per_position"],
                                                 position + steps // 2, mkc["rate_bytes_per_s"])
            timed = mkc.get("positions", {}).get(str(position))
            if timed:
                row["mkc_ms"] = timed["ms_per_token"]
            for variant, b in entry["baselines"].items():
                measured = b.get("positions", {}).get(str(position))
                if measured:
                    row[variant + "_ms"] = measured["ms_per_token"]
                elif b.get("error"):
                    row[variant + "_failed"] = True
            rows.append(row)
        small = mkc.get("small_context")
        for position, timed in sorted((small or {}).get("positions", {}).items(), key=lambda kv: int(kv[0])):
            row = {"shape": f"{name} (context {small['context']})", "position": int(position),
                   "steps": steps, "mkc_ms": timed["ms_per_token"], "past_trained_context": False}
            if "weight_bytes" in mkc and mkc.get("rate_bytes_per_s"):
                row["floor_ms"] = floor.floor_ms(mkc["weight_bytes"], mkc["kv_bytes_per_position"],
                                                 int(position) + steps // 2, mkc["rate_bytes_per_s"])
            rows.append(row)
    for row in rows:
        baselines = [row[v + "_ms"] for v in VARIANTS if v + "_ms" in row]
        if baselines and "mkc_ms" in row:
            row["speedup_vs_best_baseline"] = min(baselines) / row["mkc_ms"]
        if "floor_ms" in row and "mkc_ms" in row:
            row["percent_of_floor"] = row["floor_ms"] / row["mkc_ms"] * 100
    return rows


def cell(value, fmt="{:.3f}"):
    return fmt.format(value) if value is not None else "—"


def table(rows, variants=VARIANTS):
    head = (["shape", "position", "floor ms", "mkc ms", "% of floor"]
            + [f"{BASELINE_TITLES[v]} ms" for v in variants] + ["mkc speed-up vs best baseline"])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        position = f"{r['position']}{'*' if r.get('past_trained_context') else ''}"
        values = [r["shape"], position, cell(r.get("floor_ms")), cell(r.get("mkc_ms")),
                  cell(r.get("percent_of_floor"), "{:.1f}%")]
        values += ["failed" if r.get(v + "_failed") else cell(r.get(v + "_ms")) for v in variants]
        values.append(cell(r.get("speedup_vs_best_baseline"), "{:.2f}x"))
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def environment_lines(invocations):
    lines = []
    seen = set()
    for inv in invocations:
        env = inv.get("environment", {})
        gpus = env.get("gpus") or []
        facts = [f"GPU {', '.join(sorted({g['name'] for g in gpus}))}" if gpus else f"GPU: {env.get('error', 'unknown')}",
                 f"driver {', '.join(sorted({g['driver'] for g in gpus}))}" if gpus else None,
                 f"torch {env['torch']} (CUDA {env.get('torch_cuda')})" if env.get("torch") else None,
                 f"transformers {env['transformers']}" if env.get("transformers") else None,
                 f"nvcc: {env['nvcc']}" if env.get("nvcc") else None,
                 f"{env['mkc']}" if env.get("mkc") else None,
                 f"Python {env['python']}" if env.get("python") else None]
        text = "; ".join(f for f in facts if f)
        if text not in seen:
            seen.add(text)
            lines.append(f"- {text}")
    return lines


def commands_section(invocations):
    lines = ["The harness commands, each a part of this folder (every command run by each is in "
             "decode.json, `invocations[].commands`):", "", "```"]
    for inv in invocations:
        lines.append(f"{inv['command']}    # {inv.get('started', '')}, {inv.get('seconds', '?')} s"
                     + (f", failed: {', '.join(inv['failed'])}" if inv.get("failed") else ""))
    lines.append("```")
    kinds = {}
    for inv in invocations:
        for c in inv.get("commands", []):
            words = c["command"].split()
            program = os.path.basename(words[0])
            if program.startswith("python") and len(words) > 1:
                program = os.path.basename(words[1])
            key = program + "".join(f" {w}" for w in words[1:]
                                    if w in ("compile", "inspect", "--logits", "--step-times", "--trace", "--variants"))
            kinds.setdefault(key, c["command"])
    if kinds:
        lines += ["", "One of each kind of command they ran:", "", "```"] + list(kinds.values()) + ["```"]
    return lines


def checks_section(merged):
    lines = ["| shape | position | tokens | max relative error (GPU vs CPU executor) | argmax agree |",
             "| --- | --- | --- | --- | --- |"]
    for name, entry in merged.items():
        for check in (entry.get("mkc") or {}).get("checks", []):
            lines.append(f"| {name} | {check['start']} | {check['tokens']} | "
                         f"{check['max_relative_error']:.1e} (limit {check['rtol']:.0e}) | "
                         f"{check['argmax_agree']}/{check['tokens']} |")
        for variant, b in entry["baselines"].items():
            errors = [v["check_error"] for v in b.get("positions", {}).values() if "check_error" in v]
            if errors:
                lines.append(f"| {name}, {BASELINE_TITLES[variant]} vs HF eager | "
                             f"{', '.join(b['positions'])} | 1 per position | {max(errors):.1e} | |")
    return lines


def kernel_cell(account):
    """ptxas's figures of a build's kernel (mkc compile's account)."""
    if not account:
        return "—"
    return (f"{account['registers']} registers, {account['spill_bytes']} B spilled, "
            f"{account['dynamic_shared_bytes'] / 1024:.0f} KiB dynamic shared")


def builds_section(merged):
    lines = ["| shape | compiled for | KV cache, flags | mkc compile s | .mk | tasks | weights GB | KV per position (bf16) | kernel (ptxas) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, entry in merged.items():
        mkc = entry.get("mkc")
        if not mkc or "build" not in mkc:
            continue
        for build in [mkc["build"], mkc.get("small_context"), (mkc.get("batches") or {}).get("build")]:
            if build:
                # (Builds before --kv-cache kept f32 caches.)
                kv = " ".join([build.get("kv_cache", "f32"), *build.get("flags", [])])
                lines.append(f"| {name} | {build['context']} positions | {kv} | "
                             f"{cell(build.get('compile_seconds'), '{:.0f}')} | "
                             f"{build['mk_bytes'] / 2**30:.2f} GiB | {mkc.get('tasks', '—')} | "
                             f"{mkc.get('weight_bytes', 0) / 1e9:.3f} | {mkc['kv_bytes_per_position'] / 1024:.1f} KiB | "
                             f"{kernel_cell(build.get('kernel'))} |")
    return lines


def batches_section(merged):
    """Each timed batch's ms a step against one sequence's on the same .mk."""
    lines = ["| shape | window from | batch | ms a step | x one sequence's step | tokens/s x one sequence's |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, entry in merged.items():
        batches = (entry.get("mkc") or {}).get("batches")
        if not batches or "1" not in batches["ms"]:
            continue
        alone = batches["ms"]["1"]
        for rows, ms in sorted(batches["ms"].items(), key=lambda item: int(item[0])):
            lines.append(f"| {name} | {batches['position']} | {rows} | {ms:.3f} | {ms / alone:.2f} | "
                         f"{int(rows) * alone / ms:.2f} |")
    return lines if len(lines) > 2 else []


def batch_layers_section(part):
    """The middle layer's operations, one column of spans per batch size
    (one sequence first), from bench/harness.py's trace_batches."""
    sizes = sorted(part["rows"], key=int)
    first = part["rows"][sizes[0]]
    lines = ["| operation | task kind | " + " | ".join(f"span us, {s} row{'s' if s != '1' else ''}"
                                                  for s in sizes) + " |",
             "| --- | --- | " + " | ".join("---" for _ in sizes) + " |"]
    for row in first["rows"]:
        spans = []
        for size in sizes:
            match = [r for r in part["rows"][size]["rows"]
                     if r["operation"] == row["operation"] and r["kind"] == row["kind"]]
            spans.append(f"{match[0]['span_us']:.1f}" if match else "")
        lines.append(f"| {row['operation']} | {row['kind']} | " + " | ".join(spans) + " |")
    lines.append("| the layer | | " + " | ".join(f"{part['rows'][s]['layer_us']:.1f}"
                                                 for s in sizes) + " |")
    lines.append("| the step | | " + " | ".join(f"{part['rows'][s]['step_wall_us']:.1f}"
                                                for s in sizes) + " |")
    return lines


def prompts_section(merged):
    """Each prompt's time to the first token: mkc, one token a step, HF SDPA;
    mkc's FLOP rate and its share of the dense matmul rate of the same run."""
    lines = ["| shape | prompt | mkc, ms to the first token | one token a step | HF SDPA | mkc / HF "
             "| mkc TFLOP/s | of the dense rate |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, entry in merged.items():
        prompts = (entry.get("mkc") or {}).get("prompts")
        if not prompts:
            continue
        dense = prompts.get("dense_tflops")
        for length, ms in sorted(prompts["ms"].items(), key=lambda item: int(item[0])):
            hf = prompts.get("hf_sdpa_ms", {}).get(length)
            flops = prompts.get("flops", {}).get(length)
            rate = flops / (ms * 1e9) if flops and ms > 0 else None
            lines.append(f"| {name} | {length} | {ms:.2f} | {cell(prompts.get('by_step_ms', {}).get(length), '{:.1f}')} | "
                         f"{cell(hf, '{:.2f}')} | {cell(ms / hf if hf else None, '{:.2f}')} | "
                         f"{cell(rate, '{:.0f}')} | "
                         f"{cell(100 * rate / dense if rate and dense else None, '{:.0f}%')} |")
    return lines if len(lines) > 2 else []


def failures_section(merged):
    lines = []
    for name, entry in merged.items():
        for part in [entry.get("mkc")] + list(entry["baselines"].values()):
            if part and part.get("error"):
                what = "mkc" if part["kind"] == "mkc" else part["variant"]
                lines.append(f"- {name}, {what}: `{part['error'].strip().splitlines()[-1][:400]}`")
    return lines


def draw_ms_per_token(merged, rows, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    names = [n for n in merged if any(r["shape"] == n for r in rows)]
    if not names:
        return False
    columns = min(3, len(names))
    lines = (len(names) + columns - 1) // columns
    fig, axes = plt.subplots(lines, columns, figsize=(5 * columns, 3.8 * lines), squeeze=False)
    styles = {"mkc_ms": ("mkc", "tab:blue", "o-"), "floor_ms": ("floor", "black", "--"),
              "eager_ms": ("HF eager", "tab:red", "s-"), "graph_ms": ("CUDA graph", "tab:orange", "^-"),
              "compiled_ms": ("compiled + graph", "tab:green", "v-")}
    for ax, name in zip(axes.flat, names):
        own = [r for r in rows if r["shape"] == name]
        for key, (label, color, style) in styles.items():
            points = [(r["position"], r[key]) for r in own if key in r]
            if points:
                ax.plot([max(p, 1) for p, _ in points], [v for _, v in points], style, color=color,
                        label=label, ms=4)
        small = [r for r in rows if r["shape"].startswith(name + " (context")]
        if small:
            ax.plot([max(r["position"], 1) for r in small], [r["mkc_ms"] for r in small], "x",
                    color="tab:purple", ms=8, label=small[0]["shape"][len(name) + 1:].strip("()"))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(0.8, 45000)
        ticks = [1, 8, 64, 512, 4096, 32768]
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks], fontsize=8)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("position")
        ax.set_ylabel("ms / token")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def assemble(folder):
    parts = load_parts(folder)
    if not parts:
        raise SystemExit(f"report: no parts in {os.path.join(folder, 'parts')}")
    invocations = sorted((p for p in parts if p.get("kind") == "invocation"), key=lambda p: p.get("started", ""))
    merged = merge(parts)
    rows = rows_of(merged)
    variants = [v for v in VARIANTS if any(v in e["baselines"] for e in merged.values())] or list(VARIANTS)

    pictures = []
    try:
        import matplotlib  # noqa: F401
        if draw_ms_per_token(merged, rows, os.path.join(folder, "ms-per-token.png")):
            pictures.append("ms-per-token.png")
        for name, entry in merged.items():
            if "waterfall" in entry:
                waterfall.draw(entry["waterfall"], os.path.join(folder, f"waterfall-{name}.png"))
                pictures.append(f"waterfall-{name}.png")
    except ImportError:
        print("report: matplotlib is missing: no pictures (pip install matplotlib)")

    steps = sorted({r["steps"] for r in rows}) or [32]
    dates = sorted({inv.get("started", "")[:10] for inv in invocations if inv.get("started")})
    rates = sorted({max(d["median_tbps"] for d in inv["stream"]["loads_in_flight"].values())
                    for inv in invocations if inv.get("stream")})
    text = [f"# Decode benchmark: ms/token by position, {', '.join(dates) or time.strftime('%Y-%m-%d')}", ""]
    text += environment_lines(invocations)
    if rates:
        text.append(f"- Streaming rate (bench/stream/stream_bandwidth.cu, measured in each command): "
                    f"{', '.join(f'{r:.3f}' for r in rates)} TB/s")
    text += ["", "Batch 1, random weights in bf16, greedy. A position P is the window of "
             f"{'/'.join(map(str, steps))} decode steps from P: mkc starts there with `mkrun --start-position` "
             "(the cache below holds zeros: the time of a step does not depend on the values), each "
             "position the fastest of its launches, then the median over the window; the baselines "
             "fill the context with HF in batched forwards and time the same window. The floor: "
             "the weights and the bf16 KV cache of the window's middle position over the streaming "
             "rate. Speed-up: the best baseline's ms over mkc's.", "", table(rows, variants)]
    if any(r.get("past_trained_context") for r in rows):
        text += ["", "\\* past the model's max_position_embeddings: timed all the same."]
    failures = failures_section(merged)
    if failures:
        text += ["", "## Failures", ""] + failures
    if "ms-per-token.png" in pictures:
        text += ["", "![ms/token against position](ms-per-token.png)"]
    batches = batches_section(merged)
    if batches:
        text += ["", "## Batches", "", "Several sequences in one launch (`mkc compile --batch=B`, "
                 "a row of each step per sequence): every sequence fed the window's first position's "
                 "tokens from position 0, then timed over the window, each position the fastest of "
                 "its launches, the median over the window; one sequence on the same .mk the same "
                 "way.", ""] + batches
    for name, entry in merged.items():
        if "batch_waterfall" in entry:
            part = entry["batch_waterfall"]
            layer = next(iter(part["rows"].values()))
            text += ["", f"Where a step goes, {name}: layer {layer['layer']} of a traced step from "
                     f"position {part['position']} (`mkrun --trace`, bench/waterfall.py), one sequence "
                     "and each batch on the batches' .mk.", ""] + batch_layers_section(part)
    prompts = prompts_section(merged)
    if prompts:
        text += ["", "## Prompts", "", "Time to the first token of a prompt from position 0 "
                 "(bench/mkc_decode.py's time_prompt): the sum of `mkrun`'s prompt-phase step times, "
                 "the prompt run layer by layer on the GPU and the first token picked from its last "
                 "row, a new process each launch, the median of the launches; one token a step "
                 "with `--prompt-by-step`; HF transformers with SDPA, bf16, one forward of the "
                 "prompt (bench/prefill_bench.py). The FLOP rate counts the GEMMs, attention "
                 "causally and one logits row; the dense rate is an 8192^3 bf16 matmul in HF's "
                 "process.", ""] + prompts
    text += ["", "## Checks before timing", ""] + checks_section(merged)
    text += ["", "## Builds", ""] + builds_section(merged)
    for name, entry in merged.items():
        if "waterfall" in entry:
            text += ["", f"## Where a layer's time goes: {name}", "",
                     f"A trace (`mkrun --trace`) of a few steps at position {entry['waterfall']['position']}, "
                     "its last step; bench/waterfall.py. Span: from the row's first task start to its last "
                     "task end across SMs; run and wait: SM time running its tasks and waiting on their "
                     "events.", "", waterfall.table(entry["waterfall"])]
            if f"waterfall-{name}.png" in pictures:
                text += ["", f"![waterfall of {name}](waterfall-{name}.png)"]
    text += ["", "## Commands", ""] + commands_section(invocations)
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(folder, "decode.json"), "w") as f:
        json.dump({"generated": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows, "shapes": merged,
                   "invocations": invocations}, f, indent=1)
    print(f"report: {os.path.join(folder, 'README.md')} ({len(rows)} rows), decode.json"
          + (f", {', '.join(pictures)}" if pictures else ""))
    return rows


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__)
    assemble(sys.argv[1])
