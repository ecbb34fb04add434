"""Generation through the package equals mkrun's, text round-trips, EOS and
stop strings end it, and streamed pieces make the same text."""
import unittest

import mkrt
from mkrt.text import TextAssembler

import fixture

PROMPTS = ["hello", "The cat", "ab", "xyz 12", "Once upon", "Zebra!"]


class GenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = fixture.compile_model("model.mk")
        cls.model = mkrt.load(cls.path, device="cpu")

    def test_the_file_says_its_tokenizer_bos_and_eos(self):
        self.assertEqual(self.model.vocab, 256)
        self.assertEqual(self.model.eos_tokens, (1, 2))
        self.assertEqual(self.model.bos_token, 0)
        self.assertTrue(self.model.chat_template.startswith("{{ bos_token }}"))
        self.assertAlmostEqual(self.model.sampling_defaults["temperature"], 0.7, places=5)
        self.assertTrue(self.model.device.startswith("cpu"))

    def test_ids_give_what_mkrun_gives(self):
        for prompt in ([0, 104, 101, 108, 108, 111], [7], [0, 90, 90, 33, 200]):
            with self.subTest(prompt=prompt):
                self.assertEqual(self.model.generate(prompt, max_new_tokens=24),
                                 fixture.mkrun_tokens(self.path, prompt, 24))

    def test_prompt_by_step_is_taken_and_changes_nothing_on_the_cpu(self):
        by_step = mkrt.load(self.path, device="cpu", prompt_by_step=True)
        prompt = list(range(3, 43))  # past the GPU's 32 tokens, which the CPU ignores
        self.assertEqual(by_step.generate(prompt, max_new_tokens=8),
                         self.model.generate(prompt, max_new_tokens=8))
        by_step.close()

    def test_text_round_trips_through_the_tokenizer(self):
        text = "héllo, wörld € 日本 <|im_end|>!"
        ids = self.model.encode(text)
        self.assertEqual(ids[0], 0)  # the file's BOS
        self.assertIn(2, ids)        # the special token, one id
        self.assertEqual(self.model.encode(text, add_bos=False), ids[1:])
        self.assertEqual(self.model.tokenizer.decode(ids[1:]), text.replace("<|im_end|>", ""))
        self.assertEqual(self.model.tokenizer._tokenizer.decode(ids, skip_special_tokens=False),
                         "<s>" + text)

    def test_text_is_the_decoded_ids_without_the_eos(self):
        for prompt in PROMPTS:
            with self.subTest(prompt=prompt):
                ids = self.model.generate(self.model.encode(prompt), max_new_tokens=20)
                if ids and ids[-1] in self.model.eos_tokens:
                    ids = ids[:-1]
                self.assertEqual(self.model.generate(prompt, max_new_tokens=20),
                                 self.model.decode(ids))

    def test_generation_stops_at_the_files_eos(self):
        # "xyz 12" reaches EOS 1 within a few tokens on this fixture.
        ids = self.model.generate(self.model.encode("xyz 12"), max_new_tokens=20)
        self.assertIn(ids[-1], (1, 2))
        self.assertLess(len(ids), 20)
        # A file whose EOS is a token the model generates stops there.
        prompt = [0, 104, 101, 108, 108, 111]
        free = fixture.mkrun_tokens(self.path, prompt, 12)
        eos = free[4]
        first = free.index(eos)
        model = mkrt.load(fixture.compile_model(f"eos{eos}.mk", f"--eos={eos}"), device="cpu")
        self.assertEqual(model.eos_tokens, (eos,))
        self.assertEqual(model.generate(prompt, max_new_tokens=12), free[:first + 1])
        self.assertEqual(list(model.stream(prompt, max_new_tokens=12)), free[:first + 1])
        text = model.generate(model.decode(prompt), max_new_tokens=12)
        self.assertEqual(text, model.decode(free[:first]))

    def test_a_stop_string_ends_the_text_before_it(self):
        tried = 0
        for prompt in PROMPTS:
            whole = self.model.generate(prompt, max_new_tokens=24)
            # Two characters of the text, the later half's first that are
            # whole characters (not a replacement for stray bytes).
            starts = [i for i in range(len(whole) // 2, len(whole) - 1)
                      if "\ufffd" not in whole[i:i + 2]]
            if not starts:
                continue
            stop = whole[starts[0]:starts[0] + 2]
            tried += 1
            with self.subTest(prompt=prompt, stop=stop):
                expected = whole[:whole.find(stop)]
                self.assertLess(len(expected), len(whole))
                self.assertEqual(self.model.generate(prompt, 24, stop=[stop]), expected)
                self.assertEqual("".join(self.model.stream(prompt, 24, stop=["@@", stop])),
                                 expected)
        self.assertGreaterEqual(tried, 3)
        # A stop string at the very start leaves nothing.
        self.assertEqual(self.model.generate("hello", 24, stop=self.model.generate("hello", 2)),
                         "")

    def test_streamed_pieces_concatenate_to_the_text(self):
        for prompt in PROMPTS:
            with self.subTest(prompt=prompt):
                pieces = list(self.model.stream(prompt, max_new_tokens=30))
                self.assertEqual("".join(pieces), self.model.generate(prompt, max_new_tokens=30))
                self.assertTrue(all(pieces))
                ids = self.model.encode(prompt)
                self.assertEqual(list(self.model.generate(ids, 30, stream=True)),
                                 self.model.generate(ids, 30))

    def test_a_character_of_several_bytes_comes_whole(self):
        text = "aé€日b"
        tokenizer = self.model.tokenizer
        assembler = TextAssembler(tokenizer.decode)
        pieces = [assembler.push(t) for t in tokenizer.encode(text, add_bos=False)]
        pieces.append(assembler.finish())
        self.assertEqual([p for p in pieces if p], ["a", "é", "€", "日", "b"])
        # A stop string's beginning is held back until it is known not to stop.
        assembler = TextAssembler(tokenizer.decode, stop=["€x"])
        pieces = [assembler.push(t) for t in tokenizer.encode("aé€日b", add_bos=False)]
        self.assertEqual("".join(pieces) + assembler.finish(), text)
        self.assertEqual(pieces[-4:-2], ["", ""])  # € arrived whole but was held

    def test_a_batch_gives_each_prompt_what_it_gets_alone(self):
        batched = mkrt.load(fixture.compile_model("batch.mk", "--batch=4", "--prefill-chunk=8"),
                            device="cpu")
        prompts = ["hello", [0, 90, 90, 33, 200], "Once upon"]
        results = batched.generate_batch(prompts, max_new_tokens=16)
        self.assertEqual(results, [self.model.generate(p, max_new_tokens=16) for p in prompts])
        sampled = batched.generate_batch(prompts, 16, temperature=0.9, seed=5)
        self.assertEqual(sampled, [self.model.generate(p, 16, temperature=0.9, seed=5)
                                   for p in prompts])
        # The prefill chunk of the same file changes no token.
        self.assertEqual(batched.generate("The cat", 20), self.model.generate("The cat", 20))
        with self.assertRaises(mkrt.UnsupportedError):
            batched.generate_batch(["a"] * 5, 4)
        with self.assertRaises(mkrt.UnsupportedError):
            self.model.generate_batch(["a", "b"], 4)


if __name__ == "__main__":
    unittest.main()
