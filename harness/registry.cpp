#include "harness/registry.hpp"

#include "core/error.hpp"
#include "ecc/ecc.hpp"

namespace repix::registry {

std::vector<std::string> families() { return {"ecc"}; }

std::vector<VariantInfo> variants(const std::string& family) {
  std::vector<VariantInfo> out;
  if (family.empty() || family == "ecc")
    for (const auto& v : ecc::variants()) out.push_back({"ecc", v.id, v.gpu, v.step, v.description});
  return out;
}

void check_family(const std::string& family) {
  std::string known;
  for (const auto& f : families()) {
    if (f == family) return;
    known += (known.empty() ? "" : ", ") + f;
  }
  throw Error("unknown family '" + family + "' (known: " + known + ")");
}

}  // namespace repix::registry
