"""libmkrt.so through ctypes: finding it, and the C API's signatures
(runtime/mkrt/include/mkrt.h), declared once here so that a mismatch
shows in one place.

Where the library is looked for, first found wins:
  1. $MKRT_LIBRARY, a path to libmkrt.so (an error if it is not there);
  2. beside this package (mkrt/libmkrt.so, e.g. copied into a wheel);
  3. the build tree of the checkout the package lives in
     (<checkout>/build/runtime/mkrt/libmkrt.so), as an editable install has it.
"""
import ctypes
import os
from pathlib import Path

from .errors import BY_STATUS, LibraryNotFoundError, MkrtError

ENV_VAR = "MKRT_LIBRARY"
_NAME = "libmkrt.so"


def candidates():
    """The paths tried, in order, and where each comes from."""
    here = Path(__file__).resolve().parent
    found = []
    if os.environ.get(ENV_VAR):
        found.append((Path(os.environ[ENV_VAR]), f"${ENV_VAR}"))
        return found  # asked for one: nothing else may stand in for it
    found.append((here / _NAME, "beside the package"))
    found.append((here.parent.parent / "build" / "runtime" / "mkrt" / _NAME, "the build tree"))
    return found


def find_library():
    tried = []
    for path, origin in candidates():
        if path.is_file():
            return path
        tried.append(f"{path} ({origin})")
    hint = (f"set {ENV_VAR} to a libmkrt.so" if ENV_VAR not in os.environ or
            not os.environ[ENV_VAR] else f"{ENV_VAR} names no file")
    raise LibraryNotFoundError(
        "libmkrt.so not found; tried: " + "; ".join(tried) +
        f". Build it (ninja -C build runtime/mkrt/libmkrt.so) or {hint}")


from .sampling import Sampling  # noqa: E402  (mkrt_sampling)


class Info(ctypes.Structure):
    _fields_ = [
        ("num_layers", ctypes.c_int64), ("hidden", ctypes.c_int64),
        ("num_heads", ctypes.c_int64), ("num_kv_heads", ctypes.c_int64),
        ("head_dim", ctypes.c_int64), ("vocab", ctypes.c_int64),
        ("max_context", ctypes.c_int64),
        ("num_sms", ctypes.c_uint32),
        ("has_kernel", ctypes.c_int),
        ("target_arch", ctypes.c_char_p),
        ("compiler_version", ctypes.c_char_p),
        ("kernel_fingerprint", ctypes.c_char_p),
        ("eos_tokens", ctypes.POINTER(ctypes.c_int64)),
        ("num_eos_tokens", ctypes.c_size_t),
    ]


class GenerationInfo(ctypes.Structure):
    _fields_ = [
        # c_void_p, not c_char_p: the JSON is read by its size, not to a NUL.
        ("tokenizer_json", ctypes.c_void_p),
        ("tokenizer_json_size", ctypes.c_size_t),
        ("has_bos", ctypes.c_int),
        ("bos_token", ctypes.c_int64),
        ("chat_template", ctypes.c_char_p),
        ("tokenizer_source", ctypes.c_char_p),
        ("has_temperature", ctypes.c_int), ("has_top_k", ctypes.c_int),
        ("has_top_p", ctypes.c_int),
        ("temperature", ctypes.c_double), ("top_p", ctypes.c_double),
        ("top_k", ctypes.c_int64),
    ]


class Timing(ctypes.Structure):
    _fields_ = [
        ("total_ms", ctypes.c_double), ("kernel_ms", ctypes.c_double),
        ("steps", ctypes.c_int64),
        ("ms_per_token", ctypes.c_double), ("tokens_per_second", ctypes.c_double),
        ("stopped_at_eos", ctypes.c_int),
        ("step_ms", ctypes.POINTER(ctypes.c_double)),
        ("num_step_ms", ctypes.c_size_t),
        ("stopped_by_callback", ctypes.c_int),
    ]


# mkrt_token_callback: (user_data, token, index) -> nonzero to stop.
TokenCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t)


_P = ctypes.c_void_p
_I64P = ctypes.POINTER(ctypes.c_int64)
_SIZEP = ctypes.POINTER(ctypes.c_size_t)
_SIGNATURES = {
    "mkrt_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_char_p,
                                 ctypes.c_size_t]),
    "mkrt_close": (None, [_P]),
    "mkrt_model_info": (ctypes.c_int, [_P, ctypes.POINTER(Info)]),
    "mkrt_model_generation_info": (ctypes.c_int, [_P, ctypes.POINTER(GenerationInfo)]),
    "mkrt_model_batch_sizes": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t, _SIZEP]),
    "mkrt_session_create": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int64,
                                           ctypes.POINTER(_P), ctypes.c_char_p,
                                           ctypes.c_size_t]),
    "mkrt_session_destroy": (None, [_P]),
    "mkrt_session_device": (ctypes.c_char_p, [_P]),
    "mkrt_generate": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t, ctypes.c_size_t, _I64P,
                                     _SIZEP, ctypes.POINTER(Timing)]),
    "mkrt_continue": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t, ctypes.c_size_t, _I64P,
                                     _SIZEP, ctypes.POINTER(Timing)]),
    "mkrt_generate_stream": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t, ctypes.c_size_t,
                                            TokenCallback, _P, _I64P, _SIZEP,
                                            ctypes.POINTER(Timing)]),
    "mkrt_continue_stream": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t, ctypes.c_size_t,
                                            TokenCallback, _P, _I64P, _SIZEP,
                                            ctypes.POINTER(Timing)]),
    "mkrt_generate_batch": (ctypes.c_int, [_P, ctypes.POINTER(_I64P), _SIZEP, ctypes.c_size_t,
                                           ctypes.c_size_t, _I64P, _SIZEP,
                                           ctypes.POINTER(Timing)]),
    "mkrt_session_set_sampling": (ctypes.c_int, [_P, ctypes.POINTER(Sampling)]),
    "mkrt_session_set_prompt_by_step": (ctypes.c_int, [_P, ctypes.c_int]),
    "mkrt_continue_logits": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_float)]),
    "mkrt_session_context_length": (ctypes.c_int64, [_P]),
    "mkrt_session_rewind": (ctypes.c_int, [_P, ctypes.c_int64]),
    "mkrt_eval_logits": (ctypes.c_int, [_P, _I64P, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_float)]),
    "mkrt_version": (ctypes.c_char_p, []),
    "mkrt_cuda_driver_version": (ctypes.c_char_p, []),
    "mkrt_last_error": (ctypes.c_char_p, []),
}

_lib = None


def lib():
    """The loaded library, its functions declared; loaded on first use."""
    global _lib
    if _lib is None:
        path = find_library()
        try:
            loaded = ctypes.CDLL(str(path))
        except OSError as error:
            raise LibraryNotFoundError(f"cannot load {path}: {error}") from error
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                function = getattr(loaded, name)
            except AttributeError as error:
                raise LibraryNotFoundError(
                    f"{path} has no {name}: a libmkrt older than this package") from error
            function.restype = restype
            function.argtypes = argtypes
        _lib = loaded
    return _lib


def check(status, context=""):
    """Raises the status's exception with libmkrt's message."""
    if status == 0:
        return
    message = lib().mkrt_last_error().decode("utf-8", "replace")
    raise BY_STATUS.get(status, MkrtError)(f"{context}{message}" if context else message)


def int64_array(values):
    values = list(values)
    return (ctypes.c_int64 * max(len(values), 1))(*values)
