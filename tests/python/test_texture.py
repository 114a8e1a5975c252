"""repix.ranklet, repix.auto_mi and repix.ami against references: the ranklet from its definition
(numpy_reference.ranklet), the auto-mutual information from scikit-learn's normalized mutual
information (geometric mean), and the descriptor as the two composed; every variant, edge
shapes, and the refusals."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

import repix
import numpy_reference as ref


def images():
    rng = np.random.default_rng(11)
    yield "1x1", np.array([[7]], np.uint8)
    yield "1x9", rng.integers(0, 256, (1, 9), dtype=np.uint8)
    yield "9x1", rng.integers(0, 256, (9, 1), dtype=np.uint8)
    yield "constant", np.full((6, 7), 40, np.uint8)
    yield "noise", rng.integers(0, 256, (13, 17), dtype=np.uint8)
    yield "few-levels", rng.integers(0, 3, (12, 10), dtype=np.uint8) * 100


IMAGES = list(images())
IDS = [n for n, _ in IMAGES]


def auto_mi_reference(labels):
    """Sum over lags of the NMI of (L[y,x], L[y,x+i]) (horizontal) and (L[y,x], L[y+i,x])
    (vertical); 0 for a lag where either side takes one value (sklearn says 1 there)."""
    a = np.asarray(labels).astype(np.int64)

    def nmi(x, y):
        if np.unique(x).size < 2 or np.unique(y).size < 2:
            return 0.0
        return normalized_mutual_info_score(x, y, average_method="geometric")

    h = sum(nmi(a[:, :-i].ravel(), a[:, i:].ravel()) for i in range(1, a.shape[1]))
    v = sum(nmi(a[:-i, :].ravel(), a[i:, :].ravel()) for i in range(1, a.shape[0]))
    return np.array([h, v], np.float64)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("variant", repix.variants("ranklet"))
@pytest.mark.parametrize("name,image", IMAGES, ids=IDS)
def test_ranklet_is_its_definition(variant, name, image):
    got = repix.ranklet(image, windows=(2, 4, 8), variant=variant)
    assert got.dtype == np.float32 and got.shape == (3, 3) + image.shape
    np.testing.assert_array_equal(got, ref.ranklet(image, (2, 4, 8)))  # exact: a power-of-two denominator


def test_ranklet_windows_keep_their_order_and_default():
    image = np.random.default_rng(2).integers(0, 256, (5, 6), dtype=np.uint8)
    np.testing.assert_array_equal(repix.ranklet(image, windows=[32, 2]), ref.ranklet(image, (32, 2)))
    assert repix.ranklet(image).shape == (4, 3, 5, 6)


@pytest.mark.parametrize("variant", repix.variants("auto-mi"))
@pytest.mark.parametrize("name,image", IMAGES, ids=IDS)
def test_auto_mi_is_sklearns_nmi_summed_over_lags(variant, name, image):
    got = repix.auto_mi(image, variant=variant)
    assert got.dtype == np.float64 and got.shape == (2,)
    close(got, auto_mi_reference(image))


def test_auto_mi_takes_uint16_levels_up_to_256():
    labels = np.random.default_rng(5).integers(0, 257, (9, 8)).astype(np.uint16)
    close(repix.auto_mi(labels), auto_mi_reference(labels))


@pytest.mark.parametrize("variant", repix.variants("ami"))
@pytest.mark.parametrize("name,image", IMAGES, ids=IDS)
def test_ami_is_the_ranklet_then_auto_mi(variant, name, image):
    windows = (4, 2)
    got = repix.ami(image, windows=windows, variant=variant)
    assert got.dtype == np.float64 and got.shape == (2, 3, 2)
    levels = ref.quantise(ref.ranklet(image, windows))
    want = np.array([[auto_mi_reference(levels[w, o]) for o in range(3)] for w in range(len(windows))])
    close(got, want)


def test_refusals():
    with pytest.raises(TypeError, match=r"^unsupported dtype '<f8' in image"):
        repix.ranklet(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="needs a 2D|2-D"):
        repix.ranklet(np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="--windows"):
        repix.ranklet(np.zeros((2, 2), np.uint8), windows=(3,))
    with pytest.raises(ValueError):
        repix.ami(np.zeros((2, 2), np.uint8), windows=())
    with pytest.raises(TypeError):
        repix.ami(np.zeros((2, 2), np.uint8), windows=(4.0,))
    with pytest.raises(ValueError, match="257|256"):
        repix.auto_mi(np.full((3, 3), 300, np.uint16))
    with pytest.raises(ValueError, match="unknown auto-mi variant 'nope'"):
        repix.auto_mi(np.zeros((3, 3), np.uint8), variant="nope")
