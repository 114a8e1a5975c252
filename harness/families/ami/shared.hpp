// What the AMI adapters (ranklet.cpp, auto_mi.cpp, ami.cpp) share: the tolerance for a
// feature, and the --windows option of the stages that take windows.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

#include "ami/ranklet/ranklet.hpp"
#include "harness/options.hpp"

namespace repix::family::ami_shared {

// The equivalence for one feature value: within max(1e-9 |want|, 1e-12).
inline bool close_enough(double got, double want) {
  return std::fabs(got - want) <= std::max(1e-9 * std::fabs(want), 1e-12);
}

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
