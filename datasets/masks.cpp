// noise-mask and tissue: uint8 mask images for morphological reconstruction, and the markers
// derived from them (marker=opening|h-minus|frame|single-seed). See datasets.hpp for the
// definitions.
//
// Everything is integer arithmetic on Philox draws (exactly reproducible; no floating point but
// the box radius from sigma, computed with correctly rounded sqrt). Parallel loops only split
// independent lines, and reductions are integer min/max/sums, so the bytes never depend on the
// thread count. Not chunk-addressable: the smoothing and the stretch to 0..255 (global min and
// max) couple the whole image.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

using Field = std::vector<std::uint16_t>;  // nx * ny values 0..65535

// ---- parameters ------------------------------------------------------------------------------

// seed and the marker keys, shared by both kinds: marker= (opening, h-minus, frame,
// single-seed), radius= only with opening (default 5), h= only with h-minus (default 20).
void canonicalise_seed_and_marker(Spec& s) {
  auto& p = s.params;
  canonicalise_seed(s);
  const std::string marker = p.count("marker") ? p["marker"] : "";
  if (!marker.empty() && marker != "opening" && marker != "h-minus" && marker != "frame" && marker != "single-seed")
    throw Error("marker=" + marker + " is not one of opening, h-minus, frame, single-seed");
  if (p.count("marker") && marker.empty()) throw Error("marker= needs a value (opening, h-minus, frame, single-seed)");
  if (p.count("radius") && marker != "opening") throw Error("radius= belongs to marker=opening");
  if (p.count("h") && marker != "h-minus") throw Error("h= belongs to marker=h-minus");
  if (marker == "opening") {
    const std::int64_t r = s.get_int("radius", 5);
    if (r < 0 || r > 1000) throw Error("radius=" + p["radius"] + " must be in 0..1000");
    p["radius"] = std::to_string(r);
  } else if (marker == "h-minus") {
    const std::int64_t h = s.get_int("h", 20);
    if (h < 0 || h > 255) throw Error("h=" + p["h"] + " must be in 0..255");
    p["h"] = std::to_string(h);
  }
}

void canonicalise_noise_mask(Spec& s) {
  const double sigma = s.get_double("sigma", 4.0);
  if (!(sigma >= 0.5 && sigma <= 1e4)) throw Error("sigma=" + s.params["sigma"] + " must be in [0.5, 10000]");
  s.params["sigma"] = format_double(sigma);
  canonicalise_seed_and_marker(s);
}

void canonicalise_tissue(Spec& s) {
  const std::int64_t c = s.get_int("coverage", 50);
  if (c < 1 || c > 100) throw Error("coverage=" + s.params["coverage"] + " must be a percentage in 1..100");
  s.params["coverage"] = std::to_string(c);
  canonicalise_seed_and_marker(s);
}

// ---- masks -----------------------------------------------------------------------------------

// Philox noise, 16 bits per pixel.
Field noise(std::uint64_t seed, std::uint32_t stream, std::int64_t n) {
  Field f(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f[i] = static_cast<std::uint16_t>(philox::bits_at(seed, i, stream) >> 16);
  return f;
}

// One box blur of radius r along x then along y, clamped at the border (edge pixels repeat),
// rounded integer mean: out = (sum + w/2) / w with w = 2r+1.
void box_blur(Field& f, std::int64_t nx, std::int64_t ny, std::int64_t r) {
  const std::int64_t w = 2 * r + 1;
  Field tmp(f.size());
#pragma omp parallel
  {
    std::vector<std::int64_t> acc;
#pragma omp for schedule(static)
    for (std::int64_t y = 0; y < ny; ++y) {
      const std::uint16_t* in = f.data() + y * nx;
      std::uint16_t* out = tmp.data() + y * nx;
      auto at = [&](std::int64_t x) -> std::int64_t { return in[std::clamp<std::int64_t>(x, 0, nx - 1)]; };
      std::int64_t s = 0;
      for (std::int64_t x = -r; x <= r; ++x) s += at(x);
      for (std::int64_t x = 0; x < nx; ++x) {
        out[x] = static_cast<std::uint16_t>((s + w / 2) / w);
        s += at(x + r + 1) - at(x - r);
      }
    }
    // Columns in strips of 256, a running sum per column, rows streamed top to bottom.
    constexpr std::int64_t kStrip = 256;
#pragma omp for schedule(static)
    for (std::int64_t x0 = 0; x0 < nx; x0 += kStrip) {
      const std::int64_t x1 = std::min(nx, x0 + kStrip);
      acc.assign(static_cast<std::size_t>(x1 - x0), 0);
      auto row = [&](std::int64_t y) { return tmp.data() + std::clamp<std::int64_t>(y, 0, ny - 1) * nx; };
      for (std::int64_t y = -r; y <= r; ++y)
        for (std::int64_t x = x0; x < x1; ++x) acc[x - x0] += row(y)[x];
      for (std::int64_t y = 0; y < ny; ++y) {
        const std::uint16_t* add = row(y + r + 1);
        const std::uint16_t* sub = row(y - r);
        std::uint16_t* out = f.data() + y * nx;
        for (std::int64_t x = x0; x < x1; ++x) {
          out[x] = static_cast<std::uint16_t>((acc[x - x0] + w / 2) / w);
          acc[x - x0] += add[x] - sub[x];
        }
      }
    }
  }
}

// Smoothed noise: three box blurs of radius r (close to a Gaussian), then stretched linearly so
// its minimum is 0 and its maximum `top` (a constant field becomes 0).
Field smooth_noise(std::uint64_t seed, std::uint32_t stream, std::int64_t nx, std::int64_t ny, std::int64_t r,
                   std::int64_t top) {
  Field f = noise(seed, stream, nx * ny);
  for (int pass = 0; pass < 3; ++pass) box_blur(f, nx, ny, r);
  std::uint16_t lo = 65535, hi = 0;
  const std::int64_t n = nx * ny;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, f[i]);
    hi = std::max(hi, f[i]);
  }
  const std::int64_t span = std::max<std::int64_t>(1, hi - lo);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f[i] = static_cast<std::uint16_t>((f[i] - lo) * top / span);
  return f;
}

