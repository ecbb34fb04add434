"""Sampling settings for libmkrt: the kernel picks every token itself
(greedy, temperature, top-k, top-p, min-p, repetition penalty, seeded; the
rules are core/protocol/Sampling.h's), so a sampled generation is one
libmkrt call like a greedy one, and the same seed gives the same tokens on
the GPU and the CPU. This module only turns keyword arguments into the C
API's mkrt_sampling; libmkrt checks the ranges and names a bad one."""
import ctypes
import os

from .errors import InvalidArgumentError

NAMES = ("temperature", "top_k", "top_p", "min_p", "repetition_penalty", "seed")


class Sampling(ctypes.Structure):
    """mkrt.h's mkrt_sampling."""
    _fields_ = [
        ("temperature", ctypes.c_double), ("top_k", ctypes.c_int64),
        ("top_p", ctypes.c_double), ("min_p", ctypes.c_double),
        ("repetition_penalty", ctypes.c_double), ("seed", ctypes.c_uint64),
    ]

    def __repr__(self):
        return "Sampling(" + ", ".join(f"{n}={getattr(self, n)}" for n in NAMES) + ")"


def settings_for(temperature=None, top_k=None, top_p=None, min_p=None,
                 repetition_penalty=None, seed=None):
    """The mkrt_sampling for these keyword arguments (None: left at its
    default). Greedy unless temperature (> 0), top_k, top_p or min_p ask for
    sampling; temperature is 1 when only those are given, and 0 is greedy
    whatever else is given (the repetition penalty still applies). No seed:
    a fresh one, so that unseeded runs differ."""
    for name, value in (("top_k", top_k), ("seed", seed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidArgumentError(f"{name} must be an integer, got {value!r}")
    for name, value in (("temperature", temperature), ("top_p", top_p), ("min_p", min_p),
                        ("repetition_penalty", repetition_penalty)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float))):
            raise InvalidArgumentError(f"{name} must be a number, got {value!r}")
    s = Sampling(0.0, 0, 1.0, 0.0, 1.0, 0)
    samples = temperature != 0 and (temperature is not None or top_k is not None or
                                    top_p is not None or min_p is not None)
    if samples:
        s.temperature = 1.0 if temperature is None else float(temperature)
    elif temperature is not None and temperature < 0:
        s.temperature = float(temperature)  # refused by libmkrt, naming it
    if top_k is not None:
        s.top_k = top_k
    if top_p is not None:
        s.top_p = float(top_p)
    if min_p is not None:
        s.min_p = float(min_p)
    if repetition_penalty is not None:
        s.repetition_penalty = float(repetition_penalty)
    if seed is not None:
        s.seed = seed & ((1 << 64) - 1)
    elif samples:
        s.seed = int.from_bytes(os.urandom(8), "little")
    return s


def is_greedy(s):
    return s.temperature == 0 or s.top_k == 1
