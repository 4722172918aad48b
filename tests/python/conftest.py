"""pytest setup for the Python package's tests: the memplan binary to compare with.

Run from the repository root after a build with -DMEMPLAN_PYTHON=ON (scripts/test.sh does):
    PYTHONPATH=build-clang/python MEMPLAN_BINARY=build-clang/memplan python3 -m pytest tests/python
"""

import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")


def _binary():
    given = os.environ.get("MEMPLAN_BINARY")
    if given:
        return given
    for build in ("build-clang", "build"):
        path = os.path.join(ROOT, build, "memplan")
        if os.access(path, os.X_OK):
            return path
    raise RuntimeError("memplan binary not found: set MEMPLAN_BINARY")


class Cli:
    """The memplan binary, run as a user would: `memplan COMMAND ARGS... --format json`."""

    def __init__(self, path):
        self.path = path

    def run(self, *args):
        p = subprocess.run([self.path, *args], capture_output=True, text=True, check=False)
        return p.returncode, p.stdout, p.stderr

    def json(self, *args, codes=(0,)):
        code, out, err = self.run(*args, "--format", "json")
        assert code in codes, f"memplan {' '.join(args)}: exit {code}: {err}"
        return json.loads(out)


@pytest.fixture(scope="session")
def cli():
    return Cli(_binary())
