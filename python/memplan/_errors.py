"""memplan's errors, by the command line's exit code (src/cli/command.hpp)."""


class MemplanError(Exception):
    """memplan could not answer. ``code`` is the command line's exit code, ``message`` its one
    error line without the "memplan: error: " prefix, ``stderr`` all it wrote there."""

    def __init__(self, message, code=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.stderr = stderr


class InputError(MemplanError, ValueError):
    """Bad input (exit code 2): an unknown keyword, a value memplan refuses, a file it cannot read.
    The message is the command line's one line, naming the option, the value and what it expects."""


class DeviceError(MemplanError, RuntimeError):
    """No device where one was asked for (exit code 3): --gpu local or cuda:N without a readable GPU."""


class CommandError(MemplanError, RuntimeError):
    """Any other failure: a command that failed (exit code 4), output that is not JSON."""


class MemplanWarning(UserWarning):
    """A line the command line wrote on standard error beside a JSON answer."""
