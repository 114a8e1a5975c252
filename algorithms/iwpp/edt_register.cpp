// The edt family's variants, in ablation order.
#include "core/find_by_name.hpp"
#include "core/error.hpp"
#include "iwpp/edt.hpp"
#include "iwpp/edt_gpu_variants.hpp"

namespace repix::edt {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    append_gpu_variants(v);
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "edt variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::edt
