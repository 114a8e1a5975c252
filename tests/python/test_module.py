"""The package's own surface: version, families, variants."""

import re
import subprocess
import os

import pytest

import repix
from conftest import GPU, needs_gpu, needs_no_gpu


def test_version_names_the_release_and_commit():
    info = repix.tool_info()
    assert info["name"] == "repix"
    assert set(info) >= {"version", "git_sha", "git_dirty", "git_source"}
    assert repix.__version__.startswith(info["version"])
    if info["git_sha"] != "unknown":
        assert ("+g" + info["git_sha"][:12]) in repix.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\+g[0-9a-f]{12}(\.dirty)?)?", repix.__version__)


def test_families_are_the_command_lines():
    fams = repix.families()
    assert fams[:3] == ["ecc", "reconstruct", "edt"]
    cli = os.environ.get("REPIX_CLI")
    if cli:
        out = subprocess.run([cli, "list", "families"], capture_output=True, text=True, check=True).stdout
        assert fams == [line.strip() for line in out.splitlines()[1:] if line.strip()]


def test_cpu_variants_of_ecc_are_listed():
    v = repix.variants("ecc")
    assert v[:2] == ["seq", "omp"]
    if not GPU:
        assert v == ["seq", "omp"]


@needs_gpu
def test_gpu_variants_listed_where_a_gpu_is():
    assert "gpu-opt" in repix.variants("ecc")
    assert "gpu-opt" in repix.variants("edt")


def test_unknown_family_is_a_value_error():
    with pytest.raises(ValueError, match=r"unknown family 'nope' \(known: ecc, "):
        repix.variants("nope")
    with pytest.raises(TypeError):
        repix.variants(3)


def test_calls_from_several_threads_agree():
    # The GIL is released while a family computes: several threads run the same calls at once and
    # each gets what a call alone gets.
    from concurrent.futures import ThreadPoolExecutor
    import numpy as np

    rng = np.random.default_rng(4)
    images = [rng.integers(0, 50, (40, 37), dtype=np.uint8) for _ in range(8)]
    alone = [(repix.ecc(i)[1], repix.maxtree(i), repix.edt(i)) for i in images]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda i: (repix.ecc(i)[1], repix.maxtree(i), repix.edt(i)), images * 3))
    for k, got in enumerate(together):
        for a, b in zip(got, alone[k % len(images)]):
            np.testing.assert_array_equal(a, b)
