"""CuPy arrays in, CuPy arrays out: every family's GPU variants on device arrays read in place,
against the same call on NumPy arrays (itself checked against scikit-image, SciPy, scikit-learn
and NumPy references in the other files); the refusals with the host path's messages; streams,
non-contiguous views, threads and the plan kept between calls. Skipped without a GPU or CuPy."""

import numpy as np
import pytest

import repix
from conftest import GPU

cupy = pytest.importorskip("cupy") if GPU else None
pytestmark = pytest.mark.skipif(not GPU, reason="no usable GPU here")

RNG = np.random.default_rng(2026)


def shapes():
    # The edge shapes where parallel code breaks, and sizes one off a tile or block.
    return [(1, 1), (1, 17), (17, 1), (31, 33), (64, 65), (129, 127)]


def gpu_variants(family):
    return repix.variants(family, device_arrays=True) if GPU else []


class Allocations(cupy.cuda.MemoryHook if cupy else object):
    """The bytes CuPy's pool hands out while active: a call's outputs made on the device come
    from it; an output brought up from the host would add its own allocation."""

    name = "Allocations"

    def __init__(self):
        self.sizes = []

    def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
        self.sizes.append(size)


def on_device_like(got, want):
    assert isinstance(got, cupy.ndarray), type(got)
    assert got.device.id == cupy.cuda.Device().id
    assert got.dtype == want.dtype and got.shape == want.shape
    return cupy.asnumpy(got)


def run_both(function, host_inputs, *args, **options):
    """The call on NumPy inputs and on CuPy copies of them (`args` after them as they are), and
    the CuPy outputs as NumPy."""
    want = function(*host_inputs, *args, **options)
    got = function(*[cupy.asarray(a) for a in host_inputs], *args, **options)
    if isinstance(want, tuple):
        return [on_device_like(g, w) for g, w in zip(got, want)], list(want)
    return on_device_like(got, want), want


def images(dtype, levels=None):
    for shape in shapes():
        if dtype == np.float32:
            yield shape, np.round(RNG.standard_normal(shape), 2).astype(np.float32)
        else:
            top = levels or np.iinfo(dtype).max
            yield shape, RNG.integers(0, top + 1, shape).astype(dtype)
    yield (9, 10), np.full((9, 10), 3, dtype)  # constant


@pytest.mark.parametrize("variant", gpu_variants("ecc"))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_ecc(variant, dtype):
    for shape, image in images(dtype, levels=40):
        (values, curve), (want_values, want_curve) = run_both(repix.ecc, [image], variant=variant)
        np.testing.assert_array_equal(values, want_values)
        np.testing.assert_array_equal(curve, want_curve)
    volume = RNG.integers(0, 9, (5, 6, 7)).astype(np.uint8)
    (values, curve), (want_values, want_curve) = run_both(repix.ecc, [volume], variant=variant)
    np.testing.assert_array_equal(curve, repix.ecc(volume, variant="seq")[1])


@pytest.mark.parametrize("variant", gpu_variants("reconstruct"))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_reconstruct(variant, dtype, connectivity):
    for shape, mask in images(dtype):
        marker = (mask - (mask > 0)).astype(dtype) if dtype != np.float32 else mask - 0.5
        got, want = run_both(repix.reconstruct, [marker, mask], connectivity=connectivity, variant=variant)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, repix.reconstruct(marker, mask, connectivity=connectivity, variant="seq"))
        high = marker.copy()  # one pixel above the mask where the type leaves room: clipped
        k = high.size // 2
        if dtype == np.float32 or mask.flat[k] < np.iinfo(dtype).max:
            high.flat[k] = mask.flat[k] + 1
        got, want = run_both(repix.reconstruct, [high, mask], clip=True, variant=variant)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("variant", gpu_variants("edt"))
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_edt(variant, dtype):
    exact = variant in ("gpu-opt", "gpu-exact-rowfill", "gpu-exact-envelope")
    for shape in shapes():
        mask = (RNG.random(shape) > 0.1).astype(dtype)
        (d, sites), _ = run_both(repix.edt, [mask], return_sites=True, variant=variant)
        want = repix.edt(mask, variant="seq-exact")
        if exact:
            np.testing.assert_array_equal(d, want)
        else:  # a propagation: never nearer than the truth
            assert (d >= want * (1 - 1e-6)).all()
        ys, xs = np.divmod(sites, shape[1])
        assert (mask.ravel()[sites.ravel()] == 0).all() or not (mask == 0).any()
        if (mask == 0).any():
            yy, xx = np.indices(shape)
            np.testing.assert_allclose(np.hypot(ys - yy, xs - xx), d, rtol=1e-6)
        alone, _ = run_both(repix.edt, [mask], variant=variant)
        np.testing.assert_array_equal(alone, d)


@pytest.mark.parametrize("variant", gpu_variants("ranklet"))
def test_ranklet(variant):
    for shape, image in images(np.uint8):
        got, want = run_both(repix.ranklet, [image], windows=(2, 4, 8), variant=variant)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, repix.ranklet(image, windows=(2, 4, 8), variant="seq"))


@pytest.mark.parametrize("variant", gpu_variants("auto-mi"))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_auto_mi(variant, dtype):
    for shape, labels in images(dtype, levels=256 if dtype == np.uint16 else 40):
        got, want = run_both(repix.auto_mi, [labels], variant=variant)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, repix.auto_mi(labels, variant="seq"), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("variant", gpu_variants("ami"))
