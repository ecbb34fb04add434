#!/usr/bin/env python3
"""Compares logits (float32 .npy, [tokens, vocab]) with reference logits.

  python3 scripts/compare_logits.py mkc.npy reference.npy --rtol 1e-4

Prints the max relative error, max|a - b| / max|b|: relative to the largest
reference logit rather than entry by entry, so that logits near zero do not
dominate. Exits 1 when it is above --rtol, when the shapes differ, or when
either file holds a NaN or an infinity.
"""
import argparse
import sys

import numpy as np


def max_relative_error(a, b):
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    # All-zero reference: fall back to the absolute error.
    return diff / scale if scale > 0 else diff


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logits", help="the logits to check (.npy)")
    ap.add_argument("reference", help="the reference logits (.npy)")
    ap.add_argument("--rtol", type=float, default=1e-4, help="largest accepted max relative error")
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
    err = max_relative_error(got, want)
    ok = err <= a.rtol
    print(f"max relative error {err:.3e} over {list(got.shape)} logits "
          f"({'within' if ok else 'ABOVE'} rtol {a.rtol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
