#include "harness/families/edt/checks.hpp"

#include <sstream>

#include "harness/tiled_json.hpp"

namespace repix::family::edt_checks {

Verdict verdict(const edt::Check& c, bool exact, const std::string& what) {
  Verdict v;
  v.ok = c.ok;
  v.errors = c.errors();
  std::ostringstream o;
  if (!c.ok) o << "MISMATCH vs seq-exact (" << what << "): " << c.first_violation;
  else if (exact) o << "identical to seq-exact (" << c.pixels << " px, " << what << ")";
  else o << "propagation properties hold vs seq-exact (" << what << "); max error " << c.max_abs << " px, "
         << c.pixels_off << " px off";
  v.text = o.str();
  return v;
}

nlohmann::json stats_json(const edt::Stats& s) {
  nlohmann::json j = {{"initially_queued", s.initially_queued}, {"total_queued", s.total_queued},
                      {"passes", s.passes}, {"overflow_reruns", s.overflow_reruns}, {"fallback_rows", s.fallback_rows}};
  harness::add_tiled(j, s.tiled);
  return j;
}

}  // namespace repix::family::edt_checks
