#include "core/find_by_name.hpp"
#include "harness/suites.hpp"

#include "core/error.hpp"

namespace repix::suites {

const std::vector<Suite>& all() {
  static const std::vector<Suite> s = {
      {"default",
       "every variant on moderate generated 2D/3D inputs (what scripts/bench runs; minutes on 2 cores)",
       {{"ecc",
         {"uniform:2048x2048:levels=256:dtype=float32:seed=1", "grf:1024x1024:alpha=3:seed=2",
          "uniform:128x128x128:levels=256:dtype=uint8:seed=3", "grf:128x128x128:alpha=3:seed=4"}},
        {"reconstruct",
         {"noise-mask:1024x1024:marker=opening", "noise-mask:1024x1024:marker=frame",
          "tissue:1024x1024:coverage=75:marker=h-minus", "tissue:1024x1024:coverage=50:marker=opening"}},
        {"edt", {"blobs:1024x1024:radius=24:fill=0.45:seed=1", "sparse:1024x1024:density=0.001:seed=1"}}}},
      {"quick", "tiny inputs, for smoke tests",
       {{"ecc", {"uniform:256x256:levels=16:dtype=uint8:seed=1", "grf:64x64x64:alpha=3:seed=2"}},
        {"reconstruct", {"noise-mask:128x128:marker=opening", "tissue:96x80:coverage=50:marker=frame"}},
        {"edt", {"blobs:128x96:radius=8:fill=0.45:seed=1", "sparse:100x80:density=0.01:seed=1"}}}},
      {"targets",
       "the ECC performance-target inputs: float32 8192^2 and 512^3, uniform 256 levels and GRF",
       {{"ecc",
         {"uniform:8192x8192:levels=256:dtype=float32:seed=1", "grf:8192x8192:alpha=3:seed=2",
          "uniform:512x512x512:levels=256:dtype=float32:seed=3", "grf:512x512x512:alpha=3:seed=4"}}}},
      {"iwpp-targets",
       "the IWPP performance-target inputs (8192^2): uint8 smoothed-noise masks with opening, frame and "
       "h-minus markers; blobs and sparse EDT masks",
       {{"reconstruct",
         {"noise-mask:8192x8192:marker=opening", "noise-mask:8192x8192:marker=frame",
          "noise-mask:8192x8192:marker=h-minus"}},
        {"edt", {"blobs:8192x8192:radius=24:fill=0.45:seed=1", "sparse:8192x8192:density=0.001:seed=1"}}}},
  };
  return s;
}

const Suite& find(const std::string& name) {
  return find_by_name(all(), name, "suite", [](const Suite& s) { return s.name; });
}

}  // namespace repix::suites
