"""docs/python.md's examples run as written."""

import pathlib
import re

from conftest import GPU

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_examples_run():
    blocks = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)
    assert blocks
    on_gpu = [code for code in blocks if "import cupy" in code]
    assert on_gpu  # the CuPy examples are recognised as such, to run where a GPU is
    for code in blocks:
        if code in on_gpu and not GPU:
            continue
        exec(compile(code, str(PAGE), "exec"), {})

