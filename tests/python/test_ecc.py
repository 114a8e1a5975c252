"""repix.ecc against the pure-NumPy reference, on every variant this machine runs, and its refusals
against the command line's."""

import threading
import time

import numpy as np
import pytest

import repix
import numpy_reference as ref
from conftest import cli_error, needs_gpu, needs_no_gpu

DTYPES = [np.uint8, np.uint16, np.float32]
VARIANTS = repix.variants("ecc")


def seeded(shape, dtype, seed, levels=None):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        a = rng.normal(size=shape).astype(np.float32)
        if levels:
            a = np.round(a * levels) / levels  # ties
        return a
    high = levels or np.iinfo(dtype).max + 1
    return rng.integers(0, high, size=shape, dtype=dtype)


def check(image, **kw):
    values, curve = repix.ecc(image, **kw)
    want_values, want_curve = ref.ecc(image)
    assert values.dtype == np.asarray(image).dtype and values.ndim == 1
    assert curve.dtype == np.int64 and curve.shape == values.shape
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(curve, want_curve)


SHAPES = [(1, 1), (1, 9), (9, 1), (7, 5), (16, 16), (33, 20), (1, 1, 1), (4, 5, 6), (3, 1, 7), (8, 8, 8), (6,)]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matches_reference(variant, dtype, shape):
    for seed, levels in ((1, 4), (2, None)):
        check(seeded(shape, dtype, seed, levels), variant=variant)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_constant_image(variant, dtype):
    for shape in [(1, 1), (5, 7), (3, 4, 5)]:
        image = np.full(shape, 3, dtype=dtype)
        values, curve = repix.ecc(image, variant=variant)
        assert values.tolist() == [3] and curve.tolist() == [1]


@pytest.mark.parametrize("variant", VARIANTS)
def test_ring_and_extremes(variant):
    ring = np.zeros((5, 5), np.uint8)
    ring[2, 2] = 1
    values, curve = repix.ecc(ring, variant=variant)
    assert curve.tolist() == [0, 1]  # a ring (Euler characteristic 0), then the whole square
    check(ring, variant=variant)
    big = np.finfo(np.float32).max
    check(np.array([[big, -big], [-0.0, 0.0]], np.float32), variant=variant)
    check(np.array([[0, 65535], [65535, 1]], np.uint16), variant=variant)


def test_negative_zero_folds_into_zero():
    values, curve = repix.ecc(np.array([[-0.0, 0.0, 1.0]], np.float32))
    assert values.tolist() == [0.0, 1.0] and not np.signbit(values[0])


def test_default_variant_and_threads_agree_with_seq():
    image = seeded((40, 30, 20), np.float32, 7, levels=8)
    want = repix.ecc(image, variant="seq")
    for kw in ({}, {"threads": 1}, {"threads": 2}, {"variant": "omp", "threads": 0}):
        got = repix.ecc(image, **kw)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_any_layout_is_read_as_its_values():
    base = seeded((12, 10), np.uint16, 3, levels=6)
    for view in (base.T, np.asfortranarray(base), base[::2, ::3], base[:, ::-1]):
        got, want = repix.ecc(view), ref.ecc(view)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    frozen = base.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(repix.ecc(frozen)[1], ref.ecc(frozen)[1])
    unaligned = np.frombuffer(b"\0" + base.tobytes(), dtype=np.uint16, offset=1).reshape(base.shape)
    assert not unaligned.flags.aligned
    np.testing.assert_array_equal(repix.ecc(unaligned)[1], ref.ecc(base)[1])


def test_input_left_as_it_was():
    image = seeded((9, 9), np.float32, 5)
    before = image.copy()
    repix.ecc(image)
    np.testing.assert_array_equal(image, before)


def write(tmp_path, array):
    path = tmp_path / "input.npy"
    np.save(path, array)
    return str(path)