// Box radius whose three-pass kernel has a standard deviation close to sigma: each pass of width
// w = 2r+1 adds variance (w^2 - 1) / 12.
std::int64_t radius_for_sigma(double sigma) {
  const double w = std::sqrt(4.0 * sigma * sigma + 1.0);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>((w - 1.0) / 2.0 + 0.5));
}

HostImage noise_mask(const Spec& s, bool pinned) {
  const std::int64_t nx = s.shape.nx, ny = s.shape.ny;
  const Field f = smooth_noise(s.get_u64("seed", 1), kStreamNoiseMask, nx, ny,
                               radius_for_sigma(s.get_double("sigma", 4.0)), 255);
  HostImage img(DType::u8, s.shape, pinned);
  std::uint8_t* d = img.data<std::uint8_t>();
  const std::int64_t n = nx * ny;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<std::uint8_t>(f[i]);
  return img;
}

HostImage tissue(const Spec& s, bool pinned) {
  const std::int64_t nx = s.shape.nx, ny = s.shape.ny, n = nx * ny;
  const std::uint64_t seed = s.get_u64("seed", 1);
  const std::int64_t coverage = s.get_int("coverage", 50);
  // Blob shapes: a low-frequency field thresholded at its (100 - coverage) % quantile.
  const std::int64_t big = std::max<std::int64_t>(2, std::min(nx, ny) / 24);
  const Field shape = smooth_noise(seed, kStreamTissueShape, nx, ny, big, 65535);
  std::vector<std::int64_t> hist(65536, 0);
#pragma omp parallel
  {
    std::vector<std::int64_t> mine(65536, 0);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) ++mine[shape[i]];
#pragma omp critical
    for (std::size_t v = 0; v < mine.size(); ++v) hist[v] += mine[v];
  }
  // Smallest threshold t from the top with count(shape >= t) >= coverage% of the pixels.
  const std::int64_t want = (n * coverage + 99) / 100;
  std::int64_t t = 65535, above = hist[65535];
  while (t > 0 && above < want) above += hist[--t];
  // Texture: fine smoothed noise, bright in the tissue (96..255), dim outside (0..47).
  const Field tex = smooth_noise(seed, kStreamTissueTexture, nx, ny, 2, 65535);
  HostImage img(DType::u8, s.shape, pinned);
  std::uint8_t* d = img.data<std::uint8_t>();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    d[i] = static_cast<std::uint8_t>(shape[i] >= t ? 96 + tex[i] * 159 / 65535 : tex[i] * 47 / 65535);
  return img;
}

// Running minimum (erosion) or maximum (dilation) over windows [x-w, x+w] of a line of n values,
// outside the line ignored: van Herk / Gil-Werman with blocks of 2w+1, O(1) per value.
template <bool kMin>
void running_extreme(const std::uint8_t* in, std::int64_t n, std::int64_t w, std::uint8_t* out,
                     std::vector<std::uint8_t>& g, std::vector<std::uint8_t>& h) {
  const std::uint8_t pad = kMin ? 255 : 0;
  auto op = [](std::uint8_t a, std::uint8_t b) { return kMin ? std::min(a, b) : std::max(a, b); };
  const std::int64_t k = 2 * w + 1, len = n + 2 * w;
  const std::int64_t padded = (len + k - 1) / k * k;
  g.assign(static_cast<std::size_t>(padded), pad);
  h.assign(static_cast<std::size_t>(padded), pad);
  for (std::int64_t i = 0; i < n; ++i) g[i + w] = h[i + w] = in[i];
  for (std::int64_t b = 0; b < padded; b += k) {
    for (std::int64_t i = b + 1; i < b + k; ++i) g[i] = op(g[i], g[i - 1]);          // prefix in block
    for (std::int64_t i = b + k - 2; i >= b; --i) h[i] = op(h[i], h[i + 1]);         // suffix in block
  }
  // The window of x covers padded positions [x, x + 2w]: suffix from x, prefix to x + 2w.
  for (std::int64_t x = 0; x < n; ++x) out[x] = op(h[x], g[x + 2 * w]);
}

