"""What the oracle scripts share: mkc's logits for a model and the one
relative error they are judged by."""
import os
import subprocess

import numpy as np

# A prompt of 4 and 8 decode steps.
TOKENS = [1, 7, 42, 3, 99, 5, 11, 64, 2, 17, 33, 8]


def relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def mkc_logits(mkc, model, tokens, folder, extra=(), name="logits"):
    """`mkc eval MODEL --tokens ... --logits` as an array, or None (with the
    tool's output and a FAIL line printed) when it fails."""
    out = os.path.join(folder, f"{name}.npy")
    command = [mkc, "eval", model, "--tokens", tokens, "--logits", out, *extra]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        print(" ".join(["FAIL: mkc eval", *extra, f"exited {run.returncode}"]))
        return None
    return np.load(out)
