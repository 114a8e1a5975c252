#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "harness/family.hpp"

namespace repix::family {

const std::vector<Family>& all() {
  static const std::vector<Family> f = {ecc_family(), reconstruct_family(), edt_family()};
  return f;
}

const Family& find(const std::string& name) {
  return find_by_name(all(), name, "family", [](const Family& f) { return f.name; });
}

}  // namespace repix::family
