"""repix from Python: the command line's families on NumPy and CuPy arrays, in memory.

Each function is `repix run <family>` without the files: the same checks, default variant (the
fastest this machine can run) and error messages. A wrong element type raises TypeError, any
other bad input or option ValueError. The GIL is released while a family computes.

NumPy in, NumPy out. A CuPy array (or any GPU array CuPy takes in place: __cuda_array_interface__,
DLPack) is read where it lies, on CuPy's current stream and the array's device, by a GPU variant;
the result comes back as CuPy arrays on that device. Outputs the GPU leaves in device memory
(images, distances, parents, ranklet planes) never pass through the host; the ECC curve and the
AMI features are finished on the host from the device's histograms and moved to the device.

    >>> import numpy as np, repix
    >>> values, ecc = repix.ecc(np.array([[0, 1], [1, 0]], dtype=np.uint8))
"""

import inspect as _inspect
import json as _json

from . import _native

__all__ = [
    "__version__", "tool_info", "families", "variants", "run_interface", "ecc", "reconstruct", "edt", "ranklet", "auto_mi", "ami",
    "maxtree", "area_opening",
]


def tool_info():
    """The version and commit as repix's reports record them (a dict: name, version, git_sha,
    git_dirty, git_source)."""
    return _json.loads(_native.tool_info())


def _version():
    # PEP 440: the release, and the commit as a local label where it is known (".dirty": the
    # sources differed from it).
    t = tool_info()
    sha = t.get("git_sha") or "unknown"
    if sha == "unknown":
        return t["version"]
    return t["version"] + "+g" + sha[:12] + (".dirty" if t.get("git_dirty") is True else "")


def __getattr__(name):
    # __version__ asks git (as the reports do): only when it is read, not on import.
    if name == "__version__":
        global __version__
        __version__ = _version()
        return __version__
    raise AttributeError(f"module 'repix' has no attribute '{name}'")


def run_interface(family):
    """`repix run <family>` as data: its inputs and outputs (option names, in order), its summary
    and every option it takes with its default as the command line writes it. The functions
    here take those inputs as arrays and some of those options as keywords."""
    return _json.loads(_native.run_interface(_text("family", family)))


def families():
    """Every family, in repix's order (`repix list families`)."""
    return _native.families()


def variants(family, *, device_arrays=False):
    """The variants of `family` this machine can run (GPU variants where a GPU is usable), in
    ablation order; with device_arrays=True, only those that read CuPy arrays in place (the GPU
    variants with a kernel scope: not the multi-device or streaming ones)."""
    if not isinstance(device_arrays, bool):
        raise TypeError(f"device_arrays must be a bool, got {type(device_arrays).__name__}")
    return _native.variants(_text("family", family), device_arrays)


def _on_gpu(array):
    # kDLCUDA (2) and kDLCUDAManaged (13) in DLPack's device types.
    if hasattr(array, "__cuda_array_interface__"):
        return True
    device = getattr(array, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 13)


def _run(family, inputs, options):
    # NumPy (or anything numpy.asarray takes) goes to the host run; GPU arrays to the device run.
    on_gpu = [_on_gpu(array) for _, array in inputs]
    if not any(on_gpu):
        return _native.run(family, inputs, options)
    if not all(on_gpu):
        names = " and ".join(name for name, _ in inputs)
        raise TypeError(f"{names} must be all host arrays or all GPU arrays")
    try:
        import cupy
    except ImportError as e:
        raise TypeError(f"a GPU array needs CuPy to be read in place ({e})") from None
    arrays = []
    for name, array in inputs:
        a = array if isinstance(array, cupy.ndarray) else (
            cupy.asarray(array) if hasattr(array, "__cuda_array_interface__") else cupy.from_dlpack(array))
        if not a.flags.c_contiguous:
            a = cupy.ascontiguousarray(a)  # a copy on the device
        arrays.append((name, a))
    device = arrays[0][1].device
    for name, a in arrays[1:]:
        if a.device != device:
            raise ValueError(f"{arrays[0][0]} is on GPU {device.id} and {name} on GPU {a.device.id}")

    def allocate(dtype, shape):
        out = cupy.empty(shape, dtype=dtype)
        return out, out.data.ptr

    described = [(name, a.data.ptr, a.dtype.str, a.shape) for name, a in arrays]
    if device.id == cupy.cuda.runtime.getDevice():
        return _native.run_device(family, described, options, cupy.cuda.get_current_stream().ptr, allocate)
    with device:  # the arrays' device current for the call (and its stream the one CuPy uses there)
        return _native.run_device(family, described, options, cupy.cuda.get_current_stream().ptr, allocate)


