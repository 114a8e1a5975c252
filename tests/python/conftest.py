"""Shared pieces of the Python module's tests: the module, whether a GPU is usable, the CLI."""

import os
import subprocess

import pytest

from repix import _native

GPU = _native.gpu_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="no usable GPU here")
needs_no_gpu = pytest.mark.skipif(GPU, reason="a GPU is usable here")


def cli_error(*args):
    """The CLI's one error line for `repix ARGS` (without "repix: error: "), or None where the
    CLI is not at hand (REPIX_CLI unset: the module was installed on its own)."""
    cli = os.environ.get("REPIX_CLI")
    if not cli:
        return None
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    assert r.returncode != 0, r.stdout
    line = r.stderr.strip().splitlines()[-1]
    for prefix in ("repix: error: ", "repix: usage error: "):
        if line.startswith(prefix):
            line = line[len(prefix):]
    return line.removesuffix(" (see `repix help`)")
