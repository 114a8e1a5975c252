// The per-thread work of gpu-opt's kernels as __host__ __device__ functions, so that the CPU
// tests run exactly the code the kernels run (one call per simulated thread) against seq-exact.
// The engine they run in is separable.cuh; the windowed fill that uses them is gpu_opt.cu.
#pragma once
#include <cstdint>
#include <limits>

#include "core/hd.hpp"
#include "edt/detail.hpp"

namespace repix::edt::gpu_opt {

constexpr int kSeg = 32;    // rows per mask word
constexpr int kBand = 256;  // columns per band in phase 2
using i64 = long long;

// Thread (x, segment s) of the mask kernel: bit i set when row s*32+i of column x is background.
template <class T>
REPIX_HD unsigned mask_word(const T* in, i64 nx, i64 ny, i64 x, i64 s) {
  const i64 y0 = s * kSeg;
  const int rows = static_cast<int>(ny - y0 < kSeg ? ny - y0 : kSeg);
  unsigned m = 0;
  for (int i = 0; i < rows; ++i)
    if (in[(y0 + i) * nx + x] == T(0)) m |= 1u << i;
  return m;
}

// Thread x of the scan kernel: up[s] = last background row above segment s, down[s] = first
// below it (edt::kNoRow when none). `above` / `below`: the column's nearest background rows
// outside the image (a part of a larger one: Options::column_bounds), kNoRow for none.
REPIX_HD void scan_column(const unsigned* mask, i64 nx, i64 nseg, i64 x, int* up, int* down, int above = kNoRow,
                          int below = kNoRow) {
  int last = above;
  for (i64 s = 0; s < nseg; ++s) {
    up[s * nx + x] = last;
    const unsigned m = mask[s * nx + x];
    if (m) last = static_cast<int>(s * kSeg + 31 - clz32(m));
  }
  int next = below;
  for (i64 s = nseg - 1; s >= 0; --s) {
    down[s * nx + x] = next;
    const unsigned m = mask[s * nx + x];
    if (m) next = static_cast<int>(s * kSeg + ffs32(m) - 1);
  }
}

struct Columns {
  const unsigned* mask;
  const int* up;
  const int* down;
  i64 nx;
};

// Nearest background row to (x, y) in column x (above wins a tie, as in seq-exact), kNoRow if none.
REPIX_HD int vertical_nearest(const Columns& c, i64 x, i64 y) {
  const i64 s = y / kSeg, i = s * c.nx + x;
  const int b = static_cast<int>(y - s * kSeg);
  const unsigned m = load_readonly(c.mask + i);
  const unsigned le = m & (0xffffffffu >> (31 - b));  // rows <= y
  const unsigned ge = m & (0xffffffffu << b);         // rows >= y
  const int a = le ? static_cast<int>(s * kSeg + 31 - clz32(le)) : load_readonly(c.up + i);
  const int d = ge ? static_cast<int>(s * kSeg + ffs32(ge) - 1) : load_readonly(c.down + i);
  if (a == kNoRow) return d;
  if (d == kNoRow) return a;
  return (d - y < y - a) ? d : a;
}

REPIX_HD i64 floor_div(i64 a, i64 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct Envelopes {
  int* centre;  // [band][slot][row]: the parabola's column
  int* start;   // first pixel where it is the band's lowest (slot 0 starts at 0)
  int* row;     // its column's nearest background row
  int* count;   // [band][row]: slots in use
  i64 ny;
  REPIX_HD i64 at(i64 band, i64 k, i64 y) const { return (band * kBand + k) * ny + y; }
};

// Thread (band, y) of the envelope kernel: the lower envelope over the whole row of the
// parabolas (p - u)^2 + g(u)^2 of the band's columns u, by seq-exact's stack algorithm (the top
// of the stack in registers).
REPIX_HD void band_envelope(const Columns& cols, const Envelopes& env, i64 nx, i64 band, i64 y) {
  const i64 lo = band * kBand, hi = lo + kBand < nx ? lo + kBand : nx;
  int k = -1;
  i64 tc = 0, ts = 0, tg = 0;
  for (i64 u = lo; u < hi; ++u) {
    const int r = vertical_nearest(cols, u, y);
    if (r == kNoRow) continue;
    const i64 gu = (y - r) * (y - r);
    i64 w = 0;
    while (k >= 0) {
      const i64 C = u * u - tc * tc + gu - tg;  // f_u(p) - f_tc(p) = C - 2 p (u - tc)
      if (C < 2 * ts * (u - tc)) {              // u strictly lower from tc's start on: pop tc
        if (--k >= 0) {
          const i64 j = env.at(band, k, y);
          tc = env.centre[j];
          ts = env.start[j];
          const i64 tr = env.row[j];
          tg = (y - tr) * (y - tr);
        }
        continue;
      }
      w = floor_div(C, 2 * (u - tc)) + 1;  // first p where u is strictly lower
      break;
    }
    if (w >= nx) continue;
    ++k;
    const i64 j = env.at(band, k, y);
    env.centre[j] = static_cast<int>(u);
    env.start[j] = static_cast<int>(w);
    env.row[j] = r;
    tc = u;
    ts = w;
    tg = gu;
  }
  env.count[band * env.ny + y] = k + 1;
}

// Band b's envelope at pixel p (count > 0): the last slot whose start <= p, by binary search.
REPIX_HD i64 eval_band(const Envelopes& env, i64 b, int count, i64 p, i64 y, i64& c, i64& r) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (env.start[env.at(b, mid, y)] <= p) lo = mid;
    else hi = mid - 1;
  }
  const i64 j = env.at(b, lo, y);
  c = env.centre[j];
  r = env.row[j];
  return (p - c) * (p - c) + (y - r) * (y - r);
}

