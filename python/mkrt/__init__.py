"""mkrt: runs a .mk file compiled by mkc, text in and text out.

    import mkrt
    model = mkrt.load("model.mk")              # device="auto": the GPU, else the CPU
    print(model.generate("Once upon a time", max_new_tokens=32))
    for piece in model.stream("Hello", stop=["\\n"]):
        print(piece, end="", flush=True)
    session = mkrt.Session(model)              # the KV cache kept between turns
    session.chat("Hi!"); session.chat("And then?")

Generation is greedy (the kernel's argmax) unless temperature, top_k, top_p
or min_p ask for sampling, which the kernel does too, seeded, in the same
launch (mkrt/sampling.py); streams come out of the running kernel. See
python/README.md.
"""
from . import _lib
from .errors import (ContextFullError, DeviceFailureError, ExecutionError, InvalidArgumentError,
                     InvalidModelError, LibraryNotFoundError, MkrtError, NoDeviceError,
                     NoTokenizerError, UnsupportedError)
from .model import Model, Session

__all__ = [
    "load", "Model", "Session", "version", "library_path",
    "MkrtError", "LibraryNotFoundError", "InvalidArgumentError", "InvalidModelError",
    "NoDeviceError", "ContextFullError", "ExecutionError", "DeviceFailureError",
    "NoTokenizerError", "UnsupportedError",
]


def load(path, device="auto", max_context=0, prompt_by_step=False):
    """Opens a .mk file on `device`: "auto" (the GPU when it can run the
    file, else the CPU, with a note on stderr), "gpu" (NoDeviceError when
    unavailable) or "cpu". max_context: 0 takes the compiled one.
    prompt_by_step: on the GPU, feed every prompt one token a decode step,
    not those of 32 tokens or more layer by layer (libmkrt's
    mkrt_session_set_prompt_by_step)."""
    return Model(path, device, max_context, prompt_by_step)


def version():
    """libmkrt's own description: format, build type, git revision."""
    return _lib.lib().mkrt_version().decode()


def library_path():
    """The libmkrt.so this package loads (see mkrt/_lib.py for the order)."""
    return str(_lib.find_library())
