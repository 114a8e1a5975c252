// The reconstruct family's verification and Stats JSON, shared by its adapter (adapter.cpp) and
// the IWPP paper tables.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "core/image.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::family::reconstruct_checks {

// "" when `got` equals `want` pixel for pixel (values compared with ==), else one line naming
// how many pixels differ and the first of them.
std::string mismatch(const HostImage& got, const HostImage& want);

// A run's Stats: the queue counters, wavefront_ms (null where not measured) and, for tiled
// multi-device runs, "tiled".
nlohmann::json stats_json(const reconstruct::Stats& s);

}  // namespace repix::family::reconstruct_checks