constexpr i64 kNoneSq = 0x7fffffffffffffffLL;

// The best of the bands other than `band` for pixel p (best/bc/br hold the own band's), bands
// visited outward from the pixel and given up once (distance to the band's nearest column)^2
// cannot beat the best; then the pixel's distance and site are written.
REPIX_HD void finish_pixel(const Envelopes& env, i64 nx, i64 nbands, i64 band, i64 p, i64 y, i64 best, i64 bc,
                           i64 br, float* dist, long long* sites) {
  // Band b, whose nearest column is dx away: false once no band that far can be nearer.
  auto consider = [&](i64 b, i64 dx) {
    if (dx * dx >= best) return false;
    const int cnt = env.count[b * env.ny + y];
    if (cnt > 0) {
      i64 c, r;
      const i64 d = eval_band(env, b, cnt, p, y, c, r);
      if (d < best) best = d, bc = c, br = r;
    }
    return true;
  };
  for (i64 b = band - 1; b >= 0 && consider(b, p - (b * kBand + kBand - 1)); --b) {
  }
  for (i64 b = band + 1; b < nbands && consider(b, b * kBand - p); ++b) {
  }
  const i64 i = y * nx + p;
  dist[i] = best == kNoneSq ? std::numeric_limits<float>::infinity() : distance_from_sq(best);
  if (sites) sites[i] = best == kNoneSq ? -1 : br * nx + bc;
}

// gpu-opt's fill, thread per pixel (x fastest: coalesced stores): its own band's envelope by
// binary search, then the other bands.
REPIX_HD void pixel_fill(const Envelopes& env, i64 nx, i64 nbands, i64 x, i64 y, float* dist, long long* sites) {
  const i64 band = x / kBand;
  const int own = env.count[band * env.ny + y];
  i64 best = kNoneSq, bc = -1, br = -1;
  if (own > 0) best = eval_band(env, band, own, x, y, bc, br);
  finish_pixel(env, nx, nbands, band, x, y, best, bc, br, dist, sites);
}