// Erosion (kMin) or dilation by the disk of radius r (pixels with dx^2 + dy^2 <= r^2), the
// image border excluded. The disk is cut into its horizontal chords: the result at (x, y) is
// the extreme over dy of the running extreme, with the chord's half-width, of row y + dy. Rows
// are independent: O((2r+1) * n) work, one row of scratch per chord per thread.
template <bool kMin>
HostImage disk_filter(const HostImage& in, std::int64_t r, bool pinned) {
  const std::int64_t nx = in.shape().nx, ny = in.shape().ny;
  std::vector<std::int64_t> half(static_cast<std::size_t>(2 * r + 1));
  for (std::int64_t dy = -r; dy <= r; ++dy) {
    std::int64_t w = 0;
    while ((w + 1) * (w + 1) + dy * dy <= r * r) ++w;
    half[dy + r] = w;
  }
  HostImage out(DType::u8, in.shape(), pinned);
  const std::uint8_t* src = in.data<std::uint8_t>();
  std::uint8_t* dst = out.data<std::uint8_t>();
#pragma omp parallel
  {
    std::vector<std::uint8_t> line(static_cast<std::size_t>(nx)), g, h;
#pragma omp for schedule(static)
    for (std::int64_t y = 0; y < ny; ++y) {
      std::uint8_t* o = dst + y * nx;
      std::fill(o, o + nx, kMin ? 255 : 0);
      for (std::int64_t dy = -r; dy <= r; ++dy) {
        if (y + dy < 0 || y + dy >= ny) continue;
        running_extreme<kMin>(src + (y + dy) * nx, nx, half[dy + r], line.data(), g, h);
        for (std::int64_t x = 0; x < nx; ++x) o[x] = kMin ? std::min(o[x], line[x]) : std::max(o[x], line[x]);
      }
    }
  }
  return out;
}

HostImage make_marker(const HostImage& mask, const Spec& s, bool pinned) {
  const std::string kind = s.get("marker");
  const std::int64_t nx = mask.shape().nx, ny = mask.shape().ny, n = nx * ny;
  const std::uint8_t* m = mask.data<std::uint8_t>();
  if (kind == "opening") {
    const std::int64_t r = s.get_int("radius", 5);
    return disk_filter<false>(disk_filter<true>(mask, r, false), r, pinned);  // <= mask by construction
  }
  HostImage out(DType::u8, mask.shape(), pinned);
  std::uint8_t* d = out.data<std::uint8_t>();
  if (kind == "h-minus") {
    const int h = static_cast<int>(s.get_int("h", 20));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<std::uint8_t>(std::max(0, m[i] - h));
  } else if (kind == "frame") {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t x = i % nx, y = i / nx;
      d[i] = (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) ? m[i] : 0;
    }
  } else {  // single-seed: the first brightest pixel of the mask in raster order
    const std::int64_t at = std::max_element(m, m + n) - m;
    std::fill(d, d + n, 0);
    d[at] = m[at];
  }
  return out;
}

// The mask `make_mask` produces, or its marker when the spec has marker=.
template <HostImage (*make_mask)(const Spec&, bool)>
HostImage mask_or_marker(const Spec& s, bool pinned) {
  const bool marker = s.has("marker");
  HostImage mask = make_mask(s, pinned && !marker);
  if (!marker) return mask;
  return make_marker(mask, s, pinned);
}

// Peak host memory per output byte (Kind::peak_factor). noise-mask: the 16-bit field and the blur's
// 16-bit scratch (4 bytes a pixel; measured 4.0x at 8192^2). tissue: the shape field held while the
// texture field and its scratch are blurred (6 bytes a pixel; measured 5.95x). A marker holds the
// mask and at most two images of its size beside it (3x), below its mask's peak.
constexpr double kNoiseMaskPeak = 4.0;
constexpr double kTissuePeak = 6.0;

// Both kinds: uint8, 2D, the marker keys.
Kind mask_kind(std::string name, std::string description, std::string main_key, void (*canonicalise)(Spec&),
               HostImage (*generate)(const Spec&, bool), double peak_factor) {
  Kind k = whole_image_kind(std::move(name), std::move(description), {main_key, "seed", "marker", "radius", "h"},
                            canonicalise, DType::u8, generate);
  k.two_d_only = true;
  k.marker_keys = {"marker", "radius", "h"};
  k.peak_factor = peak_factor;
  return k;
}

}  // namespace

Kind noise_mask_kind() {
  return mask_kind("noise-mask", "uint8 smoothed noise 0..255 (box blurs, std ~ sigma); marker= gives a marker of it",
                   "sigma", canonicalise_noise_mask, mask_or_marker<noise_mask>, kNoiseMaskPeak);
}

Kind tissue_kind() {
  return mask_kind("tissue",
                   "uint8 blobby textured tissue covering coverage % of the image; marker= gives a marker of it",
                   "coverage", canonicalise_tissue, mask_or_marker<tissue>, kTissuePeak);
}

}  // namespace repix::datasets::detail
