// What the AMI adapters (ranklet.cpp, auto_mi.cpp, ami.cpp) share: the tolerance for a
// feature, and the --windows option of the stages that take windows.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ami/ranklet/ranklet.hpp"
#include "harness/options.hpp"

namespace repix::family::ami_shared {

// The equivalence for one feature value: within max(1e-9 |want|, 1e-12).
inline bool close_enough(double got, double want) {
  return std::fabs(got - want) <= std::max(1e-9 * std::fabs(want), 1e-12);
}

// The elements ranklet seq sorts on an image of this shape: a (2r)^2 window a pixel and window
// size. The ranklet and ami references are seq up to kSeqReferenceElements (about 0.7 s of seq on
// one core, ~10 ns an element), omp-hist above (bit-identical: RankletCpuVariant, AmiVariant).
inline std::int64_t sorted_window_elements(const Shape& s, const std::vector<int>& windows) {
  std::int64_t per_pixel = 0;
  for (int r : windows) per_pixel += std::int64_t(4) * r * r;
  return s.size() * per_pixel;
}
inline constexpr std::int64_t kSeqReferenceElements = std::int64_t(1) << 26;

// --windows R,R,...: powers of two from 2 to 32, each once, in output order, into Options::windows.
template <class Options>
options::Option<Options> windows_option() {
  namespace rk = ami::ranklet;
  options::Spec windows = options::integer("windows", "R,R,...",
                                           "window sizes: powers of two from 2 to 32, each once, in output order",
                                           "4,8,16,32", options::kRun | options::kProfile | options::kBench);
  windows.check_value = [](const std::string& v) {
    try {
      return rk::windows_text(rk::parse_windows(v));
    } catch (const Error& e) {
      throw cli::UsageError(std::string("--windows: ") + e.what());
    }
  };
  return {windows, [](Options& o, const std::string& v) { o.windows = rk::parse_windows(v); },
          [](const Options& o) { return nlohmann::json(rk::windows_text(o.windows)); }};
}

}  // namespace repix::family::ami_shared
