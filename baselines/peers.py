#!/usr/bin/env python3
"""Python peers for `repix bench`: other libraries' implementations, timed the way repix times
its own variants, so their numbers can sit beside ours in one report.

    peers.py list
        JSON list of the peers importable here: [{"family", "id", "description", "gpu",
        "exact", "scope"}, ...]
    peers.py run --peer ID --inputs A.npy [B.npy] --params JSON [RULE] --warmup W --output OUT.npy
        runs the peer W untimed times, then timed until repix's stopping rule holds (RULE:
        --min-samples N --max-samples N --min-time S --max-noise PCT --max-time S, as
        algorithms/core/stopping_rule.hpp; --samples N: exactly N); writes the last result to
        OUT.npy (float32 distances for edt, the mask's dtype for reconstruct, float32 [hi, lo]
        pairs of A_x and A_y for auto-mi, the parent image's indices as uint16 (2, H, W) low/high
        halves for maxtree) and prints one JSON line
        {"samples_ms": [...], "scope": "kernel"|"end-to-end", "stopped_by": ..., "sampling_s": ...}.

Scopes: CPU peers are timed around the library call (the arrays are already in memory: the
end-to-end scope of a CPU variant). GPU peers (CuPy) get their input already on the GPU and are
timed with CUDA events around the call (the kernel scope), after a device synchronisation.
Errors: one line on stderr, exit status 1.
"""
import argparse
import json
import sys
import time


def _edt_scipy(inputs, params):
    from scipy import ndimage
    import numpy as np
    src = inputs[0] != 0
    return lambda: ndimage.distance_transform_edt(src).astype(np.float32, copy=False)


def _edt_opencv(inputs, params):
    import cv2
    import numpy as np
    # distanceTransform measures to the nearest zero pixel of an 8-bit image: nonzero -> 255.
    src = np.where(inputs[0] != 0, 255, 0).astype(np.uint8)
    return lambda: cv2.distanceTransform(src, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)


def _edt_cupy(inputs, params):
    import cupy
    from cupyx.scipy import ndimage
    src = cupy.asarray(inputs[0] != 0)
    # float64_distances=False: float32 output, as ours (and half the bytes written).
    return lambda: ndimage.distance_transform_edt(src, float64_distances=False)


def _reconstruct_skimage(inputs, params):
    import numpy as np
    from skimage.morphology import reconstruction
    marker, mask = inputs
    conn = int(params.get("connectivity", 8))
    footprint = np.ones((3, 3), bool) if conn == 8 else np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)
    return lambda: reconstruction(marker, mask, method="dilation", footprint=footprint).astype(mask.dtype)


def _skimage_connectivity(params):  # scikit-image counts neighbour steps: 1 = 4-, 2 = 8-connected
    return 1 if int(params.get("connectivity", 4)) == 4 else 2


# maxtree: scikit-image's max_tree (Berger-style union-find, 1 thread). Its parent image (int64
# linear indices; a node's representative is not its smallest pixel: repix maps it to the normal
# form) is written as uint16 (2, H, W), the low then the high 16 bits of each index: repix reads no
# wider integers from .npy.
def _maxtree_skimage(inputs, params):
    from skimage.morphology import max_tree
    image = inputs[0]
    conn = _skimage_connectivity(params)

    def call():
        return max_tree(image, connectivity=conn)[0]

    call.encode = _parent_halves  # after the timed calls, on the last result only
    return call


def _parent_halves(parent):  # int64 indices -> uint16 (2, H, W): low, then high 16 bits
    import numpy as np
    parent = parent.astype(np.int64)
    return np.stack([(parent & 0xFFFF).astype(np.uint16), (parent >> 16).astype(np.uint16)])


# maxtree: Higra's component_tree_max_tree on the pixel adjacency graph (graph built in the timed
# call, as a user would). Its tree has the pixels as leaves and one internal node per max-tree node,
# each with at least one pixel child; after the timed calls the last tree is written as a parent
# image in the normal form's shape: a node's pixel is its smallest pixel child.
def _higra_graph(image, params):
    import higra as hg
    if int(params.get("connectivity", 4)) == 4:
        return hg.get_4_adjacency_graph(image.shape)
    return hg.get_8_adjacency_graph(image.shape)


