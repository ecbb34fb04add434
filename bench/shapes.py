"""The model shapes the decode harness knows by name (bench/configs/) and
what each is run with by default: the positions timed, how many tokens the
CPU executor checks the GPU's logits over (the CPU runs an 8B model at
seconds a token), and whether the check is repeated at the largest
position (the attention over a long cache). A path to any config JSON is a
shape too, named after its file, with the defaults."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
POSITIONS = [1, 512, 4096, 32768]

SHAPES = {
    "llama-3.2-1b": {"config": "llama-3.2-1b-shaped.json"},
    "qwen2.5-1.5b": {"config": "qwen2.5-1.5b-shaped.json"},
    "qwen3-1.7b": {"config": "qwen3-1.7b-shaped.json"},
    "qwen3-0.6b": {"config": "qwen3-0.6b-shaped.json"},
    "smollm2-135m": {"config": "smollm2-135m-shaped.json"},
    "layer-cost-64x256": {"config": "layer-cost-64x256.json"},
    # 16 GB of weights: the compile peaks at ~47 GB and a CPU token takes
    # seconds, so fewer positions and a shorter check.
    "llama-3.1-8b": {"config": "llama-3.1-8b-shaped.json", "positions": [512, 4096],
                     "check_tokens": 2, "long_check": False},
}
DEFAULTS = {"positions": POSITIONS, "check_tokens": 4, "long_check": True}


def resolve(name):
    """(name, settings with the config's absolute path) for a known name or
    a path to a config JSON."""
    if name in SHAPES:
        settings = {**DEFAULTS, **SHAPES[name]}
        settings["config"] = os.path.join(HERE, "configs", settings["config"])
        return name, settings
    if name.endswith(".json") and os.path.exists(name):
        stem = os.path.basename(name)[:-len(".json")]
        return stem.replace("-shaped", ""), {**DEFAULTS, "config": os.path.abspath(name)}
    raise KeyError(f"unknown shape '{name}': one of {', '.join(SHAPES)}, or a config .json")
