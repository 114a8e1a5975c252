// sparse: uint8 255 (foreground) with zero background points at a given density, i.i.d. per
// pixel: the EDT's sparse-sites input. Chunk-addressable: element i is background iff
// philox::bits_at(seed, i, kStreamSparse) < floor(density * 2^32).
#include <cmath>
#include <cstdint>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

void canonicalise(Spec& s) {
  const double density = s.get_double("density", 0.001);
  if (!(density >= 0.0 && density <= 1.0)) throw Error("density=" + s.params["density"] + " must be in [0, 1]");
  s.params["density"] = format_double(density);
  canonicalise_seed(s);
}

Elementwise make_sparse(const Spec& s) {
  const std::uint64_t seed = s.get_u64("seed", 1);
  // Exact: scaling by a power of two, then floor. density = 1 makes every element background.
  const auto threshold = static_cast<std::uint64_t>(std::floor(s.get_double("density", 0.001) * 4294967296.0));
  Elementwise g;
  g.dtype = DType::u8;
  g.fill = [seed, threshold](std::int64_t b, std::int64_t e, void* dst) {
    auto* out = static_cast<std::uint8_t*>(dst);
    for (std::int64_t i = b; i < e; ++i)
      *out++ = philox::bits_at(seed, static_cast<std::uint64_t>(i), kStreamSparse) < threshold ? 0 : 255;
  };
  return g;
}

}  // namespace

Kind sparse_kind() {
  return elementwise_kind("sparse",
                          "uint8 255 with zero (background) points at random, each element with probability density",
                          {"density", "seed"}, canonicalise, make_sparse);
}

}  // namespace repix::datasets::detail
