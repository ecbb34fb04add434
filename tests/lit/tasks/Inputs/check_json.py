"""Reads `mkc inspect --format=json` output and prints facts a test checks:
that it is JSON, that every task is in exactly one queue, and that each
event's trigger count is the number of tasks triggering it."""
import collections
import json
import sys

with open(sys.argv[1]) as f:
    graph = json.load(f)

tasks, events, schedule = graph["tasks"], graph["events"], graph["schedule"]
print(f"operations {len(graph['operations'])}, tasks {len(tasks)}, events {len(events)}, "
      f"SMs {schedule['numSms']}")
queued = sorted(task for queue in schedule["queues"] for task in queue)
print("every task scheduled once:", "yes" if queued == list(range(len(tasks))) else "no")
triggers = collections.Counter(task["trigger"] for task in tasks)
print("trigger counts match:",
      "yes" if all(triggers[e["id"]] == e["triggerCount"] for e in events) else "no")
print("kinds:", " ".join(sorted({op["kind"] for op in graph["operations"]})))
attention = next(op for op in graph["operations"] if op["kind"] == "Attention")
print(f"attention: {attention['numHeads']} heads, {attention['numKvHeads']} kv heads, "
      f"{attention['numChunks']} chunks of {attention['chunkSize']}, "
      f"{attention['chunksPerRound']} a round")
