#!/usr/bin/env python3
"""Checks what `mkrun --step-times FILE.csv --trace FILE.json` wrote for a
generation of STEPS steps from position FIRST (default 0), against the
graph and schedule of the step that ran as `mkc inspect MODEL.mk
--format=json [--step=S]` prints them:
  - the CSV has the header step,position,phase,ms and one row per step,
    positions FIRST..FIRST+STEPS-1, the first PROMPT in phase "prompt" and
    the rest in "generation", every time positive;
  - the trace is JSON with exactly one task event per task and step, on the
    row (tid) of the task's SM and named after the task's kind, each with
    wait <= start <= end, and "wait" events only before a task of theirs.

  check_timing.py STEPS.csv TRACE.json INSPECT.json STEPS PROMPT [FIRST]
"""
import csv
import json
import sys
from collections import Counter


def fail(message):
    sys.exit("check_timing.py: " + message)


steps_csv, trace_json, inspect_json = sys.argv[1], sys.argv[2], sys.argv[3]
steps, prompt = int(sys.argv[4]), int(sys.argv[5])
first = int(sys.argv[6]) if len(sys.argv) > 6 else 0

with open(steps_csv, newline="") as f:
    rows = list(csv.reader(f))
if rows[0] != ["step", "position", "phase", "ms"]:
    fail(f"header {rows[0]}")
body = rows[1:]
if [int(r[0]) for r in body] != list(range(steps)) or [int(r[1]) for r in body] != list(range(first, first + steps)):
    fail(f"expected steps 0..{steps - 1} at positions {first}..{first + steps - 1}, got {body}")
phases = ["prompt"] * prompt + ["generation"] * (steps - prompt)
if [r[2] for r in body] != phases:
    fail(f"expected {prompt} prompt steps, then generation steps, got {[r[2] for r in body]}")
if not all(float(r[3]) > 0 for r in body):
    fail(f"a step time is not positive: {body}")

graph = json.load(open(inspect_json))
tasks = graph["tasks"]
sm_of = {task: sm for sm, queue in enumerate(graph["schedule"]["queues"]) for task in queue}
trace = json.load(open(trace_json))
events = trace["traceEvents"]
runs = [e for e in events if e["ph"] == "X" and e["name"] != "wait"]
waits = [e for e in events if e["ph"] == "X" and e["name"] == "wait"]
seen = Counter((e["args"]["step"], e["args"]["task"]) for e in runs)
expected = {(step, task["id"]) for step in range(steps) for task in tasks}
if set(seen) != expected or max(seen.values()) != 1:
    fail(f"expected one event per task per step ({len(expected)}), got {len(runs)}")
for e in runs:
    task = tasks[e["args"]["task"]]
    if e["tid"] != sm_of[task["id"]] or f"({task['kind']} " not in e["name"]:
        fail(f"event {e} is not on task {task['id']}'s SM {sm_of[task['id']]} or not named after it")
    if e["args"]["position"] != first + e["args"]["step"] or e["dur"] < 0:
        fail(f"event {e} has a wrong position or a negative duration")
start = {(e["args"]["step"], e["args"]["task"]): e["ts"] for e in runs}
for w in waits:
    key = (w["args"]["step"], w["args"]["task"])
    if key not in start or w["dur"] <= 0 or abs(w["ts"] + w["dur"] - start[key]) > 2e-3:
        fail(f"wait {w} does not end where its task starts")
print(f"{len(body)} step times ({prompt} prompt, {steps - prompt} generation), {len(runs)} task events ({len(tasks)} tasks x {steps} steps), "
      f"{len(waits)} waits on {trace['otherData']['sms']} SMs")