def _text(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _int_text(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return str(value)


def _options(variant, **given):
    # The command line's option names and text values: the family's own option table checks them
    # (ranges, messages). None means the command line's default; a _Flag is a flag (--clip); a
    # tuple or list of ints is the command line's comma list (--windows 4,8); a bool given for an
    # int is a TypeError (True is an int to Python, not to repix).
    out = {}
    if variant is not None:
        out["variant"] = _text("variant", variant)
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, _Flag):
            out[name] = "true" if value.on else "false"
        elif isinstance(value, (tuple, list)):
            if not value:
                raise ValueError(f"{name} must name at least one value")
            out[name] = ",".join(_int_text(name, v) for v in value)
        else:
            out[name] = _int_text(name, value)
    return out


class _Flag:
    def __init__(self, on):
        self.on = on


def _flag(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return _Flag(value)


def ecc(image, *, variant=None, threads=None):
    """The Euler characteristic curve of a 1-3 dimensional image (uint8, uint16 or float32, finite).

    Returns (values, ecc): the image's distinct values ascending, in its own dtype (-0.0 folded
    into 0.0), and the ECC at each (int64). `variant`: one of variants("ecc"); None, the fastest
    here. `threads`: the OpenMP threads of the CPU variants (None or 0: OpenMP's default).
    """
    values, curve = _run("ecc", [("image", image)], _options(variant, threads=threads))
    return values, curve


def reconstruct(marker, mask, *, connectivity=8, clip=False, variant=None):
    """Grayscale reconstruction by dilation of `marker` under `mask` (2D, the same shape and type:
    uint8, uint16 or float32, finite).

    Returns an array like mask. A marker above the mask is refused (ValueError) unless clip=True,
    which lowers it to the mask first. `connectivity`: 4 or 8. `variant`: one of
    variants("reconstruct"); None, the fastest here.
    """
    options = _options(variant, connectivity=connectivity, clip=_flag("clip", clip))
    return _run("reconstruct", [("marker", marker), ("mask", mask)], options)[0]


def edt(mask, *, return_sites=False, variant=None):
    """The Euclidean distance transform of a 2D mask (uint8, uint16 or float32; zero: background).

    Returns the float32 distance of every pixel to its nearest zero pixel, and with
    return_sites=True also the int64 linear index of that pixel: (distances, sites). `variant`:
    one of variants("edt"); None, an exact one (the fastest here).
    """
    options = _options(variant)
    if return_sites:
        options["sites"] = ""
    out = _run("edt", [("mask", mask)], options)
    return (out[0], out[1]) if return_sites else out[0]


def ranklet(image, *, windows=(4, 8, 16, 32), variant=None):
    """The ranklet transform of a 2D uint8 image for each window size r (powers of two from 2 to
    32, each once, in output order).

    Returns float32 (len(windows), 3, H, W): for each window the horizontal, vertical and diagonal
    ranklet of every pixel. `variant`: one of variants("ranklet"); None, the fastest here.
    """
    return _run("ranklet", [("image", image)], _options(variant, windows=windows))[0]


def auto_mi(labels, *, variant=None):
    """The auto-mutual information of a 2D uint8 label image over every lag.

    Returns float64 (2,): horizontal, vertical. `variant`: one of variants("auto-mi"); None, the
    fastest here.
    """
    return _run("auto-mi", [("labels", labels)], _options(variant))[0]


def ami(image, *, windows=(4, 8, 16, 32), variant=None):
    """The ranklet + auto-mutual-information texture descriptor of a 2D uint8 image (`windows` as
    ranklet's).

    Returns float64 (len(windows), 3, 2): [window, orientation H/V/D, direction
    horizontal/vertical], the order of `repix run ami`'s CSV. `variant`: one of variants("ami");
    None, the fastest here.
    """
    return _run("ami", [("image", image)], _options(variant, windows=windows))[0]


def maxtree(image, *, connectivity=4, variant=None):
    """The max-tree of a 2D uint8 or uint16 image as its parent image.

    Returns int32 (int64 from 2^31 pixels), the image's shape, in normal form: a node's canonical
    pixel is the smallest linear index among its pixels of its level; every other pixel points to
    its node's canonical pixel, a canonical pixel to its parent node's, the root's to itself. `connectivity`: 4 or 8. `variant`: one of variants("maxtree"); None, the fastest here.
    """
    return _run("maxtree", [("image", image)], _options(variant, connectivity=connectivity))[0]


def area_opening(image, area, *, connectivity=4, variant=None):
    """The area opening of a 2D uint8 or uint16 image: each pixel takes the level of the deepest
    node on its path to the root whose area is at least `area` pixels (>= 1); the root is always
    kept, so nothing falls below min(image) (scikit-image's area_opening gives zeros where the whole
    image is smaller than `area`).

    Returns an array like image. `connectivity`: 4 or 8. `variant`: one of
    variants("area-opening"); None, the fastest here.
    """
    options = _options(variant, area=area, connectivity=connectivity)
    return _run("area-opening", [("image", image)], options)[0]


def _with_command_help(function, family):
    # Each function's help ends with its run command's, from the same declaration as `repix help`.
    declared = run_interface(family)
    lines = [f"Same as `repix run {family}`: {declared['summary']}."]
    taken = set(_inspect.signature(function).parameters)
    for o in declared["options"]:
        if o["name"] in taken:
            default = "" if o["flag"] else f" (command line default: {o['default']})"
            lines.append(f"  {o['name']}: {o['help']}{default}")
    function.__doc__ = (function.__doc__ or "").rstrip() + "\n\n    " + "\n    ".join(lines) + "\n"


for _function, _family in ((ecc, "ecc"), (reconstruct, "reconstruct"), (edt, "edt"), (ranklet, "ranklet"),
                           (auto_mi, "auto-mi"), (ami, "ami"), (maxtree, "maxtree"), (area_opening, "area-opening")):
    _with_command_help(_function, _family)
del _function, _family
