"""repix from Python: the command line's families on NumPy arrays, in memory.

Each function is `repix run <family>` without the files: the same checks, default variant (the
fastest this machine can run) and error messages. A wrong element type raises TypeError, any
other bad input or option ValueError. The GIL is released while a family computes.

    >>> import numpy as np, repix
    >>> values, ecc = repix.ecc(np.array([[0, 1], [1, 0]], dtype=np.uint8))
"""

import json as _json

from . import _native

__all__ = ["__version__", "tool_info", "families", "variants", "ecc", "edt"]


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


def families():
    """Every family, in repix's order (`repix list families`)."""
    return _native.families()


def variants(family):
    """The variants of `family` this machine can run (GPU variants where a GPU is usable), in
    ablation order."""
    return _native.variants(_text("family", family))


def _text(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _options(variant, **given):
    # The command line's option names and text values: the family's own option table checks them
    # (ranges, messages). None means the command line's default.
    out = {}
    if variant is not None:
        out["variant"] = _text("variant", variant)
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        out[name] = str(value)
    return out


def ecc(image, *, variant=None, threads=None):
    """The Euler characteristic curve of a 1-3 dimensional image (uint8, uint16 or float32, finite).

    Returns (values, ecc): the image's distinct values ascending, in its own dtype (-0.0 folded
    into 0.0), and the ECC at each (int64). `variant`: one of variants("ecc"); None, the fastest
    here. `threads`: the OpenMP threads of the CPU variants (None or 0: OpenMP's default).
    """
    values, curve = _native.run("ecc", [("image", image)], _options(variant, threads=threads))
    return values, curve


def edt(mask, *, return_sites=False, variant=None):
    """The Euclidean distance transform of a 2D mask (uint8, uint16 or float32; zero: background).

    Returns the float32 distance of every pixel to its nearest zero pixel, and with
    return_sites=True also the int64 linear index of that pixel: (distances, sites). `variant`:
    one of variants("edt"); None, an exact one (the fastest here).
    """
    options = _options(variant)
    if return_sites:
        options["sites"] = ""
    out = _native.run("edt", [("mask", mask)], options)
    return (out[0], out[1]) if return_sites else out[0]
