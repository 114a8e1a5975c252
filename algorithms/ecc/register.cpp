// The ECC registry: one line per variant, in ablation order. Adding a variant is one file
// plus one line here; the CLI, the harness, the tests and the tables pick it up.
#include "core/find_by_name.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_variants.hpp"

namespace repix::ecc {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    v.push_back({"seq", false, "reference", "Algorithm 1, one thread (the reference)", run_seq, {}, {}});
    v.push_back({"omp", false, "cpu-parallel", "OpenMP over slabs, thread-private histograms merged", run_omp, {}, {}});
    append_gpu_variants(v);
    return v;
  }();
  return all;
}

const Variant& find_variant(const std::string& id) {
  return find_by_name(variants(), id, "ecc variant", [](const Variant& v) { return v.id; });
}

}  // namespace repix::ecc
