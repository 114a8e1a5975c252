// The suites' names and what they are for; each family's adapter says which of its datasets
// belong to each (Family::suite_datasets), so a new family joins a suite from its own adapter.
#include "harness/suites.hpp"

#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "harness/family.hpp"

namespace repix::suites {

const std::vector<Suite>& all() {
  static const std::vector<Suite> s = [] {
    std::vector<Suite> v = {
        {"default",
         "the tour: every family and every variant this machine can run, on inputs sized so that the whole suite "
         "takes minutes (what scripts/bench runs); heavy inputs are in the *-targets suites and the tables",
         {}},
        {"quick", "tiny inputs, for smoke tests", {}},
        {"targets", "the ECC performance-target inputs: float32 8192^2 and 512^3, uniform 256 levels and GRF", {}},
        {"iwpp-targets",
         "the IWPP performance-target inputs (8192^2): uint8 smoothed-noise masks with opening, frame and h-minus "
         "markers; blobs and sparse EDT masks",
         {}},
        {"ami-targets", "the ranklet + AMI performance-target inputs: 8192^2 uint8, 256 levels, i.i.d. and smooth (noise-mask)", {}},
        {"maxtree-targets",
         "the max-tree performance-target inputs: the seminar's 6000x4000 natural image (texture camera) in 8 and 16 "
         "bits (x 257), its 1920x1080 frame, and 16-bit uniform noise (65536 levels)",
         {}},
    };
    for (Suite& suite : v)
      for (const auto& f : family::all()) {
        const std::vector<std::string> specs = f->suite_datasets(suite.name);
        if (!specs.empty()) suite.datasets.push_back({f->name(), specs});
      }
    return v;
  }();
  return s;
}

const Suite& find(const std::string& name) {
  return find_by_name(all(), name, "suite", [](const Suite& s) { return s.name; });
}

}  // namespace repix::suites
