// The edt family's CLI handlers and bench cases: filled in with its variants.
#include "core/error.hpp"
#include "harness/family.hpp"
#include "iwpp/edt.hpp"

namespace repix::family {

Family edt_family() {
  Family f;
  f.name = "edt";
  f.run_usage =
      "run edt --variant V --input MASK.npy --output OUT.npy [--sites SITES.npy]";
  f.variants = [] {
    std::vector<registry::VariantInfo> out;
    for (const auto& v : edt::variants())
      out.push_back({"edt", v.id, v.gpu, v.step, v.description});
    return out;
  };
  f.run = [](const cli::Args&) -> int { throw Error("edt: no variants registered yet"); };
  f.profile = f.run;
  f.add_bench_cases = [](bench::Context&, std::vector<bench::Case>&) {};
  return f;
}

}  // namespace repix::family
