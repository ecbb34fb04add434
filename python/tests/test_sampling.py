"""Sampling on the host: a counter-based draw, reproducible by seed, the
distribution it claims, and tokens that are what the step's logits give,
whether the context was kept or fed afresh."""
import unittest

import numpy as np

import mkrt
from mkrt.sampling import Sampler, splitmix64, uniform

import fixture

PROMPT = [0, 104, 101, 108, 108, 111]


class SamplerTest(unittest.TestCase):
    def test_splitmix64_is_the_published_generator(self):
        # SplitMix64 seeded with 0: its first two outputs.
        self.assertEqual(splitmix64(0), 0xE220A8397B1DCDAF)
        self.assertEqual(splitmix64(0x9E3779B97F4A7C15), 0x6E789E6AA1B965F4)
        draws = [uniform(7, step) for step in range(1000)]
        self.assertTrue(all(0 <= u < 1 for u in draws))
        self.assertEqual(draws, [uniform(7, step) for step in range(1000)])
        self.assertAlmostEqual(float(np.mean(draws)), 0.5, delta=0.03)

    def test_draws_follow_the_distribution_they_claim(self):
        logits = [0.0, 1.0, 2.0, 3.0]
        softmax = np.exp(logits) / np.exp(logits).sum()
        n = 20000

        def frequencies(sampler):
            counts = np.bincount([sampler.choose(logits, s) for s in range(n)], minlength=4)
            return counts / n

        np.testing.assert_allclose(frequencies(Sampler(seed=1)), softmax, atol=0.012)
        cold = np.exp(np.array(logits) / 0.5)
        np.testing.assert_allclose(frequencies(Sampler(0.5, seed=2)), cold / cold.sum(),
                                   atol=0.012)
        top2 = frequencies(Sampler(top_k=2, seed=3))
        self.assertEqual(top2[0] + top2[1], 0)
        self.assertAlmostEqual(top2[3], 1 / (1 + np.exp(-1)), delta=0.012)
        # top_p: the fewest tokens reaching it (0.644 alone reaches 0.5).
        self.assertEqual(frequencies(Sampler(top_p=0.5, seed=4))[3], 1.0)
        nucleus = frequencies(Sampler(top_p=0.8, seed=5))
        self.assertEqual(nucleus[0] + nucleus[1], 0)
        self.assertAlmostEqual(nucleus[3], softmax[3] / (softmax[2] + softmax[3]), delta=0.012)

    def test_bad_settings_are_refused(self):
        for settings in ({"temperature": -1}, {"top_k": 0}, {"top_p": 0}, {"top_p": 1.5}):
            with self.subTest(**settings):
                with self.assertRaises(mkrt.InvalidArgumentError):
                    Sampler(**{"temperature": 1.0, **settings})


class SampledGenerationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mkrt.load(fixture.compile_model("model.mk"), device="cpu")

    def test_a_seed_gives_the_same_tokens_and_seeds_differ(self):
        first = self.model.generate(PROMPT, 20, temperature=1.5, seed=11)
        self.assertEqual(first, self.model.generate(PROMPT, 20, temperature=1.5, seed=11))
        others = [self.model.generate(PROMPT, 20, temperature=1.5, seed=s) for s in (12, 13)]
        self.assertTrue(any(o != first for o in others))
        self.assertNotEqual(first, self.model.generate(PROMPT, 20))  # not the greedy run

    def test_each_token_is_the_draw_from_its_steps_fresh_logits(self):
        sampler = Sampler(1.2, top_k=50, top_p=0.95, seed=99)
        tokens = self.model.generate(PROMPT, 12, temperature=1.2, top_k=50, top_p=0.95, seed=99)
        for step, token in enumerate(tokens):
            # A new owner: the whole context fed again, nothing kept.
            row = self.model._context.logits(object(), PROMPT + tokens[:step], 256)
            self.assertEqual(sampler.choose(row, step), token, f"step {step}")

    def test_greedy_settings_give_the_kernels_argmax(self):
        greedy = self.model.generate(PROMPT, 16)
        self.assertEqual(self.model.generate(PROMPT, 16, top_k=1, seed=5), greedy)
        self.assertEqual(self.model.generate(PROMPT, 16, temperature=0, top_k=40), greedy)
        self.assertEqual(self.model.generate(PROMPT, 16, seed=5), greedy)

    def test_streams_and_sessions_sample_the_same(self):
        settings = {"temperature": 1.3, "seed": 21}
        text = self.model.generate("hello", 16, **settings)
        self.assertEqual("".join(self.model.stream("hello", 16, **settings)), text)
        session = mkrt.Session(self.model)
        reply = session.generate(PROMPT, 6, **settings)
        answer = session.generate([32, 119], 6, **settings)
        self.assertEqual(self.model._context.last_fed, 1)  # the cache was kept
        self.assertEqual(answer, self.model.generate(PROMPT + reply + [32, 119], 6, **settings))


if __name__ == "__main__":
    unittest.main()