def test_nan_and_infinity_refused_with_the_command_lines_message(tmp_path):
    image = np.zeros((3, 4), np.float32)
    image[1, 2] = np.nan
    message = "NaN in the input at (x=2, y=1): the ECC needs finite values"
    for variant in VARIANTS:
        with pytest.raises(ValueError) as e:
            repix.ecc(image, variant=variant)
        assert str(e.value) == message
    assert cli_error("run", "ecc", "--input", write(tmp_path, image), "--json", "-") in (None, message)
    cube = np.zeros((2, 3, 4), np.float32)
    cube[1, 2, 3] = -np.inf
    with pytest.raises(ValueError, match=r"^infinity in the input at \(x=3, y=2, z=1\)"):
        repix.ecc(cube)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.bool_, np.int8, ">f4"])
def test_wrong_dtype_is_a_type_error(dtype, tmp_path):
    image = np.zeros((3, 3), dtype=dtype)
    with pytest.raises(TypeError) as e:
        repix.ecc(image)
    descr = np.dtype(dtype).str
    assert str(e.value).startswith(f"unsupported dtype '{descr}' in image (repix reads '|u1' uint8, '<u2' uint16")
    cli = cli_error("run", "ecc", "--input", write(tmp_path, image), "--json", "-")
    if cli is not None:  # the same words, the file named instead of the argument
        assert cli.split(" (repix reads")[1] == str(e.value).split(" (repix reads")[1]
    with pytest.raises(TypeError, match="unsupported dtype '<i8' in image"):
        repix.ecc([[1, 2], [3, 4]])


def test_bad_shapes_are_value_errors(tmp_path):
    cases = [
        (np.zeros((1, 1, 1, 1), np.uint8), "image holds a 4-d array, shape (1, 1, 1, 1); repix reads 1-3 dimensional arrays"),
        (np.zeros((3, 0), np.uint8), "image holds an empty array, shape (3, 0)"),
        (np.uint8(3), "image holds a 0-d array (a scalar); repix reads 1-3 dimensional arrays"),
    ]
    for image, message in cases:
        with pytest.raises(ValueError) as e:
            repix.ecc(image)
        assert str(e.value) == message
        cli = cli_error("run", "ecc", "--input", write(tmp_path, image), "--json", "-")
        if cli is not None:
            assert cli == message.replace("image", "'" + str(tmp_path / "input.npy") + "'", 1)


def test_bad_options_say_what_the_command_line_says(tmp_path):
    image = np.zeros((2, 2), np.uint8)
    path = write(tmp_path, image)
    for kw, args in (({"threads": -1}, ["--threads", "-1"]), ({"variant": "nope"}, ["--variant", "nope"])):
        with pytest.raises(ValueError) as e:
            repix.ecc(image, **kw)
        cli = cli_error("run", "ecc", "--input", path, "--json", "-", *args)
        assert cli in (None, str(e.value))
    assert "unknown ecc variant 'nope' (known: seq, omp, " in str(e.value)
    with pytest.raises(TypeError):
        repix.ecc(image, threads=1.5)
    with pytest.raises(TypeError):
        repix.ecc(image, threads=True)
    with pytest.raises(TypeError):
        repix.ecc(image, variant=3)
    with pytest.raises(TypeError):
        repix.ecc(image, "seq")  # options are keywords


@needs_no_gpu
def test_gpu_variant_without_a_gpu_is_refused():
    with pytest.raises(ValueError, match="needs a GPU"):
        repix.ecc(np.zeros((2, 2), np.uint8), variant="gpu-opt")


@needs_gpu
def test_default_variant_on_a_gpu_matches_seq():
    image = seeded((300, 200), np.float32, 11, levels=50)
    got, want = repix.ecc(image), repix.ecc(image, variant="seq")
    np.testing.assert_array_equal(got[1], want[1])


def test_gil_released_while_computing():
    # One call of ~0.2 s or more on another thread: the interpreter keeps running this one.
    image = seeded((1500, 1500), np.float32, 4)
    done = []
    worker = threading.Thread(target=lambda: done.append(repix.ecc(image, variant="seq")))
    t0 = time.perf_counter()
    worker.start()
    spins = 0
    while worker.is_alive():
        spins += 1
    elapsed = time.perf_counter() - t0
    assert done and elapsed > 0.05
    assert spins > 1000 * elapsed, (spins, elapsed)  # a held GIL allows a few spins, not millions
