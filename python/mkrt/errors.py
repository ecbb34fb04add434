"""The exceptions of the package: one per libmkrt status, so that a caller
can tell a bad file from a missing GPU without reading messages."""


class MkrtError(Exception):
    """A failed libmkrt call, or a request the package refuses."""


class LibraryNotFoundError(MkrtError, OSError):
    """libmkrt.so was found nowhere the package looks."""


class InvalidArgumentError(MkrtError, ValueError):
    """MKRT_ERROR_INVALID_ARGUMENT: a bad device, token, length."""


class InvalidModelError(MkrtError):
    """MKRT_ERROR_INVALID_MODEL: not a readable, consistent .mk file."""


class NoDeviceError(MkrtError):
    """MKRT_ERROR_NO_DEVICE: the device asked for is unavailable."""


class ContextFullError(MkrtError):
    """MKRT_ERROR_CONTEXT_FULL: more positions than the session holds."""


class ExecutionError(MkrtError):
    """MKRT_ERROR_EXECUTION: the CPU executor's run failed."""


class DeviceFailureError(MkrtError):
    """MKRT_ERROR_DEVICE_FAILURE: a GPU that is there failed."""


class UnsupportedError(MkrtError):
    """MKRT_ERROR_UNSUPPORTED: the session cannot run this request (a batch
    with a repetition penalty on the GPU, or a file without a batch that
    large)."""


class NoTokenizerError(MkrtError):
    """Text was given to a .mk file compiled without a tokenizer."""


# mkrt.h's mkrt_status values.
BY_STATUS = {
    1: InvalidArgumentError,
    2: InvalidModelError,
    3: NoDeviceError,
    4: ContextFullError,
    5: ExecutionError,
    6: DeviceFailureError,
    7: UnsupportedError,
}