def _maxtree_higra(inputs, params):
    import numpy as np
    import higra as hg
    image = inputs[0]

    def call():
        return hg.component_tree_max_tree(_higra_graph(image, params), image)[0]

    def encode(tree):
        parents = tree.parents().astype(np.int64)
        n = image.size
        node_of_pixel = parents[:n]
        nodes, first = np.unique(node_of_pixel, return_index=True)  # first = the smallest pixel child
        pixel_of_node = np.full(parents.size, -1, np.int64)
        pixel_of_node[nodes] = first
        if (pixel_of_node[n:] < 0).any():
            raise ValueError("higra's max-tree has a node with no pixel of its own")
        parent = pixel_of_node[node_of_pixel]
        parent[first] = pixel_of_node[parents[nodes]]  # a node's pixel -> its parent node's pixel
        return _parent_halves(parent.reshape(image.shape))
    call.encode = encode
    return call


# area-opening: scikit-image's area_opening (max_tree, area, direct filter; 1 thread). It returns
# zeros where the whole image is smaller than A (repix keeps the root): repix leaves those inputs out.
def _area_opening_skimage(inputs, params):
    from skimage.morphology import area_opening
    image = inputs[0]
    conn = _skimage_connectivity(params)
    area = int(params["area"])
    return lambda: area_opening(image, area_threshold=area, connectivity=conn)


# area-opening with Higra as its documentation filters a component tree: the max-tree, its area
# attribute, then each pixel takes the level of its nearest node that is not removed (area < A
# removed; the root is kept, as repix's).
def _area_opening_higra(inputs, params):
    import higra as hg
    image = inputs[0]
    area = int(params["area"])

    def call():
        tree, levels = hg.component_tree_max_tree(_higra_graph(image, params), image)
        return hg.reconstruct_leaf_data(tree, levels, hg.attribute_area(tree) < area)
    return call


# auto-mi: the feature stage as a Python user would write it. Labels 0..256 (257 values); per lag
# the pairs (L[y, x], L[y, x+i]) (horizontal) or (L[y, x], L[y+i, x]) (vertical); NMI =
# I / sqrt(H(X) H(Y)), 0 when X or Y takes one value in that overlap (repix's rule; scikit-learn
# returns 1.0 when both do, so that case is decided here before calling it). Output: float32
# [hi_x, lo_x, hi_y, lo_y] with A = hi + lo in float64 (repix reads uint8/uint16/float32 .npy;
# the split keeps ~1e-14 of the float64 value, well inside the family's 1e-9 tolerance).
def _lag_pairs(labels):
    h, w = labels.shape
    for i in range(1, w):
        yield 0, labels[:, :w - i], labels[:, i:]
    for i in range(1, h):
        yield 1, labels[:h - i, :], labels[i:, :]


def _nmi_numpy(x, y):
    import numpy as np
    joint = np.bincount((x.astype(np.int64) * 257 + y).ravel(), minlength=257 * 257).reshape(257, 257)
    px, py = joint.sum(axis=1), joint.sum(axis=0)
    if np.count_nonzero(px) < 2 or np.count_nonzero(py) < 2:
        return 0.0
    n = float(joint.sum())

    def entropy(c):
        p = c[c > 0] / n
        return float(-(p * np.log(p)).sum())
    hx, hy, hxy = entropy(px), entropy(py), entropy(joint)
    return (hx + hy - hxy) / np.sqrt(hx * hy)


def _hi_lo(values):
    import numpy as np
    out = []
    for v in values:
        hi = np.float32(v)
        out += [hi, np.float32(v - np.float64(hi))]
    return np.array(out, dtype=np.float32)


def _auto_mi_numpy(inputs, params):
    import numpy as np
    labels = inputs[0].astype(np.int64)

    def call():
        out = np.zeros(2)
        for d, a, b in _lag_pairs(labels):
            out[d] += _nmi_numpy(a, b)
        return out
    return lambda: _hi_lo(call())


