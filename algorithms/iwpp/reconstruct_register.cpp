// The reconstruct family's variants, in ablation order.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {};
  return v;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "reconstruct variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::reconstruct
