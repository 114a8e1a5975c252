"""The Python module's benchmark: what a Python call adds to the same run in C++, and each
function against its best Python peer on this machine.

usage: python3 overhead_and_peers.py --out REPORT.json [--reps N] [--quick]

Overhead: for each function on a tiny (16x16) and a 1 Mpx (1024x1024) input, the median of
--reps warm calls (fewer where they would take over 1 s; at least 3) through `repix.<function>`
(time.perf_counter around each call) against the median of the same run called as often from C++
alone (`repix._native.time_run`: the arrays borrowed once, no Python between calls), the two
alternating in batches of 10. added = Python's median - C++'s median. Where a GPU and CuPy are here, the same again with CuPy arrays
(the call and a synchronisation of CuPy's stream against `repix._native.time_run_device`, the
device run synchronised after each call, its outputs copied into buffers allocated once).

Peers: each function and the peer that computes the same thing (scikit-image, SciPy, CuPy,
scikit-learn), on the same input (1024^2; 512^2 for scikit-image's max-tree and area opening,
256^2 for scikit-learn's per-lag NMI), outputs compared before timing; a peer not installed here is
listed with that reason, never as a number. Medians of warm calls, as above (CuPy: synchronised
after each).

Writes one JSON report (the machine, repix's version, every sample) and prints a Markdown table.
"""

import argparse
import importlib
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import repix
from repix import _native

FAMILY = {"ecc": "ecc", "reconstruct": "reconstruct", "edt": "edt", "ranklet": "ranklet", "auto_mi": "auto-mi",
          "ami": "ami", "maxtree": "maxtree", "area_opening": "area-opening"}


def inputs(side, xp=np):
    # xp: numpy, or cupy for the same arrays on the device.
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (side, side), dtype=np.uint8)
    marker = (image * (rng.random(image.shape) < 0.01)).astype(np.uint8)
    binary = (rng.random((side, side)) > 0.01).astype(np.uint8)
    labels = rng.integers(0, 16, (side, side), dtype=np.uint8)
    image, marker, binary, labels = (xp.asarray(a) for a in (image, marker, binary, labels))
    return {
        "ecc": ([("image", image)], {}, lambda v: repix.ecc(image, variant=v)),
        "reconstruct": ([("marker", marker), ("mask", image)], {}, lambda v: repix.reconstruct(marker, image, variant=v)),
        "edt": ([("mask", binary)], {}, lambda v: repix.edt(binary, variant=v)),
        "ranklet": ([("image", image)], {}, lambda v: repix.ranklet(image, variant=v)),
        "auto_mi": ([("labels", labels)], {}, lambda v: repix.auto_mi(labels, variant=v)),
        "ami": ([("image", image)], {}, lambda v: repix.ami(image, variant=v)),
        "maxtree": ([("image", image)], {}, lambda v: repix.maxtree(image, variant=v)),
        "area_opening": ([("image", image)], {"area": "100"}, lambda v: repix.area_opening(image, 100, variant=v)),
    }


def timed(call, reps, sync=None, budget_s=2.0):
    # At most `reps` samples after one warm call, fewer where they would take more than about
    # budget_s (at least 3; one where a call takes over 10 x budget_s: scikit-image's max_tree of
    # 1 Mpx of 8-bit noise took about 70 s a call on a 16-core Xeon).
    call()  # warm: the CUDA context, the caches (the first call of a process pays them)
    t0 = time.perf_counter()
    call()  # the estimate of one call, which bounds the samples
    if sync:
        sync()
    warm = time.perf_counter() - t0
    reps = max(1 if warm > 10 * budget_s else 3, min(reps, int(budget_s / max(warm, 1e-9))))
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        if sync:
            sync()
        samples.append(time.perf_counter() - t0)
    return samples


