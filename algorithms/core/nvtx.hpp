// NVTX ranges in the single domain "repix". Outer ranges are named `family/variant`; phases
// nested inside are short names (h2d, kernel, d2h, bin, ...). Numbers go in payloads, never in
// names, so Nsight groups identical ranges together.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace repix::nvtx {

struct DomainTag {
  static constexpr const char* name = "repix";
};

nvtxDomainHandle_t domain();

class Range {
 public:
  explicit Range(const char* name);
  Range(const char* name, std::int64_t payload);
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

}  // namespace repix::nvtx
