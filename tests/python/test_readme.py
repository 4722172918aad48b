"""The README's Python example prints what the README says it prints."""

import contextlib
import io
import os
import re

from conftest import ROOT


def test_readme_python_example():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    found = re.search(r"^## Python.*?^```python\n(.*?)^```\n^```\n(.*?)^```", readme, re.S | re.M)
    assert found, "README.md: no Python section with an example and its output"
    code, shown = found.groups()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    assert printed.getvalue() == shown
