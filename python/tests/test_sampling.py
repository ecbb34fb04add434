"""Sampling in the kernel: reproducible by seed, greedy when it should be,
every token within what its step's filters keep (checked against numpy on
the step's logits), the same streamed or not and in a session or afresh;
bad settings refused by name; and streaming through libmkrt's callback,
cancelled by closing the stream."""
import unittest

import numpy as np

import mkrt
from mkrt.sampling import settings_for

import fixture

PROMPT = [0, 104, 101, 108, 108, 111]


class SettingsTest(unittest.TestCase):
    def test_keyword_arguments_become_the_c_settings(self):
        greedy = settings_for()
        self.assertEqual((greedy.temperature, greedy.top_k, greedy.top_p, greedy.min_p,
                          greedy.repetition_penalty), (0.0, 0, 1.0, 0.0, 1.0))
        top_k = settings_for(top_k=5, seed=3)
        self.assertEqual((top_k.temperature, top_k.top_k, top_k.seed), (1.0, 5, 3))
        self.assertEqual(settings_for(temperature=0, top_k=5).temperature, 0.0)
        self.assertNotEqual(settings_for(temperature=1.0).seed, settings_for(temperature=1.0).seed)
        with self.assertRaises(mkrt.InvalidArgumentError):
            settings_for(top_k=2.5)


class SampledGenerationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mkrt.load(fixture.compile_model("model.mk"), device="cpu")

    def logits_after(self, context):
        # A new owner: the whole context fed again, nothing kept.
        return self.model._context.logits(object(), list(context), self.model.vocab)

    def test_a_seed_gives_the_same_tokens_and_seeds_differ(self):
        first = self.model.generate(PROMPT, 20, temperature=1.5, seed=11)
        self.assertEqual(first, self.model.generate(PROMPT, 20, temperature=1.5, seed=11))
        others = [self.model.generate(PROMPT, 20, temperature=1.5, seed=s) for s in (12, 13)]
        self.assertTrue(any(o != first for o in others))
        self.assertNotEqual(first, self.model.generate(PROMPT, 20))  # not the greedy run

    def test_greedy_settings_give_the_argmax(self):
        greedy = self.model.generate(PROMPT, 16)
        self.assertEqual(self.model.generate(PROMPT, 16, top_k=1, seed=5), greedy)
        self.assertEqual(self.model.generate(PROMPT, 16, temperature=0, top_k=40), greedy)
        self.assertEqual(self.model.generate(PROMPT, 16, seed=5), greedy)
        self.assertEqual(self.model.generate(PROMPT, 16, temperature=1e-4, seed=5), greedy)
        for step, token in enumerate(greedy):
            row = self.logits_after(PROMPT + greedy[:step])
            self.assertEqual(int(np.argmax(row)), token)

    def test_each_token_is_within_what_its_filters_keep(self):
        for settings in ({"temperature": 1.2, "top_k": 5}, {"temperature": 0.9, "top_p": 0.6},
                         {"temperature": 1.0, "min_p": 0.3},
                         {"temperature": 1.0, "top_k": 8, "repetition_penalty": 1.8}):
            with self.subTest(**settings):
                for seed in (1, 2):
                    tokens = self.model.generate(PROMPT, 10, seed=seed, **settings)
                    for step, token in enumerate(tokens):
                        context = PROMPT + tokens[:step]
                        z = self.logits_after(context).astype(np.float64)
                        penalty = settings.get("repetition_penalty", 1.0)
                        for seen in set(context):  # HF: each distinct token once
                            z[seen] = z[seen] / penalty if z[seen] > 0 else z[seen] * penalty
                        order = np.argsort(-z, kind="stable")
                        w = np.exp((z[order] - z[order[0]]) / settings["temperature"])
                        keep = len(order)
                        if "top_k" in settings:
                            keep = settings["top_k"]
                        if "top_p" in settings:
                            reach = np.cumsum(w) >= settings["top_p"] * w.sum() * (1 - 1e-6)
                            keep = min(keep, int(np.argmax(reach)) + 1)
                        kept = [t for t, wt in zip(order[:keep], w[:keep])
                                if wt >= settings.get("min_p", 0) * (1 - 1e-6)]
                        self.assertIn(token, kept, f"step {step}")

    def test_a_tiny_vocabulary_of_draws_follows_the_softmax(self):
        # The first new token over many seeds: its frequencies against the
        # softmax of the prompt's last logits at temperature 2, top-k 4.
        z = self.logits_after(PROMPT).astype(np.float64)
        order = np.argsort(-z, kind="stable")[:4]
        p = np.exp((z[order] - z[order[0]]) / 2.0)
        p /= p.sum()
        n = 400
        counts = {int(t): 0 for t in order}
        for seed in range(n):
            token = self.model.generate(PROMPT, 1, temperature=2.0, top_k=4, seed=seed)[0]
            counts[token] += 1
        for t, expected in zip(order, p):
            self.assertAlmostEqual(counts[int(t)] / n, expected, delta=0.08)

    def test_streams_and_sessions_sample_the_same(self):
        settings = {"temperature": 1.3, "seed": 21, "repetition_penalty": 1.2}
        text = self.model.generate("hello", 16, **settings)
        self.assertEqual("".join(self.model.stream("hello", 16, **settings)), text)
        session = mkrt.Session(self.model)
        reply = session.generate(PROMPT, 6, **settings)
        answer = session.generate([32, 119], 6, **settings)
        self.assertEqual(self.model._context.last_fed, 3)  # the reply's last token and the turn
        self.assertEqual(answer, self.model.generate(PROMPT + reply + [32, 119], 6, **settings))

    def test_bad_settings_are_refused_by_name(self):
        for settings, name in (({"temperature": -1}, "temperature"), ({"top_k": -1}, "top_k"),
                               ({"top_k": 5000}, "top_k"), ({"top_p": 0}, "top_p"),
                               ({"top_p": 1.5}, "top_p"), ({"min_p": 2}, "min_p"),
                               ({"repetition_penalty": 0}, "repetition_penalty")):
            with self.subTest(**settings):
                with self.assertRaisesRegex(mkrt.InvalidArgumentError, name):
                    self.model.generate(PROMPT, 4, **settings)
        self.assertEqual(len(self.model.generate(PROMPT, 4)), 4)  # still usable


class StreamingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mkrt.load(fixture.compile_model("model.mk"), device="cpu")

    def test_the_callback_sees_each_token_and_can_stop(self):
        whole = self.model.generate(PROMPT, 12)
        seen = []

        def on_token(token):
            seen.append(token)
            return len(seen) == 5

        out = self.model._context.extend(object(), PROMPT, 12, None, on_token)
        self.assertEqual(seen, whole[:5])
        self.assertEqual(out, whole[:5])

    def test_closing_a_stream_cancels_the_generation(self):
        owner = object()
        tokens = self.model._context.stream(owner, PROMPT, 80)
        first = [next(tokens), next(tokens)]
        tokens.close()
        self.assertEqual(first, self.model.generate(PROMPT, 2))
        # The kept context ends a token or so after where the consumer stopped.
        self.assertLess(len(self.model._context._fed), len(PROMPT) + 10)

    def test_a_stream_refuses_its_own_consumer_instead_of_hanging(self):
        pieces = self.model.stream(PROMPT, 8)
        next(pieces)
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "streaming on this thread"):
            self.model.generate(PROMPT, 2)
        rest = list(pieces)
        self.assertEqual(len(rest), 7)
        self.assertEqual(len(self.model.generate(PROMPT, 2)), 2)


if __name__ == "__main__":
    unittest.main()
