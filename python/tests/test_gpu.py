"""On a GPU, the package gives the CPU's tokens, sessions, sampling with
fixed seeds and streaming (cancelled by closing the stream) included. Without
one the test is skipped, saying why; run as a script, it then exits 77,
which ctest shows as skipped."""
import subprocess
import sys
import unittest

import mkrt

import fixture


class GpuTest(unittest.TestCase):
    def test_the_gpu_gives_the_cpus_tokens(self):
        # Needs a GPU (a file without a kernel is refused for lack of one only
        # once a device was found), a kernel (NVRTC at compile time) and a GPU
        # that runs it.
        try:
            mkrt.load(fixture.compile_model("model.mk"), device="gpu")
        except mkrt.NoDeviceError as error:
            if "has no kernel" not in str(error):
                self.skipTest(f"no GPU: {error}")
        path = fixture.workdir() / "kernel.mk"
        result = subprocess.run([fixture.MKC, "compile", str(fixture.FIXTURE), "--emit=mk",
                                 f"--max-context={fixture.MAX_CONTEXT}", "-o", str(path)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            self.skipTest(f"mkc could not compile a kernel: {result.stderr.strip()}")
        try:
            gpu = mkrt.load(path, device="gpu")
        except mkrt.NoDeviceError as error:
            self.skipTest(f"no GPU to run on: {error}")
        cpu = mkrt.load(path, device="cpu")
        prompt = [0, 104, 101, 108, 108, 111]
        self.assertEqual(gpu.generate(prompt, 16), cpu.generate(prompt, 16))
        session = mkrt.Session(gpu)
        reply = session.generate(prompt, 4)
        self.assertEqual(session.generate([33, 34], 6), cpu.generate(prompt + reply + [33, 34], 6))

        # Sampled in the kernel: a seed's tokens are the CPU executor's.
        for settings in ({"temperature": 1.0, "seed": 1}, {"temperature": 0.8, "top_k": 40, "seed": 2},
                         {"top_p": 0.9, "seed": 3}, {"min_p": 0.05, "seed": 4},
                         {"temperature": 0.9, "top_k": 50, "top_p": 0.95,
                          "repetition_penalty": 1.3, "seed": 5}):
            with self.subTest(**settings):
                self.assertEqual(gpu.generate(prompt, 16, **settings),
                                 cpu.generate(prompt, 16, **settings))
        # Streamed out of the running kernel: the same tokens; closing the
        # stream cancels the launch.
        streamed = list(gpu.stream(prompt, 16, temperature=1.0, seed=9))
        self.assertEqual(streamed, cpu.generate(prompt, 16, temperature=1.0, seed=9))
        tokens = gpu._context.stream(object(), prompt, 40)
        first = [next(tokens) for _ in range(3)]
        tokens.close()
        self.assertEqual(first, cpu.generate(prompt, 3))
        self.assertLess(len(gpu._context._fed), len(prompt) + 20)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(77 if result.skipped and len(result.skipped) == result.testsRun else 0)
