// blobs: a binary (0/255 uint8) union of equal balls (disks in 2D, segments in 1D) at random
// centres, added one at a time until at least `fill` of the elements are covered.
//
// Not chunk-addressable: when to stop depends on the coverage of the whole image. Sequential
// on purpose: the balls are painted in order and the stopping point must not depend on threads.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

// Uniform integer in [0, n) for any n < 2^63 from 32 random bits (multiply-shift, 128-bit).
std::int64_t below(std::uint32_t w, std::int64_t n) {
  return static_cast<std::int64_t>((static_cast<unsigned __int128>(w) * static_cast<std::uint64_t>(n)) >> 32);
}

std::int64_t clamp_lo(std::int64_t v) { return v < 0 ? 0 : v; }
std::int64_t clamp_hi(std::int64_t v, std::int64_t n) { return v > n - 1 ? n - 1 : v; }

void canonicalise(Spec& s) {
  auto& p = s.params;
  const double radius = s.get_double("radius", 16.0);
  if (!(radius >= 0.5 && radius <= 1e6)) throw Error("radius=" + p["radius"] + " must be in [0.5, 1e6]");
  const double fill = s.get_double("fill", 0.5);
  // Covering close to everything needs ever more balls (coupon collector): stop at 0.99.
  if (!(fill > 0.0 && fill <= 0.99)) throw Error("fill=" + p["fill"] + " must be in (0, 0.99]");
  p["radius"] = format_double(radius);
  p["fill"] = format_double(fill);
  canonicalise_seed(s);
}

HostImage generate_blobs(const Spec& s, bool pinned) {
  const Shape sh = s.shape;
  const double radius = s.get_double("radius", 16.0);
  const double fill = s.get_double("fill", 0.5);
  const std::uint64_t seed = s.get_u64("seed", 1);

  HostImage img(DType::u8, sh, pinned);
  std::uint8_t* px = img.data<std::uint8_t>();
  std::memset(px, 0, img.bytes());

  const std::int64_t target = static_cast<std::int64_t>(std::ceil(fill * static_cast<double>(sh.size())));
  const double r2 = radius * radius;
  const auto ri = static_cast<std::int64_t>(radius);  // bounding half-width (radius > 0)
  std::int64_t covered = 0;
  // Each ball covers at least its centre, which lies inside the image, so coverage keeps
  // growing and the loop ends (fill <= 0.99 keeps the number of balls reasonable).
  for (std::uint64_t j = 0; covered < target; ++j) {
    const philox::Block b = philox::draw(seed, j, kStreamBlobs);
    const std::int64_t cx = below(b.v[0], sh.nx), cy = below(b.v[1], sh.ny), cz = below(b.v[2], sh.nz);
    for (std::int64_t z = clamp_lo(cz - ri); z <= clamp_hi(cz + ri, sh.nz); ++z) {
      const std::int64_t dz2 = (z - cz) * (z - cz);
      for (std::int64_t y = clamp_lo(cy - ri); y <= clamp_hi(cy + ri, sh.ny); ++y) {
        const std::int64_t dyz2 = dz2 + (y - cy) * (y - cy);
        if (static_cast<double>(dyz2) > r2) continue;
        std::uint8_t* line = px + (z * sh.ny + y) * sh.nx;
        for (std::int64_t x = clamp_lo(cx - ri); x <= clamp_hi(cx + ri, sh.nx); ++x) {
          const std::int64_t d2 = dyz2 + (x - cx) * (x - cx);
          if (static_cast<double>(d2) <= r2 && line[x] == 0) {
            line[x] = 255;
            ++covered;
          }
        }
      }
    }
  }
  return img;
}

}  // namespace

Kind blobs_kind() {
  return whole_image_kind("blobs", "uint8 0/255 union of random disks/balls of a radius until fill is covered",
                          {"radius", "fill", "seed"}, canonicalise, DType::u8, generate_blobs);
}

}  // namespace repix::datasets::detail
