// The reconstruct family's CLI handlers and bench cases: filled in with its variants.
#include "core/error.hpp"
#include "harness/family.hpp"
#include "iwpp/reconstruct.hpp"

namespace repix::family {

Family reconstruct_family() {
  Family f;
  f.name = "reconstruct";
  f.run_usage =
      "run reconstruct --variant V --marker M.npy --mask K.npy --connectivity 4|8 --output OUT.npy";
  f.variants = [] {
    std::vector<registry::VariantInfo> out;
    for (const auto& v : reconstruct::variants())
      out.push_back({"reconstruct", v.id, v.gpu, v.step, v.description});
    return out;
  };
  f.run = [](const cli::Args&) -> int { throw Error("reconstruct: no variants registered yet"); };
  f.profile = f.run;
  f.add_bench_cases = [](bench::Context&, std::vector<bench::Case>&) {};
  return f;
}

}  // namespace repix::family
