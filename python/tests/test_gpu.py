"""On a GPU, the package gives the CPU's tokens, sessions included. Without
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


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(77 if result.skipped and len(result.skipped) == result.testsRun else 0)
