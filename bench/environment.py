"""What a benchmark ran on, for the results' README: the GPU and its driver
(nvidia-smi), the CUDA toolkit (nvcc), torch, transformers and the CUDA
torch was built with (asked of the Python that runs the baselines, so that
the harness itself never imports torch), and mkc's version. Anything that
cannot be asked is recorded as why not, never raised."""
import json
import platform
import subprocess
import sys
import time


def _ask(command, timeout=120):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"{command[0]}: {error}"
    if done.returncode != 0:
        return None, f"{command[0]} exited {done.returncode}: {(done.stderr or done.stdout)[-200:]}"
    return done.stdout.strip(), None


def gpus():
    out, why = _ask(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                     "--format=csv,noheader"])
    if out is None:
        return {"error": why}
    rows = [[part.strip() for part in line.split(",")] for line in out.splitlines() if line.strip()]
    return {"gpus": [{"name": r[0], "driver": r[1], "memory": r[2]} for r in rows if len(r) >= 3]}


def python_packages(python=sys.executable):
    code = ("import json, torch, transformers; print(json.dumps({'torch': torch.__version__, "
            "'transformers': transformers.__version__, 'torch_cuda': torch.version.cuda}))")
    out, why = _ask([python, "-c", code])
    return json.loads(out.splitlines()[-1]) if out else {"error": why}


def nvcc():
    out, why = _ask(["nvcc", "--version"])
    return out.splitlines()[-1] if out else why


def tool_version(binary):
    out, why = _ask([binary, "--version"])
    return out.splitlines()[0] if out else why


def describe(mkc=None, python=sys.executable, with_torch=True):
    facts = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host": platform.node(),
             "python": platform.python_version(), "nvcc": nvcc(), **gpus()}
    if with_torch:
        facts.update(python_packages(python))
    if mkc:
        facts["mkc"] = tool_version(mkc)
    return facts
