#!/usr/bin/env python3
"""auto-mi against scikit-learn and scikit-image (issue 13's test-side check in Python).

For seeded label images and crops of scikit-image's grey images (camera, brick, grass, gravel
where this scikit-image ships them), `repix run auto-mi --json` gives every lag's NMI; each is
compared with

  * scikit-learn's normalized_mutual_info_score(x, y, average_method='geometric') over the lag's
    pairs (when both sides are constant scikit-learn calls the labelings identical and returns 1;
    our semantics say 0 when either side takes a single value: those lags must be 0 here), and
  * the NMI computed from scikit-image's graycomatrix (distance = lag, angle 0 horizontally,
    pi/2 vertically) after checking that matrix against the joint histogram of the definition
    (pairs (L[y,x], L[y,x+i]) and (L[y,x], L[y+i,x]); skimage's pi/2 pairs a pixel with the one
    above it, so its matrix is the transpose of ours: NMI is symmetric).

Tolerance: max(1e-9 |v|, 1e-12), the issue's equivalence. Exit 0 when everything matches, 1 on a
mismatch, 77 (CTest's skip) when numpy, scikit-learn or scikit-image is missing.

  python3 tests/ami/auto_mi/check_sklearn.py --repix build/release/bin/repix [--variants seq,omp,gpu-opt]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from sklearn.metrics import normalized_mutual_info_score
    from skimage.feature import graycomatrix
    import skimage.data
except ImportError as e:  # the development machines have none of them
    print(f"check_sklearn: skipped: {e} (runs where numpy, scikit-learn and scikit-image are installed)")
    sys.exit(77)


def close(got, want):
    return abs(got - want) <= max(1e-9 * abs(want), 1e-12)


def nmi_from_joint(p):
    """NMI of a joint count matrix, entropies from probabilities (natural log)."""
    n = p.sum()
    px, py = p.sum(axis=1), p.sum(axis=0)
    if np.count_nonzero(px) <= 1 or np.count_nonzero(py) <= 1:
        return 0.0

    def h(c):
        c = c[c > 0] / n
        return float(-(c * np.log(c)).sum())

    hx, hy, hxy = h(px), h(py), h(p.ravel())
    return (hx + hy - hxy) / np.sqrt(hx * hy)


def lag_pairs(img, direction, lag):
    if direction == "horizontal":
        return img[:, :-lag].ravel(), img[:, lag:].ravel()
    return img[:-lag, :].ravel(), img[lag:, :].ravel()


def check_image(name, img, repix, variants, tmp, failures):
    path = os.path.join(tmp, "labels.npy")
    np.save(path, img)
    levels = int(img.max()) + 1
    for variant in variants:
        out = os.path.join(tmp, "f.json")
        r = subprocess.run([repix, "run", "auto-mi", "--variant", variant, "--input", path, "--json", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{name} {variant}: repix failed: {r.stderr.strip()}")
            continue
        with open(out) as f:
            got = json.load(f)
        for direction, key, angle in (("horizontal", "nmi_horizontal", 0.0), ("vertical", "nmi_vertical", np.pi / 2)):
            values = got[key]
            side = img.shape[1] if direction == "horizontal" else img.shape[0]
            if len(values) != max(side - 1, 0):
                failures.append(f"{name} {variant} {direction}: {len(values)} lags, want {side - 1}")
                continue
            for lag, v in enumerate(values, start=1):
                x, y = lag_pairs(img, direction, lag)
                if variant == variants[0]:  # the histogram checks do not depend on the variant
                    ours = np.zeros((levels, levels), dtype=np.int64)
                    np.add.at(ours, (x.astype(np.int64), y.astype(np.int64)), 1)
                    glcm = graycomatrix(img, [lag], [angle], levels=max(levels, 2))[:levels, :levels, 0, 0]
                    if not (np.array_equal(glcm, ours) or np.array_equal(glcm, ours.T)):
                        failures.append(f"{name} {direction} lag {lag}: graycomatrix differs from the pair histogram")
                want_glcm = nmi_from_joint(graycomatrix(img, [lag], [angle], levels=max(levels, 2))[:, :, 0, 0].astype(np.float64))
                if not close(v, want_glcm):
                    failures.append(f"{name} {variant} {direction} lag {lag}: {v!r} vs graycomatrix NMI {want_glcm!r}")
                single = len(np.unique(x)) <= 1 or len(np.unique(y)) <= 1
                if single:
                    if v != 0.0:
                        failures.append(f"{name} {variant} {direction} lag {lag}: single-valued side, got {v!r}, want 0")
                    continue
                want = normalized_mutual_info_score(x, y, average_method="geometric")
                if not close(v, want):
                    failures.append(f"{name} {variant} {direction} lag {lag}: {v!r} vs scikit-learn {want!r}")
        print(f"check_sklearn: {name} {img.shape} {img.dtype} {variant}: "
              f"{len(got['nmi_horizontal']) + len(got['nmi_vertical'])} lags compared")


def images():
    rng = np.random.default_rng(13)
    yield "uniform-2", rng.integers(0, 2, (23, 31), dtype=np.uint8)
    yield "uniform-3", rng.integers(0, 3, (40, 17), dtype=np.uint8)
    yield "uniform-256", rng.integers(0, 256, (48, 52), dtype=np.uint8)
    yield "u16-with-256", rng.integers(250, 257, (19, 26)).astype(np.uint16)
    yield "row", rng.integers(0, 5, (1, 40), dtype=np.uint8)
    yield "column", rng.integers(0, 5, (40, 1), dtype=np.uint8)
    yield "constant", np.full((9, 12), 7, dtype=np.uint8)
    for name in ("camera", "brick", "grass", "gravel"):  # CC0 grey images shipped with scikit-image
        loader = getattr(skimage.data, name, None)
        if loader is None:
            print(f"check_sklearn: scikit-image has no {name} image; skipped")
            continue
        try:
            img = np.asarray(loader())
        except Exception as e:  # some are downloaded on first use; the GPU machine is offline
            print(f"check_sklearn: {name} not available ({e}); skipped")
            continue
        if img.ndim != 2 or img.dtype != np.uint8:
            continue
        yield name, np.ascontiguousarray(img[100:164, 120:200])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repix", default=os.environ.get("REPIX_CLI", "build/release/bin/repix"))
    ap.add_argument("--variants", default="seq,omp", help="comma-separated variant ids (GPU ones need a GPU)")
    a = ap.parse_args()
    if not os.path.exists(a.repix):
        print(f"check_sklearn: no repix binary at {a.repix}")
        return 1
    variants = a.variants.split(",")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, img in images():
            check_image(name, img, a.repix, variants, tmp, failures)
    for f in failures[:40]:
        print("MISMATCH", f)
    print(f"check_sklearn: {'FAILED, ' + str(len(failures)) + ' mismatches' if failures else 'all lags match'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
