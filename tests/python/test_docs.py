"""docs/python.md's examples run as written."""

import pathlib
import re

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_examples_run():
    blocks = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)
    assert blocks
    for code in blocks:
        exec(compile(code, str(PAGE), "exec"), {})
