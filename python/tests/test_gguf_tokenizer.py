"""A GGUF file's byte-level BPE vocabulary becomes the .mk's tokenizer: a
tokenizer trained here with HF `tokenizers` (SmolLM2's pre-tokenizer:
single digits, then GPT-2's byte-level split) is written into a GGUF file of
the qwen2 fixture (300 tokens) the way llama.cpp's converter writes it, and
the tokenizer.json mkc builds from the file must encode and decode every
text as the trained one does. A "llama" (SentencePiece) vocabulary is not
built, with a warning saying so."""
import json
import subprocess
import sys
import unittest

import mkrt
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import fixture

QWEN2 = fixture.ROOT / "tests" / "fixtures" / "qwen2_ts17.onnx"
MAKE_GGUF = fixture.ROOT / "tests" / "tools" / "make_gguf_from_onnx.py"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CORPUS = [
    "The capital of France is Paris. The capital of Italy is Rome.",
    "In 2024 there were 365 days, and 12 months; the year 1999 had them too.",
    "def hello(name):\n    return f'Hello, {name}!'\n",
    "Café, naïve, 日本語, emoji 🙂 and tabs\tand  double  spaces.",
] * 20
TEXTS = [
    "What is the capital of France?",
    "<|im_start|>user\nHi there 12345<|im_end|>\n<|im_start|>assistant\n",
    "  leading spaces, trailing\n\n",
    "Ünïcödé ∑ 日本 🙂 bytes the vocabulary never saw: \x01\x7f",
    "",
]


def trained_tokenizer(vocab_size):
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer


def compile_gguf(gguf, out):
    return subprocess.run([fixture.MKC, "compile", str(gguf), "-o", str(out), "--no-kernel",
                           "--max-context=64"], capture_output=True, text=True, check=True)


class GgufTokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        work = fixture.workdir()
        cls.reference = trained_tokenizer(300)
        reference_json = work / "bpe-tokenizer.json"
        cls.reference.save(str(reference_json))
        gguf = work / "qwen2-bpe.gguf"
        subprocess.run([sys.executable, str(MAKE_GGUF), str(QWEN2), str(gguf),
                        "--bpe-tokenizer", str(reference_json)], check=True)
        cls.compiled = compile_gguf(gguf, work / "qwen2-bpe.mk")
        cls.model = mkrt.load(work / "qwen2-bpe.mk", device="cpu")

    def test_compile_says_where_the_tokenizer_came_from(self):
        self.assertIn("tokenizer from", self.compiled.stderr)
        self.assertIn("300 tokens (byte-level BPE)", self.compiled.stderr)

    def test_the_tokenizer_json_is_what_hf_tokenizers_reads(self):
        document = json.loads(self.model.tokenizer_json)
        self.assertEqual(document["model"]["type"], "BPE")
        self.assertEqual(len(document["model"]["vocab"]), 300)
        added = {t["content"]: t["id"] for t in document["added_tokens"]}
        self.assertEqual(added, {text: i for i, text in enumerate(SPECIAL)})
        Tokenizer.from_str(self.model.tokenizer_json)

    def test_texts_encode_as_the_original_tokenizer_does(self):
        for text in TEXTS:
            with self.subTest(text=text):
                expected = self.reference.encode(text, add_special_tokens=False).ids
                self.assertEqual(self.model.encode(text, add_bos=False), expected)

    def test_tokens_decode_as_the_original_tokenizer_does(self):
        for text in TEXTS:
            with self.subTest(text=text):
                ids = self.reference.encode(text).ids
                self.assertEqual(self.model.tokenizer.decode(ids),
                                 self.reference.decode(ids, skip_special_tokens=True))

    def test_no_bos_is_prepended_when_the_file_says_so(self):
        # add_bos_token false, as in SmolLM2's file: bos_token_id is not added.
        self.assertIsNone(self.model.bos_token)
        self.assertEqual(self.model.encode("Paris"), self.model.encode("Paris", add_bos=False))

    def test_text_generation_runs(self):
        self.assertIsInstance(self.model.generate("The capital of", max_new_tokens=4), str)

    def write_gguf_with(self, name, edit, pre="smollm"):
        """A GGUF file of the trained vocabulary after `edit(tokenizer.json's dict)`."""
        work = fixture.workdir()
        document = json.loads(self.reference.to_str())
        edit(document)
        changed = work / f"{name}.json"
        changed.write_text(json.dumps(document), encoding="utf-8")
        gguf = work / f"{name}.gguf"
        subprocess.run([sys.executable, str(MAKE_GGUF), str(QWEN2), str(gguf),
                        "--bpe-tokenizer", str(changed), "--bpe-pre", pre], check=True)
        return gguf

    def test_a_merge_that_is_not_two_tokens_is_refused(self):
        def glue_first_merge(document):
            merges = document["model"]["merges"]
            merges[0] = "".join(merges[0]) if isinstance(merges[0], list) else merges[0].replace(" ", "")
        gguf = self.write_gguf_with("bad-merge", glue_first_merge)
        run = subprocess.run([fixture.MKC, "compile", str(gguf), "-o",
                              str(fixture.workdir() / "bad-merge.mk"), "--no-kernel"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("tokenizer.ggml.merges", run.stderr)
        self.assertIn("merge 0", run.stderr)
        self.assertIn("is not two tokens separated by a space", run.stderr)

    def test_an_unknown_pre_tokenizer_compiles_without_a_tokenizer(self):
        gguf = self.write_gguf_with("unknown-pre", lambda document: None, pre="unknown-splitter")
        compiled = compile_gguf(gguf, fixture.workdir() / "unknown-pre.mk")
        self.assertIn("warning", compiled.stderr)
        self.assertIn("tokenizer.ggml.pre 'unknown-splitter'", compiled.stderr)

    def test_a_sentencepiece_vocabulary_is_not_built(self):
        work = fixture.workdir()
        gguf = work / "qwen2-llama-vocab.gguf"
        subprocess.run([sys.executable, str(MAKE_GGUF), str(QWEN2), str(gguf)], check=True)
        compiled = compile_gguf(gguf, work / "qwen2-llama-vocab.mk")
        self.assertIn("warning", compiled.stderr)
        self.assertIn("tokenizer.ggml.model 'llama'", compiled.stderr)
        model = mkrt.load(work / "qwen2-llama-vocab.mk", device="cpu")
        self.assertIsNone(model.tokenizer)
        self.assertEqual(len(model.generate([1, 2, 3], max_new_tokens=2)), 2)


if __name__ == "__main__":
    unittest.main()
