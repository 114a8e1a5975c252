"""repix.reconstruct, repix.maxtree and repix.area_opening against scikit-image on seeded inputs
and edge shapes, every variant, and the refusals."""

import numpy as np
import pytest
from skimage import morphology

import repix

FOOTPRINT = {4: np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool), 8: np.ones((3, 3), bool)}
SK_CONNECTIVITY = {4: 1, 8: 2}


def marker_masks():
    rng = np.random.default_rng(21)
    for dtype in (np.uint8, np.uint16, np.float32):
        mask = rng.integers(0, 200, (19, 23)).astype(dtype)
        marker = (mask * (rng.random(mask.shape) < 0.05)).astype(dtype)
        yield f"noise-{np.dtype(dtype).name}", marker, mask
    yield "1x1", np.zeros((1, 1), np.uint8), np.full((1, 1), 9, np.uint8)
    mask = rng.integers(0, 50, (1, 31)).astype(np.uint16)
    yield "1x31", np.where(np.arange(31) == 30, mask, 0).astype(np.uint16), mask
    mask = rng.integers(0, 50, (29, 1)).astype(np.uint8)
    yield "29x1", np.where(np.arange(29)[:, None] == 0, mask, 0).astype(np.uint8), mask
    yield "constant", np.full((8, 9), 3, np.uint8), np.full((8, 9), 3, np.uint8)


MM = list(marker_masks())
MM_IDS = [n for n, _, _ in MM]


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("variant", repix.variants("reconstruct"))
@pytest.mark.parametrize("name,marker,mask", MM, ids=MM_IDS)
def test_reconstruct_matches_scikit_image(variant, connectivity, name, marker, mask):
    got = repix.reconstruct(marker, mask, connectivity=connectivity, variant=variant)
    assert got.dtype == mask.dtype and got.shape == mask.shape
    want = morphology.reconstruction(marker, mask, method="dilation", footprint=FOOTPRINT[connectivity])
    np.testing.assert_array_equal(got, want.astype(mask.dtype))


def test_reconstruct_clip_and_refusal():
    mask = np.full((4, 4), 5, np.uint8)
    marker = np.zeros((4, 4), np.uint8)
    marker[1, 1] = 9
    with pytest.raises(ValueError, match="marker"):
        repix.reconstruct(marker, mask)
    np.testing.assert_array_equal(repix.reconstruct(marker, mask, clip=True), mask)
    with pytest.raises(ValueError):
        repix.reconstruct(marker, mask.astype(np.uint16))
    with pytest.raises(ValueError):
        repix.reconstruct(marker, mask, connectivity=6)
    with pytest.raises(TypeError):
        repix.reconstruct(marker, mask, clip=1)


def images():
    rng = np.random.default_rng(31)
    yield "1x1", np.array([[4]], np.uint8)
    yield "1x17", rng.integers(0, 5, (1, 17)).astype(np.uint8)
    yield "17x1", rng.integers(0, 5, (17, 1)).astype(np.uint16)
    yield "constant", np.full((6, 5), 7, np.uint16)
    yield "few-levels", rng.integers(0, 4, (21, 19)).astype(np.uint8)
    yield "noise-u16", rng.integers(0, 60000, (16, 18)).astype(np.uint16)


IMAGES = list(images())
IDS = [n for n, _ in IMAGES]


def normal_form(image, sk_parent):
    """scikit-image's parent image in repix's normal form: each node's canonical pixel is its
    smallest index among its pixels of its level (scikit-image picks another one)."""
    f = image.ravel()
    parent = sk_parent.ravel().astype(np.int64)
    idx = np.arange(f.size)
    canonical = (parent == idx) | (f[parent] != f)
    node = np.where(canonical, idx, parent)  # scikit-image points every pixel at its node's canonical one
    assert canonical[node].all()
    first = np.full(f.size, f.size, np.int64)
    np.minimum.at(first, node, idx)
    mine = first[node]  # each pixel's node, by its smallest index
    up = parent[node]  # the node's parent node's canonical pixel (scikit-image's), itself at the root
    out = np.where(idx == mine, first[np.where(up == node, node, node[up])], mine)
    return out.reshape(image.shape)


def sk_1d_if_thin(image):
    # scikit-image's max_tree and area_opening give wrong trees for a 2-D image of one row or
    # column (all parents 0 for 1x17 in scikit-image 0.19); as a 1-D array it is right, and a
    # thin image's linear indices are the 1-D ones.
    return image.ravel() if 1 in image.shape else image


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("variant", repix.variants("maxtree"))
@pytest.mark.parametrize("name,image", IMAGES, ids=IDS)
def test_maxtree_matches_scikit_image(variant, connectivity, name, image):
    got = repix.maxtree(image, connectivity=connectivity, variant=variant)
    assert got.dtype == np.int32 and got.shape == image.shape
    if image.size == 1:  # scikit-image raises inside max_tree on one pixel (and ignores it)
        np.testing.assert_array_equal(got, [[0]])
        return
    thin = sk_1d_if_thin(image)
    sk_parent, _ = morphology.max_tree(thin, connectivity=min(SK_CONNECTIVITY[connectivity], thin.ndim))
    np.testing.assert_array_equal(got, normal_form(thin, sk_parent).reshape(image.shape))


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("variant", repix.variants("area-opening"))
@pytest.mark.parametrize("name,image", IMAGES, ids=IDS)
def test_area_opening_matches_scikit_image(variant, connectivity, name, image):
    area = max(1, image.size // 6)  # smaller than the image: where scikit-image and repix agree
    got = repix.area_opening(image, area, connectivity=connectivity, variant=variant)
    assert got.dtype == image.dtype and got.shape == image.shape
    if image.size == 1:  # as max_tree: the one pixel is the root, kept
        np.testing.assert_array_equal(got, image)
        return
    thin = sk_1d_if_thin(image)
    want = morphology.area_opening(thin, area_threshold=area, connectivity=min(SK_CONNECTIVITY[connectivity], thin.ndim))
    np.testing.assert_array_equal(got, want.reshape(image.shape))


def test_area_opening_above_the_image_keeps_the_root():
    image = np.array([[3, 9], [5, 4]], np.uint8)
    np.testing.assert_array_equal(repix.area_opening(image, 5), np.full((2, 2), 3, np.uint8))


def test_refusals():
    with pytest.raises(TypeError, match=r"^unsupported dtype '<f8' in image"):
        repix.maxtree(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        repix.maxtree(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError):
        repix.maxtree(np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="area"):
        repix.area_opening(np.zeros((2, 2), np.uint8), 0)
    with pytest.raises(TypeError):
        repix.area_opening(np.zeros((2, 2), np.uint8), 2.5)
    with pytest.raises(ValueError, match="unknown maxtree variant 'nope'"):
        repix.maxtree(np.zeros((2, 2), np.uint8), variant="nope")
