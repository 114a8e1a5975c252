// Verification of edt results against the exact EDT (a seq-exact Result with sites).
//
// check_propagation: the properties every propagation variant must have (the list):
//   1. every site is a background pixel and the distance is distance_from_sq of the squared
//      distance to it (bit-exact: every variant uses that one formula);
//   2. no 8-neighbour's site is strictly closer (exact integer check);
//   3. where the exact squared distance is below 169 the squared distance equals it (the first
//      offset where 8-neighbour propagation can err is (12,5));
//   4. elsewhere it is never below the exact one and at most 0.29 px above it.
// Without sites (a distance-only result) 1-2 are skipped and 3-4 are checked on the distances.
// An image without background must give +inf everywhere (and site -1).
//
// compare_exact: exact variants and peers. Distances equal to the reference bit for bit
// (rel_tol = 0) or within rel_tol relative (peers computing in another precision); sites, if
// given, must be background pixels at exactly the reference's squared distance (ties between
// equidistant sites may break either way).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "edt/edt.hpp"

namespace repix::edt {

inline constexpr double kMaxPropagationError = 0.29;  // px, above the exact distance
inline constexpr std::int64_t kExactBelowSq = 169;    // 13^2

struct Check {
  bool ok = true;
  std::string first_violation;  // "" when ok; names the pixel and the property
  std::int64_t pixels = 0;
  std::int64_t pixels_off = 0;  // distance differs from the exact one
  double max_abs = 0;           // max |distance - exact| (px) over pixels with a finite distance
  double fraction_off() const { return pixels ? static_cast<double>(pixels_off) / pixels : 0.0; }
  nlohmann::json errors() const;  // {"max_abs", "pixels_off", "fraction_off", "pixels"}
};

Check check_propagation(const HostImage& input, const Result& exact, const Result& got);
Check compare_exact(const HostImage& input, const Result& exact, const Result& got, double rel_tol = 0);

}  // namespace repix::edt
