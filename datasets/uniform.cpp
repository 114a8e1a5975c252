// uniform: i.i.d. noise, element i a pure function of (seed, i) through Philox.
#include <cstdint>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/generators.hpp"

namespace repix::datasets::detail {
namespace {

// Writes elements [begin, end). Element i uses word i%4 of the block at counter i/4 (exactly
// philox::bits_at), but each block is computed once for its four elements.
template <class T, class Conv>
void fill_words(std::uint64_t seed, std::int64_t begin, std::int64_t end, T* out, Conv conv) {
  std::int64_t i = begin;
  while (i < end) {
    const philox::Block b = philox::draw(seed, static_cast<std::uint64_t>(i) >> 2, kStreamUniform);
    const std::int64_t block_end = (i | 3) + 1 < end ? (i | 3) + 1 : end;
    for (; i < block_end; ++i) *out++ = conv(b.v[i & 3]);
  }
}

}  // namespace

Elementwise make_uniform(const Spec& s) {
  const std::uint64_t seed = s.get_u64("seed", 1);
  const DType dt = s.get_dtype(DType::f32);
  Elementwise g;
  g.dtype = dt;
  if (!s.has("levels")) {  // float32 in [0, 1), 24 random bits
    g.fill = [seed](std::int64_t b, std::int64_t e, void* dst) {
      fill_words(seed, b, e, static_cast<float*>(dst), [](std::uint32_t w) { return philox::uniform_float(w); });
    };
    return g;
  }
  const auto levels = static_cast<std::uint32_t>(s.get_int("levels", 256));
  switch (dt) {
    case DType::u8:
      g.fill = [seed, levels](std::int64_t b, std::int64_t e, void* dst) {
        fill_words(seed, b, e, static_cast<std::uint8_t*>(dst), [levels](std::uint32_t w) {
          return static_cast<std::uint8_t>(philox::uniform_below(w, levels));
        });
      };
      break;
    case DType::u16:
      g.fill = [seed, levels](std::int64_t b, std::int64_t e, void* dst) {
        fill_words(seed, b, e, static_cast<std::uint16_t*>(dst), [levels](std::uint32_t w) {
          return static_cast<std::uint16_t>(philox::uniform_below(w, levels));
        });
      };
      break;
    case DType::f32:  // the integers 0..levels-1 stored as floats (exact below 2^24)
      g.fill = [seed, levels](std::int64_t b, std::int64_t e, void* dst) {
        fill_words(seed, b, e, static_cast<float*>(dst), [levels](std::uint32_t w) {
          return static_cast<float>(philox::uniform_below(w, levels));
        });
      };
      break;
  }
  return g;
}

}  // namespace repix::datasets::detail
