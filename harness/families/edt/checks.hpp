// The edt family's verdicts and Stats JSON, shared by its adapter (adapter.cpp) and the IWPP
// paper tables.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "edt/edt.hpp"
#include "edt/verify.hpp"

namespace repix::family::edt_checks {

// An edt::Check (compare_exact for exact variants, check_propagation for wave variants) as a
// verified flag, one-line text and error statistics; `what` says what was compared.
struct Verdict {
  bool ok = false;
  std::string text;
  nlohmann::json errors = nlohmann::json::object();
};
Verdict verdict(const edt::Check& c, bool exact, const std::string& what);

// A run's Stats: queue counters, gpu-opt's fallback rows and, for multi-device runs, "tiled".
nlohmann::json stats_json(const edt::Stats& s);

}  // namespace repix::family::edt_checks
