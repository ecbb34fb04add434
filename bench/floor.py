"""The bandwidth floor of a decode step: the bytes it must read at least
over the streaming rate this GPU reaches.

- The rate: bench/stream/stream_bandwidth.cu, built with nvcc and run in
  the same command as the measurements it bounds; the best median over its
  in-flight depths.
- The bytes at position P: the .mk's weights (the sum of its tasks'
  weightBytes, `mkc inspect --format=json`, each norm vector once) and the
  KV cache of the P + 1 positions a step at P attends to, counted in bf16
  (mkc keeps it in f32 today, which the floor does not excuse).
"""
import collections
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def streaming_rate(tmp, run, arch="sm_90a"):
    """(bytes per second, what the probe printed). `run(command)` returns
    stdout or raises."""
    binary = os.path.join(tmp, "stream_bandwidth")
    run(["nvcc", "-O3", f"-arch={arch}", "-o", binary, os.path.join(HERE, "stream", "stream_bandwidth.cu")])
    measured = json.loads(run([binary, "2.5", "20"]))
    best = max(depth["median_tbps"] for depth in measured["loads_in_flight"].values())
    return best * 1e12, measured


def weight_bytes(inspected):
    """The weights one step streams, each once: the sum of its tasks'
    weightBytes (`inspected` is `mkc inspect --format=json`), less the
    second and later reads of the vectors that every task of an operation
    reads whole (a Gemv's or an Mlp's input norm, an attention chunk's q and
    k norms), which come from L2: counted every time, they made the floor
    of a model of short rows a few % too long (SmolLM2-135M: 3%)."""
    total = sum(task["weightBytes"] for task in inspected["tasks"])
    table = {w["name"]: w["bytes"] for w in inspected.get("artifact", {}).get("weights", [])}
    readers = collections.Counter(task["op"] for task in inspected["tasks"] if task["weightBytes"] > 0)
    for index, op in enumerate(inspected["operations"]):
        for key in ("norm", "qNorm", "kNorm"):
            vector = op.get(key)
            if vector and readers[index] > 1:
                size = table.get(vector["name"], vector["rows"] * vector["cols"] * 2)
                total -= (readers[index] - 1) * size
    return total


def kv_bytes_per_position(config):
    """Keys and values of every layer for one position, in bf16."""
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", config["num_attention_heads"])
    return 2 * config["num_hidden_layers"] * kv_heads * head_dim * 2


def floor_ms(weights, kv_per_position, position, rate):
    """A step at `position` reads every weight and positions [0, position]."""
    return (weights + kv_per_position * (position + 1)) / rate * 1e3
