#include "harness/families/reconstruct/checks.hpp"

#include <cstring>
#include <sstream>

#include "harness/tiled_json.hpp"

namespace repix::family::reconstruct_checks {

namespace {
double pixel(const HostImage& img, std::int64_t i) {
  return dispatch_dtype(img.dtype(), [&](auto tag) {
    return static_cast<double>(img.data<typename decltype(tag)::type>()[i]);
  });
}
}  // namespace

std::string mismatch(const HostImage& got, const HostImage& want) {
  std::ostringstream o;
  o.precision(9);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    o << "MISMATCH vs seq: output is " << dtype_name(got.dtype()) << " " << got.shape().str() << ", want "
      << dtype_name(want.dtype()) << " " << want.shape().str();
    return o.str();
  }
  // Correct outputs are byte-identical (every variant writes +0 for zero): one memcmp decides
  // them, and only a mismatch pays for the pixel-by-pixel walk (seconds at 32768^2).
  if (std::memcmp(got.raw(), want.raw(), want.bytes()) == 0) return "";
  std::int64_t diffs = 0, first = -1;
  for (std::int64_t i = 0; i < got.size(); ++i)
    if (pixel(got, i) != pixel(want, i)) {
      if (first < 0) first = i;
      ++diffs;
    }
  if (first < 0) return "";
  const std::int64_t nx = want.shape().nx;
  o << "MISMATCH vs seq: " << diffs << " pixels differ; first at (x=" << first % nx << ", y=" << first / nx
    << "): got " << pixel(got, first) << ", want " << pixel(want, first);
  return o.str();
}

nlohmann::json stats_json(const reconstruct::Stats& s) {
  nlohmann::json j = {{"initially_queued", s.initially_queued},
                      {"total_queued", s.total_queued},
                      {"passes", s.passes},
                      {"overflow_reruns", s.overflow_reruns},
                      {"wavefront_ms", s.wavefront_ms >= 0 ? nlohmann::json(s.wavefront_ms) : nlohmann::json()}};
  harness::add_tiled(j, s.tiled);
  return j;
}

}  // namespace repix::family::reconstruct_checks
