#!/usr/bin/env python3
"""Where this Python's cuDNN is, for libmkrt's prompts' attention by cuDNN
(runtime/gpu/CudnnAttention.h, MKRT_PREFILL_ATTENTION=cudnn).

libmkrt opens libcudnn.so.9 from the loader's path or the CUDA toolkit's
folders, or the file MKRT_CUDNN names. On a machine whose cuDNN came with
PyTorch (the nvidia-cudnn-cu13 wheel) it is in site-packages: this prints
the environment that finds it, one NAME=VALUE a line, for

  env $(python3 bench/cudnn_library.py) MKRT_PREFILL_ATTENTION=cudnn mkrun ...

and cudnn_environment() gives the same as a dict. It prints nothing, and
exits 1, where no wheel's cuDNN is found.
"""
import glob
import importlib.util
import os
import sys


def _wheel_folders():
    """The folders of the installed nvidia-* wheels' namespace package."""
    spec = importlib.util.find_spec("nvidia")
    return list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []


def cudnn_environment():
    """MKRT_CUDNN, and LD_LIBRARY_PATH with the library's folder first (cuDNN
    opens its engine libraries beside it); {} where there is no wheel's cuDNN.
    Where the wheels also hold a CUDA runtime of major 13, the frontend's own
    calls into it get CUDNN_FRONTEND_CUDART_LIB_NAME."""
    for root in _wheel_folders():
        found = sorted(glob.glob(os.path.join(root, "cudnn", "lib", "libcudnn.so.9*")))
        if not found:
            continue
        folder = os.path.dirname(found[0])
        library = os.path.join(folder, "libcudnn.so.9")
        paths = [folder] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        environment = {"MKRT_CUDNN": library if os.path.exists(library) else found[0],
                       "LD_LIBRARY_PATH": ":".join(paths)}
        for pattern in ("cu13/lib/libcudart.so.13", "cuda_runtime/lib/libcudart.so.13"):
            runtime = sorted(glob.glob(os.path.join(root, pattern)))
            if runtime:
                environment["CUDNN_FRONTEND_CUDART_LIB_NAME"] = runtime[0]
                break
        return environment
    return {}


if __name__ == "__main__":
    environment = cudnn_environment()
    for name, value in environment.items():
        print(f"{name}={value}")
    sys.exit(0 if environment else 1)
