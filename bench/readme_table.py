#!/usr/bin/env python3
"""Rewrites the performance table of the top-level README.md (between the
markers <!-- decode-table:begin --> and <!-- decode-table:end -->) from a
results folder of bench/harness.py (its decode.json), so that the README's
numbers are always generated, never typed. Several folders (a run split
over calls, each with its own folder) give one table, their rows in the
order given. A decode-bench.json of the older bench/decode_bench.py is read
too (one shape at one position).

  python3 bench/readme_table.py bench/results/DATE-h200-decode [MORE...] [--readme README.md]
  python3 bench/readme_table.py --check [RESULTS...]

--check: exit 1 when the README's table is not what RESULTS gives (by
default the results the table names), without writing (a ctest runs it).
"""
import argparse
import json
import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- decode-table:begin -->", "<!-- decode-table:end -->"
TITLES = {"eager": "HF eager", "graph": "PyTorch, one CUDA graph", "compiled": "torch.compile + CUDA graph"}


def rows_from(results):
    """(rows, facts): rows as bench/report.py makes them, and where they come from."""
    if os.path.isdir(results):
        with open(os.path.join(results, "decode.json")) as f:
            merged = json.load(f)
        gpus = sorted({g["name"] for inv in merged.get("invocations", [])
                       for g in inv.get("environment", {}).get("gpus", [])})
        dates = sorted({inv.get("started", "")[:10] for inv in merged.get("invocations", [])})
        return merged["rows"], {"gpu": ", ".join(gpus) or "GPU unknown", "date": ", ".join(d for d in dates if d)}
    with open(results) as f:
        old = json.load(f)
    shape = os.path.basename(old["config"]).replace("-shaped.json", "").replace(".json", "")
    row = {"shape": shape, "position": old["position"], "steps": old["steps"],
           "floor_ms": old["floor_ms"], "mkc_ms": old["mkc"]["ms_per_token"]}
    for name, variant in old.get("pytorch", {}).get("variants", {}).items():
        if "ms_per_token" in variant:
            row[name + "_ms"] = variant["ms_per_token"]
    baselines = [row[v + "_ms"] for v in TITLES if v + "_ms" in row]
    if baselines:
        row["speedup_vs_best_baseline"] = min(baselines) / row["mkc_ms"]
    row["percent_of_floor"] = row["floor_ms"] / row["mkc_ms"] * 100
    return [row], {"gpu": old.get("stream", {}).get("gpu", "GPU unknown"), "date": old.get("date", "")}


def rows_of_all(folders):
    """The rows of every folder in order, and their GPUs and dates together."""
    rows, gpus, dates = [], [], []
    for results in folders:
        more, facts = rows_from(results)
        rows += more
        for gpu in facts["gpu"].split(", "):
            if gpu not in gpus:
                gpus.append(gpu)
        dates += [d for d in facts["date"].split(", ") if d and d not in dates]
    return rows, {"gpu": ", ".join(gpus), "date": ", ".join(sorted(dates))}


def table(rows, facts, source):
    lines = [f"Decode at batch 1 on {facts['gpu']} ({facts['date']}), random weights in bf16: "
             f"ms/token over the {rows[0]['steps'] if rows else 32} steps from each position; the floor "
             "is the weights and the bf16 KV cache over the streaming rate measured in the same run. "
             f"Written by `python3 bench/readme_table.py {source}` from the results there: do not edit "
             "by hand.", "",
             "| shape | position | floor ms | mkc ms | of the floor | best PyTorch baseline | speed-up |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        measured = {v: r[v + "_ms"] for v in TITLES if v + "_ms" in r}
        best = min(measured, key=measured.get) if measured else None
        lines.append(
            f"| {r['shape']} | {r['position']} | "
            + (f"{r['floor_ms']:.3f}" if "floor_ms" in r else "—") + " | "
            + (f"{r['mkc_ms']:.3f}" if "mkc_ms" in r else "—") + " | "
            + (f"{r['percent_of_floor']:.0f}%" if "percent_of_floor" in r else "—") + " | "
            + (f"{measured[best]:.3f} ({TITLES[best]})" if best else "—") + " | "
            + (f"{r['speedup_vs_best_baseline']:.2f}x" if "speedup_vs_best_baseline" in r else "—") + " |")
    return "\n".join(lines)


def rewrite(text, block):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise SystemExit(f"readme_table: the README needs one {BEGIN} and one {END} after it")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="*",
                    help="results folders of bench/harness.py, or a decode-bench.json")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when they differ")
    a = ap.parse_args()
    with open(a.readme) as f:
        text = f.read()
    if not a.results:
        if not a.check:
            ap.error("give RESULTS (only --check finds them in the README)")
        named = re.search(r"`python3 bench/readme_table.py ([^`]+)`", text)
        if not named:
            raise SystemExit("readme_table: the README's table names no results")
        a.results = [os.path.join(ROOT, name) for name in shlex.split(named.group(1))]
    rows, facts = rows_of_all(a.results)
    # Quoted as a shell would need them, so that a folder with a space in its
    # name is found again by --check.
    source = " ".join(shlex.quote(os.path.relpath(os.path.abspath(r), ROOT)) for r in a.results)
    updated = rewrite(text, table(rows, facts, source))
    if a.check:
        same = updated == text
        print("readme_table: the README's table is " + ("up to date" if same else f"not what {source} gives"))
        return 0 if same else 1
    with open(a.readme, "w") as f:
        f.write(updated)
    print(f"readme_table: {len(rows)} rows from {source} into {a.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
