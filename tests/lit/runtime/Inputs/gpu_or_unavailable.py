#!/usr/bin/env python3
"""On a machine with a GPU, `mkrun --device gpu` either runs the model, and
then its logits must match the CPU's, or says clearly why it cannot (exit 3:
no kernel in the file, a driver too old, a GPU that cannot run the file).
Anything else fails: above all exit 4, a GPU that is there and failed.

  gpu_or_unavailable.py MKRUN MODEL.mk TOKENS CPU_LOGITS.npy GPU_LOGITS.npy COMPARE_LOGITS.py [MKRUN OPTIONS...]

The options (--start-position P) go to the GPU's mkrun as they went to the CPU's.
"""
import subprocess
import sys

mkrun, model, tokens, cpu_logits, gpu_logits, compare = sys.argv[1:7]
options = sys.argv[7:]
run = subprocess.run([mkrun, model, "--device", "gpu", "--tokens", tokens, "--logits", gpu_logits,
                      *options],
                     capture_output=True, text=True)
sys.stdout.write(run.stdout + run.stderr)
if run.returncode == 3 and "device gpu is unavailable: " in run.stderr:
    print("gpu: unavailable, as stated")
    sys.exit(0)
if run.returncode == 4:
    print("gpu: FAILED: the device failed (exit 4)")
    sys.exit(1)
if run.returncode != 0:
    print(f"gpu: mkrun exited {run.returncode}")
    sys.exit(1)
check = subprocess.run([sys.executable, compare, gpu_logits, cpu_logits, "--rtol", "1e-3"])
print("gpu: ran" if check.returncode == 0 else "gpu: logits differ from the CPU's")
sys.exit(check.returncode)
