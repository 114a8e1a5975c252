// Verification verdicts and the reconstruct Stats JSON of the IWPP families, shared by their bench
// cases (bench_reconstruct.cpp, bench_edt.cpp, where they are defined), `repix run reconstruct
// --json` and the IWPP paper tables (tables_iwpp*.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "core/image.hpp"
#include "edt/verify.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::bench {

// "" when `got` equals `want` pixel for pixel (values compared with ==), else one line naming
// how many pixels differ and the first of them.
std::string reconstruct_mismatch(const HostImage& got, const HostImage& want);

// A reconstruct run's Stats: the queue counters, wavefront_ms (null where not measured) and, for
// tiled multi-device runs, "tiled".
nlohmann::json reconstruct_stats_json(const reconstruct::Stats& s);

// An edt::Check (compare_exact for exact variants, check_propagation for wave variants) as the
// result's verified flag, one-line text and error statistics; `what` says what was compared.
struct EdtVerdict {
  bool ok = false;
  std::string text;
  nlohmann::json errors = nlohmann::json::object();
};
EdtVerdict edt_verdict(const edt::Check& c, bool exact, const std::string& what);

}  // namespace repix::bench