def _auto_mi_sklearn(inputs, params):
    import numpy as np
    from sklearn.metrics import normalized_mutual_info_score
    labels = inputs[0].astype(np.int64)

    def call():
        out = np.zeros(2)
        for d, a, b in _lag_pairs(labels):
            x, y = a.ravel(), b.ravel()
            if x.min() == x.max() or y.min() == y.max():
                continue  # one value on a side: NMI 0 (see above)
            out[d] += normalized_mutual_info_score(x, y, average_method="geometric")
        return out
    return lambda: _hi_lo(call())


# id -> (family, module to import, description, gpu, exact, scope, factory)
PEERS = {
    "scipy-edt": ("edt", "scipy.ndimage", "scipy.ndimage.distance_transform_edt (exact, 1 thread)",
                  False, True, "end-to-end", _edt_scipy),
    "opencv-edt": ("edt", "cv2", "cv2.distanceTransform DIST_L2 DIST_MASK_PRECISE (exact, OpenCV threads)",
                   False, True, "end-to-end", _edt_opencv),
    "cupy-edt": ("edt", "cupyx.scipy.ndimage", "cupyx.scipy.ndimage.distance_transform_edt (PBA+, exact, float32)",
                 True, True, "kernel", _edt_cupy),
    "skimage-reconstruction": ("reconstruct", "skimage.morphology",
                               "skimage.morphology.reconstruction method=dilation (1 thread)",
                               False, True, "end-to-end", _reconstruct_skimage),
    "skimage-maxtree": ("maxtree", "skimage.morphology", "skimage.morphology.max_tree (1 thread)",
                        False, True, "end-to-end", _maxtree_skimage),
    "higra-maxtree": ("maxtree", "higra", "higra.component_tree_max_tree on the pixel adjacency graph",
                      False, True, "end-to-end", _maxtree_higra),
    "skimage-area-opening": ("area-opening", "skimage.morphology", "skimage.morphology.area_opening (1 thread)",
                             False, True, "end-to-end", _area_opening_skimage),
    "higra-area-opening": ("area-opening", "higra",
                           "higra: max-tree, attribute_area, reconstruct_leaf_data of the nodes with area >= A",
                           False, True, "end-to-end", _area_opening_higra),
    "numpy-auto-mi": ("auto-mi", "numpy", "NumPy: np.bincount joint histogram per lag, entropies in float64 (1 thread)",
                      False, True, "end-to-end", _auto_mi_numpy),
    "sklearn-auto-mi": ("auto-mi", "sklearn.metrics",
                        "scikit-learn normalized_mutual_info_score(average_method='geometric') per lag (1 thread)",
                        False, True, "end-to-end", _auto_mi_sklearn),
}


def _importable(module, gpu):
    try:
        __import__(module)
        if gpu:
            import cupy
            return cupy.cuda.runtime.getDeviceCount() > 0
        return True
    except Exception:
        return False


def cmd_list():
    out = []
    for pid, (family, module, desc, gpu, exact, scope, _) in PEERS.items():
        if _importable(module, gpu):
            out.append({"family": family, "id": pid, "description": desc, "gpu": gpu, "exact": exact,
                        "scope": scope})
    print(json.dumps(out))


def _library_version(module):
    name = module.split(".")[0]
    version = getattr(sys.modules.get(name), "__version__", None)
    if version is None:  # higra has no __version__: ask its installed distribution
        try:
            from importlib.metadata import version as dist_version
            version = dist_version(name)
        except Exception:
            version = "?"
    return version


# repix's stopping rule (algorithms/core/stopping_rule.hpp), the same decisions on the same samples:
# at least min_samples (0: 3 when the first sample takes 10 ms or more, else 10) and min_time of
# sampled time, then stop once the median's 95 % interval is within +-max_noise %, never past
# max_time seconds once the minimum is in, nor past max_samples.
LONG_SAMPLE_MS, MIN_SAMPLES_LONG, MIN_SAMPLES_SHORT = 10.0, 3, 10


def _binomial_half_cdf(n, k):
    import math
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_half_n = n * math.log(0.5)
    total = sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n)
                for i in range(k + 1))
    return min(1.0, total)


