// const, checker and ramp: elementwise functions of the coordinates, no randomness.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "datasets/kind.hpp"

namespace repix::datasets::detail {
namespace {

// ---- parameters ------------------------------------------------------------------------------

// A value to be stored in dtype t: integers in range for integer dtypes, a number that float32
// holds as a finite value (rounded to float32 when stored) for float32: 1e39 would become +inf,
// which value=inf is refused as. Returns its canonical text.
std::string canonical_value(const std::string& key, const std::string& v, DType t) {
  if (t == DType::f32) {
    const double x = parse_double(key, v);
    if (!std::isfinite(static_cast<float>(x)))
      throw Error(key + "=" + v + " does not fit in float32 (its largest finite value is about 3.4028e38)");
    return format_double(x);
  }
  const std::int64_t x = parse_int(key, v);
  if (x < 0 || x > static_cast<std::int64_t>(dtype_max(t)))
    throw Error(key + "=" + v + " does not fit in " + dtype_name(t) + " (0.." +
                std::to_string(static_cast<std::int64_t>(dtype_max(t))) + ")");
  return std::to_string(x);
}

// dtype=, default uint8: the key all three kinds share. Returns it.
DType canonicalise_dtype(Spec& s) {
  const DType dt = s.get_dtype(DType::u8);
  s.params["dtype"] = dtype_name(dt);
  return dt;
}

void canonicalise_const(Spec& s) {
  auto& p = s.params;
  const DType dt = canonicalise_dtype(s);
  p["value"] = canonical_value("value", p.count("value") ? p["value"] : "0", dt);
}

void canonicalise_checker(Spec& s) {
  auto& p = s.params;
  const DType dt = canonicalise_dtype(s);
  const std::int64_t period = s.get_int("period", 8);
  if (period < 1 || period > kMaxElements) throw Error("period=" + p["period"] + " must be >= 1");
  p["period"] = std::to_string(period);
  p["low"] = canonical_value("low", p.count("low") ? p["low"] : "0", dt);
  p["high"] = canonical_value("high", p.count("high") ? p["high"] : format_double(dtype_max(dt)), dt);
}

void canonicalise_ramp(Spec& s) { canonicalise_dtype(s); }

// ---- elements --------------------------------------------------------------------------------

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

// make(T{}) for the spec's element type (dtype=, uint8 by default).
template <class Make>
Elementwise for_dtype(const Spec& s, Make make) {
  return dispatch_dtype(s.get_dtype(DType::u8), [&](auto tag) { return make(typename decltype(tag)::type{}); });
}

Elementwise make_const_any(const Spec& s) {
  return for_dtype(s, [&s](auto t) { return make_const<decltype(t)>(s); });
}
Elementwise make_checker_any(const Spec& s) {
  return for_dtype(s, [&s](auto t) { return make_checker<decltype(t)>(s); });
}
Elementwise make_ramp_any(const Spec& s) {
  return for_dtype(s, [](auto t) { return make_ramp<decltype(t)>(); });
}

}  // namespace

Kind const_kind() {
  return elementwise_kind("const", "every element equal to value", {"value", "dtype"}, canonicalise_const,
                          make_const_any);
}

Kind checker_kind() {
  return elementwise_kind("checker", "checkerboard of period-sized squares/cubes alternating low and high",
                          {"period", "dtype", "low", "high"}, canonicalise_checker, make_checker_any);
}

Kind ramp_kind() {
  return elementwise_kind("ramp", "element = its linear index (mod 2^bits for integer dtypes)", {"dtype"},
                          canonicalise_ramp, make_ramp_any);
}

}  // namespace repix::datasets::detail
