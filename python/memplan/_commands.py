"""Keyword arguments to memplan's command line and its JSON back: each function runs
``memplan COMMAND --flag value ... --format json`` in-process (memplan._core.run) and returns the
JSON as a dict, so the package answers what the command line answers, whatever the door."""

import difflib
import json
import os
import warnings

from . import _core
from ._errors import CommandError, DeviceError, InputError, MemplanWarning

_PREFIX = "memplan: error: "
# Keywords the functions set themselves: they always ask for JSON, and help is not an answer.
_RESERVED = {"format": "the functions always return the JSON output (--format json) as a dict",
             "help": "see `memplan COMMAND --help` or help(memplan.COMMAND)"}
_options_cache = {}


def _options(command):
    """{"seq": True, "keep_logits": False, ...}: the command's flags as keywords, whether each takes a value."""
    if command not in _options_cache:
        _options_cache[command] = {name.replace("-", "_"): takes_value for name, takes_value in _core.options(command)}
    return _options_cache[command]


def _elsewhere(command, keyword):
    """"; a flag of estimate, fit and advise, not of serve" for a keyword other commands take; else ""."""
    takers = [c for c in _core.commands() if c != command and keyword in _options(c)]
    if not takers:
        return ""
    names = ", ".join(takers[:-1]) + (" and " if len(takers) > 1 else "") + takers[-1]
    return f"; a flag of {names}, not of {command}"


def _text(value):
    """A value as the command line takes it: 7e9 -> "7000000000", 0.002 -> "0.002", a path as is."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2.0**63:
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return os.fspath(value)


def _value(fn, keyword, value):
    if isinstance(value, (list, tuple)):
        if not value:
            raise InputError(f"{fn}: {keyword}=[]: an empty list (expected at least one value)", 2)
        parts = [_value(fn, keyword, v) for v in value]
        return ",".join(parts)
    if isinstance(value, bool):
        # {on|off} options (serve's chunked_prefill) read a bool as on/off.
        return "on" if value else "off"
    if isinstance(value, (int, float, str, os.PathLike)):
        return _text(value)
    raise InputError(f"{fn}: {keyword}={value!r}: a {type(value).__name__} (expected a number, a string, "
                     "a path or a list of them)", 2)


def arguments(command, options):
    """The command line for ``command`` with keyword ``options``: underscores for dashes, True for a
    switch (False and None: left out), lists joined with commas."""
    fn = f"memplan.{command.replace('-', '_')}"
    known = _options(command)
    args = [command]
    for keyword, value in options.items():
        if keyword in _RESERVED:
            raise InputError(f"{fn}: {keyword}=: not taken ({_RESERVED[keyword]})", 2)
        if keyword not in known:
            hint = _elsewhere(command, keyword)
            if not hint:
                close = difflib.get_close_matches(keyword, [k for k in known if k not in _RESERVED], n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{fn}: unknown keyword {keyword!r} (expected a flag of `memplan {command} --help`, "
                             f"dashes as underscores{hint})", 2)
        if value is None:
            continue
        flag = "--" + keyword.replace("_", "-")
        if not known[keyword]:
            if not isinstance(value, bool):
                raise InputError(f"{fn}: {keyword}={value!r}: {flag} is a switch (expected True or False)", 2)
            if value:  # False is the switch left out (memplan's switches have no =false)
                args.append(flag)
            continue
        args.append(f"{flag}={_value(fn, keyword, value)}")
    return args


def run_json(command, options):
    """memplan's --format json answer for ``command`` with keyword ``options``, as a dict.
    Exit code 1 (does not fit) is an answer too; 2 raises InputError, 3 DeviceError, others CommandError."""
    args = arguments(command, options) + ["--format", "json"]
    code, out, err = _core.run(args)
    lines = [line for line in err.splitlines() if line.strip()]
    if code in (0, 1) and out.strip():
        try:
            answer = json.loads(out)
        except ValueError as e:
            raise CommandError(f"memplan {command}: the output is not JSON ({e})", code, err) from None
        for line in lines:  # what the command line would have said on standard error beside it
            warnings.warn(line, MemplanWarning, stacklevel=3)
        return answer
    line = next((ln for ln in reversed(lines) if ln.startswith(_PREFIX)), lines[-1] if lines else "")
    message = line[len(_PREFIX):] if line.startswith(_PREFIX) else (line or f"memplan {command}: exit code {code}")
    kind = {2: InputError, 3: DeviceError}.get(code, CommandError)
    raise kind(message, code, err)


