"""repix.edt against a brute-force NumPy EDT, and its refusals."""

import numpy as np
import pytest

import repix
import numpy_reference as ref

VARIANTS = repix.variants("edt")
EXACT = ["seq-exact"] + (["gpu-opt"] if "gpu-opt" in VARIANTS else [])


def masks():
    rng = np.random.default_rng(3)
    yield "1x1-zero", np.zeros((1, 1), np.uint8)
    yield "1x9", (rng.random((1, 9)) > 0.3).astype(np.uint8)
    yield "9x1", (rng.random((9, 1)) > 0.3).astype(np.uint16)
    yield "blobs", (rng.random((17, 23)) > 0.1).astype(np.float32)
    yield "one-site", np.pad(np.zeros((1, 1), np.uint8), ((5, 9), (2, 11)), constant_values=1)
    yield "sparse", (rng.random((40, 31)) > 0.02).astype(np.uint8)


def check_sites(mask, distances, sites):
    assert sites.dtype == np.int64 and sites.shape == mask.shape
    ys, xs = np.divmod(sites, mask.shape[1])
    assert (mask.ravel()[sites.ravel()] == 0).all()  # every site is background
    yy, xx = np.indices(mask.shape)
    np.testing.assert_allclose(np.hypot(ys - yy, xs - xx), distances, rtol=1e-6)


@pytest.mark.parametrize("variant", EXACT)
@pytest.mark.parametrize("name,mask", list(masks()), ids=[n for n, _ in masks()])
def test_exact_variants_match_brute_force(variant, name, mask):
    distances = repix.edt(mask, variant=variant)
    assert distances.dtype == np.float32 and distances.shape == mask.shape
    np.testing.assert_allclose(distances, ref.edt(mask), rtol=1e-6)
    d2, sites = repix.edt(mask, return_sites=True, variant=variant)
    np.testing.assert_array_equal(d2, distances)
    check_sites(mask, distances, sites)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name,mask", list(masks()), ids=[n for n, _ in masks()])
def test_every_variant_gives_true_distances_to_background(variant, name, mask):
    # Propagation variants may miss the nearest site by a little: never nearer than the truth,
    # and their sites are background pixels at the distance they give.
    distances, sites = repix.edt(mask, return_sites=True, variant=variant)
    assert (distances >= ref.edt(mask).astype(np.float32) * (1 - 1e-6)).all()
    check_sites(mask, distances, sites)


def test_default_is_exact():
    mask = (np.random.default_rng(9).random((30, 30)) > 0.05).astype(np.uint8)
    np.testing.assert_allclose(repix.edt(mask), ref.edt(mask), rtol=1e-6)


def test_no_background_gives_infinity_and_no_sites():
    distances, sites = repix.edt(np.ones((3, 4), np.uint8), return_sites=True)
    assert np.isinf(distances).all() and (sites == -1).all()


def test_refusals():
    with pytest.raises(ValueError, match=r"^edt: needs a 2D image, got 3D shape 2x2x2$"):
        repix.edt(np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(TypeError, match=r"^unsupported dtype '\|b1' in mask"):
        repix.edt(np.zeros((2, 2), bool))
    mask = np.ones((2, 3), np.float32)
    mask[1, 0] = np.nan
    with pytest.raises(ValueError, match="^edt: input has NaN at x=0"):
        repix.edt(mask)
    with pytest.raises(ValueError, match="unknown edt variant 'nope'"):
        repix.edt(mask, variant="nope")