def median_noise_pct(samples):
    """Half-width of the median's distribution-free 95 % interval over the median, in %."""
    import math
    n = len(samples)
    if n < 2:
        return float("nan")
    if n >= 64:
        j = max(1, int(math.floor((n - 1.96 * math.sqrt(n)) / 2.0)))
    else:
        j = 1
        while j + 1 <= n // 2 and 1 - 2 * _binomial_half_cdf(n, j) >= 0.95:
            j += 1
    s = sorted(samples)
    lo, hi = s[j - 1], s[n - j]
    h = (n - 1) * 0.5
    a = int(math.floor(h))
    median = s[a] + (h - a) * (s[min(a + 1, n - 1)] - s[a])
    return 100.0 * (hi - lo) / (2.0 * median) if median > 0 else float("nan")


def sample_until(rule, sample):
    """(samples, stopped_by, sampling_s): sample() (one timed call, ms) until the rule stops."""
    samples, total_ms, minimum = [], 0.0, rule["min_samples"]
    t0 = time.perf_counter()
    while True:
        ms = sample()
        samples.append(ms)
        total_ms += ms
        elapsed = time.perf_counter() - t0
        if minimum == 0:
            minimum = min(rule["max_samples"], MIN_SAMPLES_LONG if ms >= LONG_SAMPLE_MS else MIN_SAMPLES_SHORT)
        n = len(samples)
        if n >= rule["max_samples"]:
            return samples, "max-samples", elapsed
        if n < minimum:
            continue
        if rule["max_noise"] > 0 and total_ms >= rule["min_time"] * 1e3 and median_noise_pct(samples) <= rule["max_noise"]:
            return samples, "noise", elapsed
        if rule["max_time"] > 0 and elapsed >= rule["max_time"]:
            return samples, "max-time", elapsed


def cmd_run(a):
    import numpy as np
    if a.peer not in PEERS:
        raise ValueError(f"unknown peer '{a.peer}' (known: {', '.join(PEERS)})")
    family, module, _, gpu, _, scope, factory = PEERS[a.peer]
    inputs = [np.load(p, allow_pickle=False) for p in a.inputs]
    call = factory(inputs, json.loads(a.params))
    if a.samples is not None:  # exactly N
        rule = {"min_samples": a.samples, "max_samples": a.samples, "min_time": 0, "max_noise": 0, "max_time": 0}
    else:
        rule = {"min_samples": a.min_samples, "max_samples": a.max_samples, "min_time": a.min_time,
                "max_noise": a.max_noise, "max_time": a.max_time}
    last = [None]
    if gpu:
        import cupy
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(a.warmup):
            call()
        cupy.cuda.Device().synchronize()

        def sample():
            start.record()
            last[0] = call()
            stop.record()
            stop.synchronize()
            return cupy.cuda.get_elapsed_time(start, stop)
    else:
        for _ in range(a.warmup):
            call()

        def sample():
            last[0] = None  # the previous result freed before the clock starts
            t0 = time.perf_counter()
            last[0] = call()
            return (time.perf_counter() - t0) * 1e3
    samples, stopped_by, sampling_s = sample_until(rule, sample)
    result = cupy.asnumpy(last[0]) if gpu else last[0]
    encode = getattr(call, "encode", None)  # a peer's output format for repix, untimed
    if encode is not None:
        result = encode(result)
    np.save(a.output, np.ascontiguousarray(result))
    print(json.dumps({"samples_ms": samples, "scope": scope, "version": _library_version(module),
                      "stopped_by": stopped_by, "sampling_s": sampling_s}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("--peer", required=True)
    r.add_argument("--inputs", nargs="+", required=True)
    r.add_argument("--params", default="{}")
    r.add_argument("--samples", type=int, default=None, help="exactly N samples (instead of the rule)")
    r.add_argument("--min-samples", type=int, default=0)
    r.add_argument("--max-samples", type=int, default=1000)
    r.add_argument("--min-time", type=float, default=0.1)
    r.add_argument("--max-noise", type=float, default=1.0)
    r.add_argument("--max-time", type=float, default=1.0)
    r.add_argument("--warmup", type=int, default=1)
    r.add_argument("--output", required=True)
    a = p.parse_args()
    try:
        cmd_list() if a.cmd == "list" else cmd_run(a)
    except Exception as e:  # one line, as every repix error
        print(f"peers.py: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
