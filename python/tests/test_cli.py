"""python -m mkrt generate and chat print what the API gives."""
import os
import subprocess
import sys
import unittest

import mkrt

import fixture


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "mkrt", *args], input=stdin,
                          capture_output=True, text=True, env=os.environ)


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = str(fixture.compile_model("model.mk"))
        cls.model = mkrt.load(cls.path, device="cpu")

    def test_generate_prints_the_text(self):
        result = run("generate", self.path, "The cat", "-n", "12", "--device", "cpu")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, self.model.generate("The cat", 12) + "\n")
        result = run("generate", self.path, "hello", "-n", "20", "--device", "cpu",
                     "--stop", "2")
        self.assertEqual(result.stdout, self.model.generate("hello", 20, stop=["2"]) + "\n")

    def test_generate_samples_when_asked(self):
        result = run("generate", self.path, "The cat", "-n", "12", "--device", "cpu",
                     "--temperature", "1.4", "--top-k", "30", "--seed", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, self.model.generate("The cat", 12, temperature=1.4,
                                                            top_k=30, seed=3) + "\n")

    def test_chat_keeps_the_conversation(self):
        result = run("chat", self.path, "-n", "4", "--device", "cpu",
                     stdin="hi there\n\nand then?\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        session = self.model.session()
        expected = [session.chat("hi there", 4), session.chat("and then?", 4)]
        self.assertEqual(result.stdout, "".join(reply + "\n" for reply in expected))

    def test_errors_name_the_problem(self):
        result = run("generate", "/nonexistent/m.mk", "hi")
        self.assertEqual(result.returncode, 2)
        self.assertIn("mkrt: error: no such .mk file: '/nonexistent/m.mk'", result.stderr)
        result = run("generate", self.path, "hi", "-n", "500", "--device", "cpu")
        self.assertEqual(result.returncode, 2)
        self.assertIn("pass the max context of 96", result.stderr)
        result = run("chat", self.path, "-n", "90", "--device", "cpu", stdin="hi\nhi\n")
        self.assertEqual(result.returncode, 0)
        self.assertIn("pass the max context", result.stderr)


if __name__ == "__main__":
    unittest.main()
