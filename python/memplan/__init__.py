"""memplan from Python: will this fit?

Each function takes the command line's flags as keyword arguments (underscores for dashes, True
for a switch, lists where a flag takes a comma-separated list) and returns the dict that
``memplan COMMAND ... --format json`` prints for them:

    >>> import memplan
    >>> r = memplan.estimate(model="llama-3-8b", mode="infer", seq=2048, batch=4, gpu="a100-80gb")
    >>> r["total_bytes"], r["fit"][0]["fits"]

Bad input raises InputError (a ValueError) with the command line's one-line message.
"""

from ._commands import run_json as _run_json
from ._errors import CommandError, DeviceError, InputError, MemplanError, MemplanWarning
from ._transformers import from_transformers

__version__ = "0.1.0"


def estimate(**options):
    """Memory breakdown and fit table: ``memplan estimate`` (see ``memplan estimate --help``)."""
    return _run_json("estimate", options)


def fit(**options):
    """Fit / no-fit on each GPU named (``gpu=[...]``): ``memplan fit``. A run that does not fit is
    an answer, not an error: read the dict."""
    return _run_json("fit", options)


def max_batch(**options):
    """The largest micro-batch (or ``max_seq=True``: sequence) that fits: ``memplan max-batch``."""
    return _run_json("max-batch", options)


def advise(**options):
    """Changes that make the run fit, cheapest first: ``memplan advise``."""
    return _run_json("advise", options)


def serve(**options):
    """A serving engine's memory budget (vLLM, SGLang): ``memplan serve``."""
    return _run_json("serve", options)


__all__ = ["estimate", "fit", "max_batch", "advise", "serve", "from_transformers",
           "MemplanError", "InputError", "DeviceError", "CommandError", "MemplanWarning"]