def test_ami(variant):
    for shape, image in images(np.uint8):
        got, want = run_both(repix.ami, [image], windows=(2, 4), variant=variant)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("variant", gpu_variants("maxtree"))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_maxtree_and_area_opening(variant, dtype, connectivity):
    for shape, image in images(dtype, levels=30):
        got, want = run_both(repix.maxtree, [image], connectivity=connectivity, variant=variant)
        np.testing.assert_array_equal(got, repix.maxtree(image, connectivity=connectivity, variant="seq"))
        if variant in repix.variants("area-opening"):
            got, want = run_both(repix.area_opening, [image], 5, connectivity=connectivity, variant=variant)
            np.testing.assert_array_equal(got, repix.area_opening(image, 5, connectivity=connectivity, variant="seq"))


def test_outputs_are_made_on_the_device():
    # Device outputs come from CuPy's pool as one allocation each, of their own size: nothing is
    # brought up from the host (that would allocate again after the copy down).
    image = RNG.integers(0, 200, (300, 200)).astype(np.uint8)
    d_image = cupy.asarray(image)
    repix.maxtree(d_image)  # the plan set up, outside the count
    hook = Allocations()
    with hook:
        parent = repix.maxtree(d_image)
        distances = repix.edt(d_image)
        planes = repix.ranklet(d_image, windows=(4,))
    for out in (parent, distances, planes):
        assert isinstance(out, cupy.ndarray)
    assert sorted(hook.sizes) == sorted(a.nbytes for a in (parent, distances, planes)), hook.sizes


def test_nonfinite_and_bad_values_say_what_the_host_path_says():
    def same_error(function, *host_inputs, **options):
        with pytest.raises(ValueError) as on_host:
            function(*host_inputs, **options)
        with pytest.raises(ValueError) as on_device:
            function(*[cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in host_inputs], **options)
        assert str(on_device.value) == str(on_host.value)

    image = np.zeros((7, 9), np.float32)
    image[4, 5] = np.nan
    same_error(repix.ecc, image)
    image[4, 5] = -np.inf
    image[2, 3] = np.inf
    same_error(repix.ecc, image)
    same_error(repix.edt, image)
    same_error(repix.reconstruct, image, np.ones_like(image))
    same_error(repix.reconstruct, np.zeros_like(image), image)
    marker = np.zeros((7, 9), np.uint16)
    mask = np.full((7, 9), 5, np.uint16)
    marker[3, 8] = 6
    marker[5, 1] = 9
    same_error(repix.reconstruct, marker, mask)
    labels = np.zeros((6, 6), np.uint16)
    labels[2, 4] = 300
    same_error(repix.auto_mi, labels)
    same_error(repix.ranklet, np.zeros((4, 4), np.uint16))
    same_error(repix.ecc, np.zeros((0, 3), np.uint8))
    same_error(repix.maxtree, np.zeros((3, 3), np.float32))
    same_error(repix.area_opening, np.zeros((3, 3), np.uint8), 0)
    same_error(repix.edt, np.zeros((2, 2, 2), np.uint8))


def test_refusals_of_the_device_path():
    d = cupy.zeros((5, 5), np.uint8)
    with pytest.raises(ValueError, match="runs on the CPU"):
        repix.edt(d, variant="seq-exact")
    for family, function in (("ecc", repix.ecc), ("edt", repix.edt), ("reconstruct", None), ("maxtree", repix.maxtree)):
        host_only = [v for v in repix.variants(family) if v not in repix.variants(family, device_arrays=True)]
        assert set(repix.variants(family, device_arrays=True)) <= set(repix.variants(family))
        for v in host_only:
            with pytest.raises(ValueError, match="runs on the CPU|reads host memory only"):
                if function is None:
                    repix.reconstruct(d, d, variant=v)
                else:
                    function(d, variant=v)
    assert "multi-device" not in repix.variants("edt", device_arrays=True)
    assert "gpu-stream" not in repix.variants("ecc", device_arrays=True)
    with pytest.raises(TypeError, match="all host arrays or all GPU arrays"):
        repix.reconstruct(np.zeros((5, 5), np.uint8), d)
    with pytest.raises(TypeError):
        repix.edt(cupy.zeros((5, 5), np.int8))


def test_views_streams_threads_and_a_kept_plan():
    from concurrent.futures import ThreadPoolExecutor

    image = RNG.integers(0, 60, (80, 90)).astype(np.uint8)
    want = repix.maxtree(image[:, ::2])
    d = cupy.asarray(image)
    np.testing.assert_array_equal(cupy.asnumpy(repix.maxtree(d[:, ::2])), want)  # a strided view
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        got = repix.maxtree(d[:, ::2])
    stream.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(got), want)
    # The kept plan, then another shape, then the first again.
    other = RNG.integers(0, 60, (33, 21)).astype(np.uint8)
    np.testing.assert_array_equal(cupy.asnumpy(repix.maxtree(cupy.asarray(other))), repix.maxtree(other))
    np.testing.assert_array_equal(cupy.asnumpy(repix.maxtree(d[:, ::2])), want)
    images = [RNG.integers(0, 50, (40, 37)).astype(np.uint8) for _ in range(6)]
    alone = [(repix.maxtree(i), repix.edt(i), repix.ecc(i)[1]) for i in images]

    def on_device(i):
        with cupy.cuda.Stream(non_blocking=True) as s:
            out = (repix.maxtree(cupy.asarray(i)), repix.edt(cupy.asarray(i)), repix.ecc(cupy.asarray(i))[1])
            s.synchronize()
        return [cupy.asnumpy(o) for o in out]

    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(on_device, images * 3))
    for k, got in enumerate(together):
        for a, b in zip(got, alone[k % len(images)]):
            np.testing.assert_array_equal(a, b)
