// uniform: i.i.d. noise, element i a pure function of (seed, i) through Philox.
#include <cstdint>

#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "datasets/kind.hpp"
#include "datasets/uniform_gpu.hpp"

namespace repix::datasets::detail {
namespace {

// levels (1..2^24) and dtype: the dtype defaults to the smallest that holds the levels; an
// integer dtype without levels means its full range, no levels and no dtype float32 in [0, 1).
void canonicalise(Spec& s) {
  auto& p = s.params;
  const bool has_dtype = p.count("dtype") != 0;
  const DType given = s.get_dtype(DType::f32);
  if (p.count("levels")) {
    const std::int64_t levels = s.get_int("levels", 0);
    if (levels < 1 || levels > (1 << 24))
      throw Error("levels=" + p["levels"] + " is out of range (1..16777216)");
    const DType dt = has_dtype ? given
                     : levels <= 256 ? DType::u8 : levels <= 65536 ? DType::u16 : DType::f32;
    if (static_cast<double>(levels - 1) > dtype_max(dt) && dt != DType::f32)
      throw Error("levels=" + std::to_string(levels) + " does not fit in " + dtype_name(dt));
    p["levels"] = std::to_string(levels);
    p["dtype"] = dtype_name(dt);
  } else {
    // Integer dtype without levels: the dtype's full range.
    if (given != DType::f32) p["levels"] = given == DType::u8 ? "256" : "65536";
    p["dtype"] = dtype_name(given);
  }
  canonicalise_seed(s);
}

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

Elementwise make_uniform(const Spec& s) {
  const std::uint64_t seed = s.get_u64("seed", 1);
  const DType dt = s.get_dtype(DType::f32);
  Elementwise g;
  g.dtype = dt;
  if (!s.has("levels")) {  // float32 in [0, 1), 24 random bits
    g.fill = [seed](std::int64_t b, std::int64_t e, void* dst) {
      fill_words(seed, b, e, static_cast<float*>(dst), [](std::uint32_t w) { return philox::uniform_float(w); });
    };
    g.fill_on_device = [seed](std::int64_t b, std::int64_t e, void* dst, cudaStream_t stream) {
      fill_uniform_on_device(seed, 0, DType::f32, b, e, dst, stream);
    };
    return g;
  }
  const auto levels = static_cast<std::uint32_t>(s.get_int("levels", 256));
  // Integers 0..levels-1 (as floats for float32: exact below 2^24).
  dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    g.fill = [seed, levels](std::int64_t b, std::int64_t e, void* dst) {
      fill_words(seed, b, e, static_cast<T*>(dst),
                 [levels](std::uint32_t w) { return static_cast<T>(philox::uniform_below(w, levels)); });
    };
  });
  g.fill_on_device = [seed, levels, dt](std::int64_t b, std::int64_t e, void* dst, cudaStream_t stream) {
    fill_uniform_on_device(seed, levels, dt, b, e, dst, stream);
  };
  return g;
}

}  // namespace

Kind uniform_kind() {
  return elementwise_kind("uniform", "i.i.d. uniform noise: integers 0..levels-1, or float32 in [0,1) without levels",
                          {"levels", "dtype", "seed"}, canonicalise, make_uniform);
}

}  // namespace repix::datasets::detail
