"""Bad inputs raise exceptions that name the problem."""
import os
import subprocess
import sys
import unittest

import mkrt

import fixture


class ErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = fixture.compile_model("model.mk")
        cls.model = mkrt.load(cls.path, device="cpu")

    def test_a_missing_file(self):
        with self.assertRaisesRegex(FileNotFoundError, "no such .mk file: '/nonexistent/m.mk'"):
            mkrt.load("/nonexistent/m.mk")

    def test_a_file_that_is_not_a_mk_file(self):
        path = fixture.workdir() / "notes.mk"
        path.write_text("not a model\n" * 20)
        with self.assertRaises(mkrt.InvalidModelError) as caught:
            mkrt.load(path, device="cpu")
        self.assertIn(str(path), str(caught.exception))
        self.assertIn("magic", str(caught.exception))

    def test_an_unknown_device(self):
        with self.assertRaisesRegex(mkrt.InvalidArgumentError,
                                    r"unknown device 'tpu' \(available: auto, cpu, gpu\)"):
            mkrt.load(self.path, device="tpu")

    def test_auto_runs_a_file_without_a_kernel_on_the_cpu(self):
        model = mkrt.load(self.path)  # device="auto"
        self.assertTrue(model.device.startswith("cpu"), model.device)
        with self.assertRaisesRegex(mkrt.NoDeviceError, "device gpu is unavailable"):
            mkrt.load(self.path, device="gpu")

    def test_text_without_a_tokenizer(self):
        model = mkrt.load(fixture.compile_model("bare.mk", tokenizer=False), device="cpu")
        self.assertEqual(model.generate([0, 5], 3), self.model.generate([0, 5], 3))
        with self.assertRaisesRegex(mkrt.NoTokenizerError, "--tokenizer=DIR"):
            model.generate("hello")
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "no chat template"):
            model.chat("hello")

    def test_bad_prompts(self):
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "outside the vocabulary of 256"):
            self.model.generate([0, 256], 2)
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "the prompt is empty"):
            self.model.generate([], 2)
        with self.assertRaisesRegex(TypeError, "holds ints"):
            self.model.generate([0, "a"], 2)
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "stop strings need a text prompt"):
            self.model.generate([0, 5], 2, stop=["x"])
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "max_new_tokens"):
            self.model.generate("hi", 0)
        with self.assertRaisesRegex(TypeError, "'role' and 'content'"):
            self.model.chat([{"text": "hi"}])
        # The model still works after refusals.
        self.assertEqual(self.model.generate([7], 3), fixture.mkrun_tokens(self.path, [7], 3))

    def test_a_closed_model(self):
        with mkrt.load(self.path, device="cpu") as model:
            session = model.session()
            session.generate([0, 5], 2)
        with self.assertRaisesRegex(mkrt.InvalidArgumentError, "the model is closed"):
            session.generate([6], 2)
        model.close()  # twice is harmless

    def test_a_library_that_is_not_there(self):
        env = dict(os.environ, MKRT_LIBRARY="/nonexistent/libmkrt.so")
        result = subprocess.run(
            [sys.executable, "-c", "import mkrt; mkrt.version()"], env=env,
            capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("LibraryNotFoundError: libmkrt.so not found; tried: "
                      "/nonexistent/libmkrt.so ($MKRT_LIBRARY)", result.stderr)

    def test_the_library_is_the_one_asked_for(self):
        if "MKRT_LIBRARY" in os.environ:
            self.assertEqual(mkrt.library_path(), os.environ["MKRT_LIBRARY"])
        self.assertIn("libmkrt", mkrt.version())


if __name__ == "__main__":
    unittest.main()
