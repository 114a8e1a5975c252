"""Independent pure-NumPy references for the Python module's tests: straight from the definitions,
written for clarity, not speed (small inputs only)."""

import numpy as np


def ecc(image):
    """The Euler characteristic curve by its definition: the image's pixels (voxels) are the top
    cells of a cubical complex; every lower cell takes the minimum of the pixels whose closure holds
    it; ECC(t) = sum over cells of value <= t of (-1)^dim. Returns (values, ecc) as repix does: the
    distinct values ascending in the image's dtype (-0.0 as 0.0), the ECC at each (int64)."""
    a = np.asarray(image)
    f = a.astype(np.float64) + 0.0  # -0.0 -> 0.0
    # Cells on a grid of 2n+1 positions an axis: odd positions are a pixel's interior along that
    # axis, even ones the boundary between two pixels (or the image's edge). A cell's dimension is
    # its count of odd positions; its value is the minimum over the pixels it touches.
    cells = f
    dims = np.zeros((), dtype=np.int64)
    for axis in range(f.ndim):
        n = cells.shape[axis]
        pad = [(0, 0)] * cells.ndim
        pad[axis] = (1, 1)
        padded = np.pad(cells, pad, constant_values=np.inf)
        take = lambda i: np.take(padded, i, axis=axis)
        grid = []
        for pos in range(2 * n + 1):
            m = pos // 2
            grid.append(np.minimum(take(m), take(m + 1)) if pos % 2 == 0 else take(m + 1))
        cells = np.stack(grid, axis=axis)
        odd = (np.arange(2 * n + 1) % 2).reshape([-1 if i == axis else 1 for i in range(f.ndim)])
        dims = dims + odd
    dims = np.broadcast_to(dims, cells.shape)
    values = np.unique(f)
    change = np.zeros(values.size, dtype=np.int64)
    np.add.at(change, np.searchsorted(values, cells.ravel()), np.where(dims.ravel() % 2 == 0, 1, -1))
    return values.astype(a.dtype), np.cumsum(change)


def edt(mask):
    """Brute force: every pixel's Euclidean distance to its nearest zero pixel (float64), or None
    where the mask has no zero pixel."""
    m = np.asarray(mask)
    zeros = np.argwhere(m == 0)
    if zeros.size == 0:
        return None
    points = np.indices(m.shape).reshape(m.ndim, -1).T
    d2 = ((points[:, None, :] - zeros[None, :, :]) ** 2).sum(axis=2).min(axis=1)
    return np.sqrt(d2).reshape(m.shape)


def ranklet(image, windows):
    """The ranklet planes by their definition (ranklet.hpp): for each window r (h = r / 2) the
    window of pixel (y, x) is rows y-h+1 .. y+h, columns x-h+1 .. x+h, padded with 255; for each
    orientation (H: left vs right half, V: top vs bottom, D: TL+BR vs TR+BL) the Mann-Whitney U of
    the T half over the C half, over N^2/4. Returns float32 (len(windows), 3, H, W)."""
    f = np.asarray(image).astype(np.int32)
    out = np.empty((len(windows), 3) + f.shape, np.float32)
    for w, r in enumerate(windows):
        h = r // 2
        padded = np.pad(f, ((h - 1, h), (h - 1, h)), constant_values=255)
        win = np.lib.stride_tricks.sliding_window_view(padded, (r, r))  # (H, W, r, r)
        tl, tr = win[..., :h, :h], win[..., :h, h:]
        bl, br = win[..., h:, :h], win[..., h:, h:]
        flat = lambda *qs: np.concatenate([q.reshape(f.shape + (-1,)) for q in qs], axis=-1)
        for o, (t, c) in enumerate([(flat(tl, bl), flat(tr, br)), (flat(tl, tr), flat(bl, br)),
                                    (flat(tl, br), flat(tr, bl))]):
            diff = t[..., :, None] - c[..., None, :]
            u = (diff > 0).sum(axis=(-2, -1)) + 0.5 * (diff == 0).sum(axis=(-2, -1))
            out[w, o] = u / (r * r * r * r / 4)
    return out


def quantise(planes):
    """Thesis Eq. 2.2 with q = 256: level min(256, floor(256 R) + 1)."""
    return np.minimum(256, np.floor(256 * planes.astype(np.float64)).astype(np.int64) + 1)