def interleaved(python_call, cpp_calls, reps, sync=None, batch=10):
    # The Python calls and the C++ ones alternate in batches (`batch` calls of each, until `reps`
    # of each or about 2 s), so that a drift of the machine (clocks, other load) falls on both
    # alike: measured apart, the medians of the same calls moved by tens of microseconds between
    # two runs on one H200 host.
    def one_python():
        t0 = time.perf_counter()
        python_call()
        if sync:
            sync()
        return time.perf_counter() - t0

    python_call(), cpp_calls(1)  # warm: the plan, the caches
    estimate = one_python()
    reps = max(3, min(reps, int(1.0 / max(estimate, 1e-9))))
    py, cpp = [], []
    while len(py) < reps:
        n = min(batch, reps - len(py))
        py += [one_python() for _ in range(n)]
        cpp += cpp_calls(n)
    return py, cpp


def overhead(reps, sides, cupy=None):
    rows = []
    for side in sides:
        for kind, xp in (("numpy", np), ("cupy", cupy)):
            if xp is None:
                continue
            for name, (ins, opts, call) in inputs(side, xp).items():
                if kind == "numpy":
                    py, cpp = interleaved(lambda: call(None), lambda n: _native.time_run(FAMILY[name], ins, opts, n), reps)
                else:
                    stream = cupy.cuda.get_current_stream()
                    described = [(k, a.data.ptr, a.dtype.str, list(a.shape)) for k, a in ins]
                    py, cpp = interleaved(
                        lambda: call(None),
                        lambda n: _native.time_run_device(FAMILY[name], described, opts, stream.ptr, n), reps,
                        stream.synchronize)
                log(f"overhead {name} {side}x{side} {kind}: {len(py)} calls each")
                rows.append({"function": name, "input": f"{side}x{side}", "arrays": kind, "python_s": py, "cpp_s": cpp,
                             "python_median_s": statistics.median(py), "cpp_median_s": statistics.median(cpp),
                             "added_us": 1e6 * (statistics.median(py) - statistics.median(cpp))})
    return rows


def nodes(image, parent):
    """A parent image's node count (its canonical pixels): the same tree has the same count in any
    canonical form (the exact normal form is the tests' business)."""
    f, p = image.ravel(), parent.ravel()
    return int(((p == np.arange(f.size)) | (f[p] != f)).sum())