// gpu-exact-rowfill's fill, thread per (band, y), the rows of a warp side by side: its own
// band's envelope walked left to right (no search), then the other bands; stores are 32 rows
// apart (left to L2 to merge).
REPIX_HD void band_fill(const Envelopes& env, i64 nx, i64 nbands, i64 band, i64 y, float* dist, long long* sites) {
  const i64 lo = band * kBand, hi = lo + kBand < nx ? lo + kBand : nx;
  const int own = env.count[band * env.ny + y];
  int j = 0;
  for (i64 p = lo; p < hi; ++p) {
    i64 best = kNoneSq, bc = -1, br = -1;
    if (own > 0) {
      while (j + 1 < own && env.start[env.at(band, j + 1, y)] <= p) ++j;
      const i64 s = env.at(band, j, y);
      bc = env.centre[s];
      br = env.row[s];
      best = (p - bc) * (p - bc) + (y - br) * (y - br);
    }
    finish_pixel(env, nx, nbands, band, p, y, best, bc, br, dist, sites);
  }
}


// ---- gpu-opt's windowed fill ------------------------------------------------------------------
// A pixel's nearest site is (x + k, r(x + k)) for some column offset k, at squared distance
// k^2 + (y - r(x + k))^2; columns at |k| >= d cannot beat a candidate at squared distance d^2. So
// a search over the columns within kWindow of the pixel, stopped at the first k with k^2 >= best,
// is exact whenever the best it finds is at most (kWindow + 1)^2: every column it skipped is at
// least that far. On the inputs of interest (nuclei-like blobs, dense or moderately sparse sites)
// almost every pixel is that close to a site, and the search costs O(distance) shared-memory
// reads with no envelope at all. The rows with an unresolved pixel are redone by the envelope
// path (gpu-exact-envelope's kernels on a row list).
constexpr int kWindow = 64;    // search radius (columns each side)
constexpr int kChunk = 1024;   // pixels of one row per block
constexpr int kOffsetCap = 0x7fff;  // |row offset| clamp: cap^2 + kWindow^2 fits in int32
constexpr int kResolvedSq = (kWindow + 1) * (kWindow + 1);

// Entry j of the block's window for row y whose chunk starts at x0: the signed offset r - y to
// column x's nearest background row (x = x0 - kWindow + j), clamped to +-kOffsetCap, and
// kOffsetCap where the column has no background or lies outside the image (never nearer than
// kResolvedSq, so a clamped value can only make a pixel unresolved, never wrong).
REPIX_HD int window_entry(const Columns& cols, i64 nx, i64 y, i64 x0, int j) {
  const i64 x = x0 - kWindow + j;
  if (x < 0 || x >= nx) return kOffsetCap;
  const int r = vertical_nearest(cols, x, y);
  if (r == kNoRow) return kOffsetCap;
  const i64 d = r - y;
  return static_cast<int>(d > kOffsetCap ? kOffsetCap : d < -kOffsetCap ? -kOffsetCap : d);
}

// The pixel whose own column's entry is off[0] (off[-kWindow .. kWindow] valid). Writes its
// distance (and site) and returns true when the search is exact; else writes nothing.
REPIX_HD bool window_pixel(const int* off, i64 nx, i64 x, i64 y, float* dist, long long* sites) {
  int best = off[0] * off[0], dx = 0;
  for (int k = 1; k <= kWindow && k * k < best; ++k) {
    const int l = k * k + off[-k] * off[-k];
    if (l < best) best = l, dx = -k;
    const int r = k * k + off[k] * off[k];
    if (r < best) best = r, dx = k;
  }
  if (best > kResolvedSq) return false;
  const i64 i = y * nx + x;
  dist[i] = distance_from_sq(best);
  if (sites) sites[i] = (y + off[dx]) * nx + (x + dx);
  return true;
}

}  // namespace repix::edt::gpu_opt
