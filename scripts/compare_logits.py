#!/usr/bin/env python3
"""Compares logits (float32 .npy, [tokens, vocab]) with reference logits.

  python3 scripts/compare_logits.py mkc.npy reference.npy --rtol 1e-4
  python3 scripts/compare_logits.py gpu.npy hf.npy --rtol 2e-2 --per-step \\
      [--generated 5,9,... --prompt-length 8] [--gap 0.1]

Relative error is max|a - b| / max|b|: relative to the largest reference
logit rather than entry by entry, so that logits near zero do not dominate.
By default over the whole matrix; with --per-step, row by row (every step
must be within --rtol), and the argmax of each row must then match the
reference's wherever the reference's top-2 gap exceeds --gap (random-weight
models have near-ties that either side may break). With --generated (the
tokens a greedy run produced after a prompt of --prompt-length), generated
token i must also be the reference's argmax after token prompt_length - 1 + i
wherever that gap is clear, up to a token that differs where it is not. Exits 1 when a check fails, the shapes differ,
or either file holds a NaN or an infinity.
"""
import argparse
import sys

import numpy as np


def max_relative_error(a, b):
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    # All-zero reference: fall back to the absolute error.
    return diff / scale if scale > 0 else diff


def clear_steps(reference, gap):
    """Rows whose top-2 gap exceeds `gap`: where the argmax is meaningful."""
    steps = []
    for step, row in enumerate(reference):
        top2 = np.sort(row)[-2:]
        if top2[1] - top2[0] > gap:
            steps.append(step)
    return steps


def compare_decode(ours, reference, rtol, gap, generated=(), prompt_length=0):
    """Per-step logits and argmax, and optionally a greedy generation.
    Returns (passed, one-line summary)."""
    errors = [max_relative_error(a, b) for a, b in zip(ours, reference)]
    worst = int(np.argmax(errors))
    clear = clear_steps(reference, gap)
    agree = sum(int(np.argmax(ours[s]) == np.argmax(reference[s])) for s in clear)
    passed = errors[worst] <= rtol and agree == len(clear)
    text = (f"max step error {errors[worst]:.1e} (step {worst}), "
            f"argmax {agree}/{len(clear)} clear steps")
    if len(generated):
        # Judged up to the first token that differs where the reference was
        # not clear: past it the two runs continue different sequences.
        first, judged, same = prompt_length - 1, 0, 0
        for i, token in enumerate(generated):
            expected = int(np.argmax(reference[first + i]))
            if first + i in clear:
                judged += 1
                same += int(token == expected)
            elif token != expected:
                break
        passed = passed and same == judged
        text += f", generated {same}/{judged}"
    return passed, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logits", help="the logits to check (.npy)")
    ap.add_argument("reference", help="the reference logits (.npy)")
    ap.add_argument("--rtol", type=float, default=1e-4, help="largest accepted relative error")
    ap.add_argument("--per-step", action="store_true", help="rtol per row, and argmax per row")
    ap.add_argument("--gap", type=float, default=0.1, help="top-2 gap above which argmax counts")
    ap.add_argument("--generated", help="comma-separated tokens of a greedy run (with --per-step)")
    ap.add_argument("--prompt-length", type=int, default=0, help="its prompt's length")
    a = ap.parse_args()
    got = np.load(a.logits).astype(np.float64)
    want = np.load(a.reference).astype(np.float64)
    if got.shape != want.shape:
        print(f"shape mismatch: {a.logits} is {list(got.shape)}, {a.reference} is {list(want.shape)}")
        return 1
    # NaN compares false against any bound, so it must be refused explicitly.
    for name, x in ((a.logits, got), (a.reference, want)):
        if not np.all(np.isfinite(x)):
            print(f"{name} holds NaN or infinite values")
            return 1
    if a.per_step:
        generated = [int(t) for t in a.generated.split(",")] if a.generated else []
        if generated and not 1 <= a.prompt_length <= len(got) - len(generated) + 1:
            print(f"--prompt-length {a.prompt_length} does not fit {len(got)} rows "
                  f"and {len(generated)} generated tokens")
            return 1
        ok, text = compare_decode(got, want, a.rtol, a.gap, generated, a.prompt_length)
        print(f"{text} over {list(got.shape)} logits ({'within' if ok else 'ABOVE'} rtol {a.rtol:g})")
        return 0 if ok else 1
    err = max_relative_error(got, want)
    ok = err <= a.rtol
    print(f"max relative error {err:.3e} over {list(got.shape)} logits "
          f"({'within' if ok else 'ABOVE'} rtol {a.rtol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
