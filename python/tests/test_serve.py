"""python -m mkrt.serve, driven by the official openai client on localhost:
the server on the CPU executor (or MKRT_TEST_DEVICE), its answers checked against the package's
own for the same settings. Without aiohttp and openai (scripts/setup.sh
installs them) the test is skipped, saying why; run as a script, it then
exits 77, which ctest shows as skipped."""
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import mkrt

import fixture

MAX_CONTEXT = 2048
# Where the server and the package it is checked against run (the CPU
# executor unless MKRT_TEST_DEVICE says otherwise).
DEVICE = fixture.DEVICE

try:
    import aiohttp  # noqa: F401  (the server's)
    import openai
except ImportError as missing:
    openai = None
    MISSING = missing


class Server:
    """python -m mkrt.serve on a free port, its log lines collected."""

    def __init__(self, path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mkrt.serve", str(path), "--port", "0", "--device", DEVICE],
            stderr=subprocess.PIPE, text=True, env=os.environ)
        self.lines = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_for(r"serving .* on (http://\S+)", timeout=120)
        self.url = re.search(r"(http://\S+)", line).group(1)

    def _read(self):
        for line in self.process.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def wait_for(self, pattern, timeout=60, start=0):
        """The first log line from `start` on that matches `pattern`."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines[start:]:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"no log line like {pattern!r}: {self.lines}")
                self._changed.wait(left)

    def get(self, route):
        with urllib.request.urlopen(self.url.removesuffix("/v1") + route, timeout=30) as reply:
            return reply.status, json.loads(reply.read())

    def post(self, route, data):
        request = urllib.request.Request(self.url.removesuffix("/v1") + route, data=data,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class ServedFixture:
    """A test case's fixture compiled as NAME.mk with OPTIONS, the package's
    model of it, and the server over it with an openai client."""
    NAME, OPTIONS = "serve", ()

    @classmethod
    def setUpClass(cls):
        cls.path = fixture.compile_model(f"{cls.NAME}.mk", *cls.OPTIONS)
        cls.model = mkrt.load(cls.path, device=DEVICE)
        cls.server = Server(cls.path)
        cls.client = openai.OpenAI(base_url=cls.server.url, api_key="unused", max_retries=0,
                                   timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def complete(self, prompt, **options):
        return self.client.completions.create(model=self.NAME, prompt=prompt, **options)


@unittest.skipIf(openai is None, "aiohttp and openai are not installed (scripts/setup.sh)")
class ServeTest(ServedFixture, unittest.TestCase):
    # A longer context than the other tests' fixture, so that a cancelled
    # generation has far to go (2000 tokens take seconds).
    NAME, OPTIONS = "serve", (f"--max-context={MAX_CONTEXT}",)

    def expected_finish(self, tokens, n, **sampling):
        """The package's finish_reason and token count for `tokens`, n new."""
        ids = self.model.generate(tokens, n, **sampling)
        return ("stop" if ids[-1] in self.model.eos_tokens else "length"), len(ids)

    def test_a_completion_is_the_package_s_generation(self):
        answer = self.complete("The cat", max_tokens=12, temperature=0)
        choice = answer.choices[0]
        self.assertEqual(choice.text, self.model.generate("The cat", 12))
        tokens = self.model.encode("The cat")
        finish, produced = self.expected_finish(tokens, 12)
        self.assertEqual(choice.finish_reason, finish)
        self.assertEqual(answer.usage.prompt_tokens, len(tokens))
        self.assertEqual(answer.usage.completion_tokens, produced)
        self.assertEqual(answer.usage.total_tokens, len(tokens) + produced)
        self.assertEqual(answer.object, "text_completion")
        self.assertEqual(answer.model, "serve")
        # A prompt of token ids is continued the same way.
        by_ids = self.complete(tokens, max_tokens=12, temperature=0)
        self.assertEqual(by_ids.choices[0].text, choice.text)

    def test_a_chat_completion_goes_through_the_template(self):
        messages = [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi there"}]
        answer = self.client.chat.completions.create(model="serve", messages=messages,
                                                     max_tokens=10, temperature=0)
        self.assertEqual(answer.object, "chat.completion")
        self.assertEqual(answer.choices[0].message.role, "assistant")
        self.assertEqual(answer.choices[0].message.content, self.model.chat(messages, 10))
        tokens = self.model.encode(self.model.render_chat(messages), add_bos=False)
        self.assertEqual(answer.usage.prompt_tokens, len(tokens))
        finish, produced = self.expected_finish(tokens, 10)
        self.assertEqual(answer.choices[0].finish_reason, finish)
        self.assertEqual(answer.usage.completion_tokens, produced)
        # Content as OpenAI's text parts reads the same.
        parts = [{"role": "user", "content": [{"type": "text", "text": "hi "},
                                              {"type": "text", "text": "there"}]}]
        again = self.client.chat.completions.create(model="serve", messages=parts,
                                                    max_tokens=10, temperature=0)
        self.assertEqual(again.choices[0].message.content,
                         self.model.chat([{"role": "user", "content": "hi there"}], 10))

    def test_streams_concatenate_to_the_whole_answer(self):
        whole = self.complete("hello", max_tokens=20, temperature=0)
        chunks = list(self.complete("hello", max_tokens=20, temperature=0, stream=True,
                                    stream_options={"include_usage": True}))
        self.assertGreater(len(chunks), 2)
        text = "".join(c.choices[0].text for c in chunks if c.choices)
        self.assertEqual(text, whole.choices[0].text)
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
        self.assertEqual(finishes[-1], whole.choices[0].finish_reason)
        self.assertTrue(all(f is None for f in finishes[:-1]))
        self.assertEqual(chunks[-1].usage.completion_tokens, whole.usage.completion_tokens)

        messages = [{"role": "user", "content": "tell me"}]
        whole = self.client.chat.completions.create(model="serve", messages=messages,
                                                    max_tokens=20, temperature=0)
        chunks = list(self.client.chat.completions.create(
            model="serve", messages=messages, max_tokens=20, temperature=0, stream=True))
        self.assertEqual(chunks[0].choices[0].delta.role, "assistant")
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        self.assertEqual(text, whole.choices[0].message.content)
        self.assertEqual(chunks[-1].choices[0].finish_reason, whole.choices[0].finish_reason)
        self.assertTrue(all(c.object == "chat.completion.chunk" for c in chunks))

    def test_a_stop_sequence_ends_the_text_before_it(self):
        full = self.model.generate("The cat", 30)
        stop = full[len(full) // 2:len(full) // 2 + 2]
        expected = full[:full.find(stop)]
        answer = self.complete("The cat", max_tokens=30, temperature=0, stop=stop)
        self.assertEqual(answer.choices[0].text, expected)
        self.assertEqual(answer.choices[0].finish_reason, "stop")
        streamed = list(self.complete("The cat", max_tokens=30, temperature=0,
                                      stop=["\u2603", stop], stream=True))
        self.assertEqual("".join(c.choices[0].text for c in streamed), expected)
        self.assertEqual(streamed[-1].choices[0].finish_reason, "stop")

    def test_max_tokens_ends_with_finish_reason_length(self):
        tokens = self.model.encode("hello")
        finish, produced = self.expected_finish(tokens, 3)
        self.assertEqual((finish, produced), ("length", 3))  # the fixture's greedy text
        answer = self.complete("hello", max_tokens=3, temperature=0)
        self.assertEqual(answer.choices[0].finish_reason, "length")
        self.assertEqual(answer.usage.completion_tokens, 3)

    def test_a_seed_gives_the_same_sampled_text(self):
        # Settings a request leaves out take the file's defaults (top_p here).
        defaults = self.model.sampling_defaults
        options = dict(max_tokens=16, temperature=1.3, seed=11)
        first = self.complete("Once", **options).choices[0].text
        self.assertEqual(self.complete("Once", **options).choices[0].text, first)
        self.assertEqual(first, self.model.generate("Once", 16, temperature=1.3, seed=11,
                                                    top_p=defaults["top_p"]))
        streamed = "".join(c.choices[0].text for c in self.complete("Once", stream=True,
                                                                    **options))
        self.assertEqual(streamed, first)
        # The extensions: top_k, min_p, repetition_penalty.
        extra = {"top_k": 20, "min_p": 0.01, "repetition_penalty": 1.3}
        answer = self.complete("Once", extra_body=extra, **options).choices[0].text
        self.assertEqual(answer, self.model.generate("Once", 16, temperature=1.3, seed=11,
                                                     top_p=defaults["top_p"], **extra))

    def test_concurrent_requests_are_all_answered(self):
        prompts = ["The cat", "hello", "Once upon", "A", "xyz", "dogs and", "1 2 3", "Q:"]
        expected = {p: self.model.generate(p, 24) for p in prompts}

        def ask(i, prompt):
            if i % 2:
                chunks = self.complete(prompt, max_tokens=24, temperature=0, stream=True)
                return prompt, "".join(c.choices[0].text for c in chunks)
            return prompt, self.complete(prompt, max_tokens=24, temperature=0).choices[0].text

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(ask, range(len(prompts)), prompts))
        self.assertEqual(dict(answers), expected)

    def test_a_closed_stream_cancels_its_generation(self):
        start = len(self.server.lines)
        self.assertEqual(self.expected_finish(self.model.encode("hello"), 2000), ("length", 2000))
        chunks = self.complete("hello", max_tokens=2000, temperature=0, stream=True)
        first = next(iter(chunks))
        self.assertIsNotNone(first.choices[0].text)
        chunks.close()
        line = self.server.wait_for(r"cancelled after (\d+) of 2000 tokens", start=start)
        produced = int(re.search(r"after (\d+) of", line).group(1))
        self.assertLess(produced, 1000)
        self.assertEqual(self.server.get("/health"), (200, {"status": "ok", "waiting": 0, "generating": 0}))
        answer = self.complete("The cat", max_tokens=12, temperature=0)
        self.assertEqual(answer.choices[0].text, self.model.generate("The cat", 12))

    def test_a_request_given_up_while_waiting_is_skipped(self):
        start = len(self.server.lines)
        # Greedy "hello" meets no EOS (the closed stream's test): it runs
        # until closed, long after the impatient request behind it gave up.
        long = self.complete("hello", max_tokens=2000, temperature=0, stream=True)
        next(iter(long))
        impatient = self.client.with_options(timeout=0.2)
        with self.assertRaises(openai.APITimeoutError):
            impatient.completions.create(model="serve", prompt="The cat", max_tokens=8)
        long.close()
        self.server.wait_for(r"cancelled after \d+ of 2000 tokens", start=start)
        self.server.wait_for(r"completion cancelled while waiting", start=start)
        self.assertEqual(self.complete("hello", max_tokens=8, temperature=0).choices[0].text,
                         self.model.generate("hello", 8))

    def test_a_file_without_a_tokenizer_is_refused_at_start(self):
        path = fixture.compile_model("no-tokenizer.mk", tokenizer=False)
        result = subprocess.run([sys.executable, "-m", "mkrt.serve", str(path), "--port", "0",
                                 "--device", "cpu"], capture_output=True, text=True,
                                env=os.environ, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("has no tokenizer, which the server needs", result.stderr)

    def test_models_and_health(self):
        models = self.client.models.list()
        self.assertEqual([m.id for m in models.data], ["serve"])
        status, health = self.server.get("/health")
        self.assertEqual((status, health["status"]), (200, "ok"))

    def test_bad_requests_are_400_naming_the_problem(self):
        cases = [
            (dict(prompt="hi", temperature=-1), "temperature"),
            (dict(prompt="hi", top_p=1.5), "top_p"),
            (dict(prompt="hi", extra_body={"top_k": 5000}), "top_k"),
            (dict(prompt="hi", extra_body={"repetition_penalty": 0}), "repetition_penalty"),
            (dict(prompt="hi", extra_body={"temperature": "hot"}), "temperature"),
            (dict(prompt="hi", max_tokens=0), "max_tokens"),
            (dict(prompt="hi", extra_body={"max_tokens": "many"}), "max_tokens"),
            (dict(prompt="hi", max_tokens=5000), "max context"),
            (dict(prompt="hi", stop=[""]), "stop"),
            (dict(prompt="hi", n=2), "'n'"),
            (dict(prompt=""), "prompt"),
            (dict(prompt=[1, 2, 9999]), "vocabulary"),
            (dict(prompt="hi", stream=True, top_p=0), "top_p"),
        ]
        for options, named in cases:
            with self.subTest(options=options):
                with self.assertRaises(openai.BadRequestError) as caught:
                    self.complete(**options)
                self.assertEqual(caught.exception.status_code, 400)
                error = caught.exception.body
                self.assertIn(named, error["message"])
                self.assertEqual(error["type"], "invalid_request_error")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model="serve", messages=[{"role": "wizard",
                                                                          "content": "hi"}])
        self.assertIn("role", caught.exception.body["message"])
        status, body = self.server.post("/v1/completions", b"{not json")
        self.assertEqual(status, 400)
        self.assertIn("not JSON", body["error"]["message"])
        status, body = self.server.post("/v1/nothing", b"{}")
        self.assertEqual(status, 404)
        self.assertIn("message", body["error"])
        # The server goes on.
        self.assertEqual(self.complete("hi", max_tokens=4, temperature=0).choices[0].text,
                         self.model.generate("hi", 4))


@unittest.skipIf(openai is None, "aiohttp and openai are not installed (scripts/setup.sh)")
class BatchServeTest(ServedFixture, unittest.TestCase):
    """A file with a batch of 4 (`mkc compile --batch=4`): requests that wait
    together and are answered whole share one batch launch, each getting
    what it gets alone; streamed ones, and other sampling settings, do not
    join it."""

    # A stream that holds the model until the test closes it, however slow
    # the machine is at queueing the others: a long context, and an EOS
    # token (255) that greedy "hello" does not meet in 16000 tokens.
    HOLD_CONTEXT, HOLD_TOKENS = 16384, 16000
    NAME, OPTIONS = "serve-batch", (f"--max-context={HOLD_CONTEXT}", "--batch=4", "--eos=255")

    def test_the_file_names_its_batches(self):
        self.assertEqual(self.model.batch_sizes, (4,))
        plain = mkrt.load(fixture.compile_model("serve.mk", f"--max-context={MAX_CONTEXT}"),
                          device=DEVICE)
        self.assertEqual(plain.batch_sizes, ())
        self.server.wait_for(r"up to 4 waiting requests answered whole share a batch launch")

    def test_waiting_requests_share_a_batch_and_get_their_own_answers(self):
        start = len(self.server.lines)
        long = self.complete("hello", max_tokens=self.HOLD_TOKENS, temperature=0, stream=True)
        next(iter(long))
        full = self.model.generate("The cat", 30)
        stop = full[len(full) // 2:len(full) // 2 + 2]
        asks = [("The cat", dict(max_tokens=30, stop=stop)), ("Once upon", dict(max_tokens=12)),
                ("A", dict(max_tokens=20)), ("dogs and", dict(max_tokens=7)),
                ("Q:", dict(max_tokens=16, temperature=1.3, seed=11, top_p=1.0))]
        expected = []
        for prompt, options in asks:
            sampling = {k: options[k] for k in ("temperature", "seed", "top_p") if k in options}
            tokens = self.model.encode(prompt)
            text = self.model.generate(prompt, options["max_tokens"], stop=options.get("stop"),
                                       **sampling)
            ids = self.model.generate(tokens, options["max_tokens"], **sampling)
            expected.append((text, ids))
        with ThreadPoolExecutor(len(asks)) as pool:
            futures = [pool.submit(self.complete, prompt, **{"temperature": 0, **options})
                       for prompt, options in asks]
            deadline = time.monotonic() + 60
            while self.server.get("/health")[1]["waiting"] < len(asks):
                self.assertLess(time.monotonic(), deadline, "the requests never all waited")
                time.sleep(0.05)
            long.close()
            self.server.wait_for(rf"cancelled after \d+ of {self.HOLD_TOKENS} tokens", start=start)
            answers = [future.result() for future in futures]
        # Four greedy requests in one launch; the sampled one alone.
        self.server.wait_for(r"batch of 4: \d+ tokens", start=start)
        self.assertEqual(len([l for l in self.server.lines[start:] if "in a batch of 4" in l]), 4)
        for (prompt, options), answer, (text, ids) in zip(asks, answers, expected):
            with self.subTest(prompt=prompt):
                choice = answer.choices[0]
                self.assertEqual(choice.text, text)
                if "stop" in options:
                    self.assertEqual(choice.finish_reason, "stop")
                else:
                    self.assertEqual(choice.finish_reason,
                                     "stop" if ids[-1] in self.model.eos_tokens else "length")
                    self.assertEqual(answer.usage.completion_tokens, len(ids))
        self.assertEqual(self.server.get("/health"),
                         (200, {"status": "ok", "waiting": 0, "generating": 0}))


if __name__ == "__main__":
    if openai is None:
        print(f"skipped: {MISSING} (scripts/setup.sh installs the server's packages)")
        sys.exit(77)
    unittest.main()
