// NVTX ranges in the single domain "repix". No range name holds a `/`: Nsight's filters read `/`
// as nesting, so a name given as a path `family/variant` is pushed as two nested ranges,
// `family` then `variant`, and the variant's phases (h2d, kernel, d2h, init, ...) nest inside:
// `--nvtx-include "repix@ecc/gpu-opt/"` selects exactly ecc > gpu-opt. The harness opens the
// (family, variant) ranges of every invocation itself (harness/family_of.hpp, bench.cpp), so every
// family gets the same names; a variant that also opens its own `family/variant` range directly
// inside the harness's same one (the algorithms do, for callers outside the harness) adds nothing.
// Warm-up runs sit under a `warmup` range and plan set-up and uploads under `setup`, beside (not
// inside) the variant's timed ranges. Numbers go in payloads, never in names, so Nsight groups
// identical ranges together.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <functional>
#include <string>

namespace repix::nvtx {

struct DomainTag {
  static constexpr const char* name = "repix";
};

nvtxDomainHandle_t domain();

class Range {
 public:
  // `name`: one range, or a path `a/b` pushed as nested ranges a > b (none when it is the path
  // innermost open on this thread: the harness opened it already).
  explicit Range(const char* name);
  Range(const char* name, std::int64_t payload);  // the payload goes on the innermost range
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  void open(const char* name, bool has_payload, std::int64_t payload);
  int pushed_ = 0;    // ranges this object pushed (and pops)
  bool path_ = false; // it opened a path (tracked for the rule above)
};

// Tests: every push (its name) and pop (nullptr) in the domain, on any thread, goes to the
// observer as well as to NVTX; an empty function removes it. Not for concurrent use with ranges.
using Observer = std::function<void(const char* pushed)>;
void set_observer(Observer observer);

}  // namespace repix::nvtx
