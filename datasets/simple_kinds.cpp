// const, checker and ramp: elementwise functions of the coordinates, no randomness.
#include <cstdint>
#include <type_traits>

#include "datasets/generators.hpp"

namespace repix::datasets::detail {
namespace {

// Converts a canonical value (spec text) to the element type.
template <class T>
T value_as(const Spec& s, const std::string& key, double def) {
  return static_cast<T>(s.get_double(key, def));
}

template <class T>
Elementwise make_const(const Spec& s) {
  const T v = value_as<T>(s, "value", 0);
  Elementwise g;
  g.dtype = dtype_of<T>();
  g.fill = [v](std::int64_t b, std::int64_t e, void* dst) {
    T* out = static_cast<T*>(dst);
    for (std::int64_t i = b; i < e; ++i) *out++ = v;
  };
  return g;
}

// Cell (x/P, y/P, z/P) is `high` when the sum of its indices is odd, `low` when even; so the
// origin cell is low and neighbours across any face differ.
template <class T>
Elementwise make_checker(const Spec& s) {
  const T lo = value_as<T>(s, "low", 0), hi = value_as<T>(s, "high", 1);
  const std::int64_t period = s.get_int("period", 8);
  const Shape sh = s.shape;
  Elementwise g;
  g.dtype = dtype_of<T>();
  g.fill = [lo, hi, period, sh](std::int64_t b, std::int64_t e, void* dst) {
    T* out = static_cast<T*>(dst);
    std::int64_t x = b % sh.nx, y = (b / sh.nx) % sh.ny, z = b / sh.slice_size();
    for (std::int64_t i = b; i < e; ++i) {
      *out++ = ((x / period + y / period + z / period) & 1) ? hi : lo;
      if (++x == sh.nx) {
        x = 0;
        if (++y == sh.ny) {
          y = 0;
          ++z;
        }
      }
    }
  };
  return g;
}

// Linear index, wrapping modulo 2^bits for integer types; float32 holds it exactly below 2^24.
template <class T>
Elementwise make_ramp() {
  Elementwise g;
  g.dtype = dtype_of<T>();
  g.fill = [](std::int64_t b, std::int64_t e, void* dst) {
    T* out = static_cast<T*>(dst);
    for (std::int64_t i = b; i < e; ++i) {
      if constexpr (std::is_same_v<T, float>) *out++ = static_cast<float>(i);
      else *out++ = static_cast<T>(static_cast<std::uint64_t>(i));  // modular conversion
    }
  };
  return g;
}

template <class T>
Elementwise make_typed(const Spec& s) {
  if (s.kind == "const") return make_const<T>(s);
  if (s.kind == "checker") return make_checker<T>(s);
  return make_ramp<T>();
}

}  // namespace

Elementwise make_simple(const Spec& s) {
  switch (s.get_dtype(DType::u8)) {
    case DType::u8: return make_typed<std::uint8_t>(s);
    case DType::u16: return make_typed<std::uint16_t>(s);
    case DType::f32: break;
  }
  return make_typed<float>(s);
}

}  // namespace repix::datasets::detail