def log(line):
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def have(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        return str(e)


def peers(reps, side, tree_side, auto_mi_side):
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (side, side), dtype=np.uint8)
    # scikit-image's max-tree grows faster than linearly on noise (0.09 s at 256^2, 0.83 s at
    # 512^2 here; about 40 s a call at 1024^2 on a 16-core Xeon): its peers get a smaller image.
    tree = rng.integers(0, 256, (tree_side, tree_side), dtype=np.uint8)
    marker = (image * (rng.random(image.shape) < 0.01)).astype(np.uint8)
    binary = (rng.random((side, side)) > 0.01).astype(np.uint8)
    labels = rng.integers(0, 16, (auto_mi_side, auto_mi_side), dtype=np.uint8)
    skm = have("skimage.morphology")
    ndi = have("scipy.ndimage")
    cp = have("cupy")
    metrics = have("sklearn.metrics")
    rows = []

    def row(function, peer, input_name, ours, theirs, same, sync=None, why=None):
        r = {"function": function, "peer": peer, "input": input_name}
        if why:
            r["skipped"] = why
            rows.append(r)
            return
        r["verified"] = bool(same())
        r["ours_s"] = timed(ours, reps)
        r["peer_s"] = timed(theirs, reps, sync)
        log(f"peer {function} {peer}: {len(r['ours_s'])} / {len(r['peer_s'])} calls")
        r["ours_median_s"] = statistics.median(r["ours_s"])
        r["peer_median_s"] = statistics.median(r["peer_s"])
        r["speedup"] = r["peer_median_s"] / r["ours_median_s"]
        rows.append(r)

    n = f"{side}x{side}"
    fp = np.ones((3, 3), bool)
    if isinstance(skm, str):
        for f in ("reconstruct", "maxtree", "area_opening"):
            row(f, "scikit-image", n, None, None, None, why=skm)
    else:
        row("reconstruct", "skimage.morphology.reconstruction", n, lambda: repix.reconstruct(marker, image),
            lambda: skm.reconstruction(marker, image, footprint=fp),
            lambda: np.array_equal(repix.reconstruct(marker, image), skm.reconstruction(marker, image, footprint=fp)))
        t = f"{tree_side}x{tree_side}"
        row("maxtree", "skimage.morphology.max_tree", t, lambda: repix.maxtree(tree),
            lambda: skm.max_tree(tree, connectivity=1),
            lambda: nodes(tree, repix.maxtree(tree)) == nodes(tree, skm.max_tree(tree, connectivity=1)[0]))
        row("area_opening", "skimage.morphology.area_opening", t, lambda: repix.area_opening(tree, 100),
            lambda: skm.area_opening(tree, 100, connectivity=1),
            lambda: np.array_equal(repix.area_opening(tree, 100), skm.area_opening(tree, 100, connectivity=1)))
    if isinstance(ndi, str):
        row("edt", "scipy.ndimage.distance_transform_edt", n, None, None, None, why=ndi)
    else:
        row("edt", "scipy.ndimage.distance_transform_edt", n, lambda: repix.edt(binary),
            lambda: ndi.distance_transform_edt(binary),
            lambda: np.allclose(repix.edt(binary), ndi.distance_transform_edt(binary), rtol=1e-6))
    if isinstance(cp, str):
        row("edt", "cupyx.scipy.ndimage.distance_transform_edt", n, None, None, None, why=cp)
    else:
        import cupyx.scipy.ndimage as cndi
        on_gpu = cp.asarray(binary)
        sync = cp.cuda.Device().synchronize
        row("edt", "cupyx.scipy.ndimage.distance_transform_edt (CuPy array in and out; ours: NumPy)", n,
            lambda: repix.edt(binary), lambda: cndi.distance_transform_edt(on_gpu),
            lambda: np.allclose(repix.edt(binary), cp.asnumpy(cndi.distance_transform_edt(on_gpu)), rtol=1e-6),
            sync=sync)
        row("edt", "cupyx.scipy.ndimage.distance_transform_edt (CuPy in and out, both)", n,
            lambda: (repix.edt(on_gpu), sync()), lambda: cndi.distance_transform_edt(on_gpu),
            lambda: bool(cp.allclose(repix.edt(on_gpu), cndi.distance_transform_edt(on_gpu), rtol=1e-6)),
            sync=sync)
        d_image, d_marker = cp.asarray(image), cp.asarray(marker)
        if not isinstance(skm, str):
            row("reconstruct", "skimage.morphology.reconstruction (ours: CuPy in and out)", n,
                lambda: (repix.reconstruct(d_marker, d_image), sync()),
                lambda: skm.reconstruction(marker, image, footprint=fp),
                lambda: np.array_equal(cp.asnumpy(repix.reconstruct(d_marker, d_image)),
                                       skm.reconstruction(marker, image, footprint=fp)))
            d_tree = cp.asarray(tree)
            row("maxtree", "skimage.morphology.max_tree (ours: CuPy in and out)", f"{tree_side}x{tree_side}",
                lambda: (repix.maxtree(d_tree), sync()), lambda: skm.max_tree(tree, connectivity=1),
                lambda: nodes(tree, cp.asnumpy(repix.maxtree(d_tree))) == nodes(tree, skm.max_tree(tree, connectivity=1)[0]))
    m = f"{auto_mi_side}x{auto_mi_side}"
    if isinstance(metrics, str):
        row("auto_mi", "sklearn.metrics.normalized_mutual_info_score", m, None, None, None, why=metrics)
    else:
        def sk_auto_mi():
            a = labels
            h = sum(metrics.normalized_mutual_info_score(a[:, :-i].ravel(), a[:, i:].ravel(), average_method="geometric")
                    for i in range(1, a.shape[1]))
            v = sum(metrics.normalized_mutual_info_score(a[:-i].ravel(), a[i:].ravel(), average_method="geometric")
                    for i in range(1, a.shape[0]))
            return np.array([h, v])
        row("auto_mi", "sklearn.metrics.normalized_mutual_info_score, one call per lag", m,
            lambda: repix.auto_mi(labels), sk_auto_mi,
            lambda: np.allclose(repix.auto_mi(labels), sk_auto_mi(), rtol=1e-9))
    hg = have("higra")
    if isinstance(hg, str):
        row("maxtree", "higra.component_tree_max_tree", f"{tree_side}x{tree_side}", None, None, None, why=hg)
    else:
        graph = hg.get_4_adjacency_graph(tree.shape)
        row("maxtree", "higra.component_tree_max_tree", f"{tree_side}x{tree_side}", lambda: repix.maxtree(tree),
            lambda: hg.component_tree_max_tree(graph, tree),
            lambda: nodes(tree, repix.maxtree(tree)) == hg.component_tree_max_tree(graph, tree)[0].num_vertices()
            - tree.size)
    for f in ("ecc", "ranklet", "ami"):
        row(f, "none", n, None, None, None,
            why="no Python package computing it is installed here (gpuecc: no wheel on PyPI for CPython "
                "3.12 x86_64; GUDHI: not on this machine)"
            if f == "ecc" else "no Python library computes it")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="tiny inputs only, few reps (a test of the script)")
    a = ap.parse_args()
    reps = 5 if a.quick else a.reps
    sides = [16] if a.quick else [16, 1024]
    report = {
        "schema_version": 1, "kind": "python-bench", "repix": repix.tool_info(), "version": repix.__version__,
        "gpu": _native.gpu_available(), "python": sys.version.split()[0], "numpy": np.__version__,
        "machine": platform.machine(), "processor": platform.processor(), "node": platform.node(),
        "overhead": [], "peers": [],
    }

    def save():  # after each part: a run cut short still leaves what it measured
        with open(a.out + ".part", "w") as f:
            json.dump(report, f, indent=1)
        os.replace(a.out + ".part", a.out)

    cupy = have("cupy") if _native.gpu_available() else "no GPU here"
    report["cupy"] = cupy.__version__ if not isinstance(cupy, str) else "not used: " + cupy
    if not isinstance(cupy, str):
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        report["gpu_name"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        report["cuda_driver"] = cupy.cuda.runtime.driverGetVersion()
    report["overhead"] = overhead(reps, sides, None if isinstance(cupy, str) else cupy)
    save()
    report["peers"] = peers(max(5, reps // 20), 64 if a.quick else 1024, 64 if a.quick else 512, 32 if a.quick else 256)
    save()
    print("| function | input | arrays | Python call (us) | C++ call (us) | added (us) |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for r in report["overhead"]:
        print(f"| {r['function']} | {r['input']} | {r['arrays']} | {1e6 * r['python_median_s']:.1f} | "
              f"{1e6 * r['cpp_median_s']:.1f} | {r['added_us']:.1f} |")
    print()
    print("| function | input | peer | repix (ms) | peer (ms) | repix faster | verified |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for r in report["peers"]:
        if "skipped" in r:
            print(f"| {r['function']} | {r['input']} | {r['peer']} | - | - | skipped: {r['skipped']} | - |")
        else:
            print(f"| {r['function']} | {r['input']} | {r['peer']} | {1e3 * r['ours_median_s']:.3f} | "
                  f"{1e3 * r['peer_median_s']:.3f} | {r['speedup']:.1f}x | {'yes' if r['verified'] else 'NO'} |")


if __name__ == "__main__":
    main()
