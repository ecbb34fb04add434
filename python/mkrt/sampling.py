"""Sampling on the host, from each step's logits (mkrt_continue_logits):
temperature, top-k, top-p, seeded. The kernel samples nothing yet (it runs
the argmax), so a sampled generation pays one libmkrt call and one row of
logits copied per token; greedy generation never comes here.

The draw is reproducible: step s of a generation with seed S takes the
uniform number splitmix64(splitmix64(S) + s), a counter-based generator
(no state carried between steps), so the same seed gives the same tokens
on any device and whatever ran in between."""
import os

import numpy as np

from .errors import InvalidArgumentError

_MASK = (1 << 64) - 1


def splitmix64(x):
    """Steele, Lea and Flood's SplitMix64 finalizer of x + the golden gamma."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def uniform(seed, step):
    """A number in [0, 1) for (seed, step): the top 53 bits of a draw."""
    return (splitmix64((splitmix64(seed & _MASK) + step) & _MASK) >> 11) * (1.0 / (1 << 53))


class Sampler:
    """Picks a token from a row of logits: divided by the temperature, cut to
    the top_k most likely, then to the fewest whose probabilities reach
    top_p, renormalized, and drawn with uniform(seed, step)."""

    def __init__(self, temperature=1.0, top_k=None, top_p=None, seed=None):
        if not temperature > 0:
            raise InvalidArgumentError(f"temperature must be > 0 to sample, got {temperature}")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or
                                  top_k < 1):
            raise InvalidArgumentError(f"top_k must be a positive integer, got {top_k!r}")
        if top_p is not None and not 0 < top_p <= 1:
            raise InvalidArgumentError(f"top_p must be in (0, 1], got {top_p}")
        self.temperature = float(temperature)
        self.top_k = top_k
        self.top_p = top_p
        # No seed: a fresh one, so that unseeded runs differ.
        self.seed = int.from_bytes(os.urandom(8), "little") if seed is None else int(seed)

    def probabilities(self, logits):
        """(token ids, their probabilities), most likely first (ties: the
        lower id first), after temperature, top-k and top-p."""
        z = np.asarray(logits, dtype=np.float64) / self.temperature
        order = np.argsort(-z, kind="stable")
        if self.top_k is not None:
            order = order[:self.top_k]
        p = np.exp(z[order] - z[order[0]])
        p /= p.sum()
        if self.top_p is not None and self.top_p < 1:
            # The fewest tokens whose probabilities sum to top_p or more.
            keep = int(np.searchsorted(np.cumsum(p), self.top_p)) + 1
            order, p = order[:keep], p[:keep] / p[:keep].sum()
        return order, p

    def choose(self, logits, step):
        order, p = self.probabilities(logits)
        u = uniform(self.seed, step)
        index = int(np.searchsorted(np.cumsum(p), u, side="right"))
        return int(order[min(index, len(order) - 1)])


def sampler_for(temperature, top_k, top_p, seed):
    """None for greedy (no temperature, top_k nor top_p, or temperature 0),
    else the Sampler; temperature defaults to 1 when only top_k or top_p is
    given. A seed alone changes nothing: greedy draws nothing."""
    if temperature == 0 or (temperature is None and top_k is None and top_p is None):
        return None
    return Sampler(1.0 if temperature is None else temperature, top_k, top_p, seed)
