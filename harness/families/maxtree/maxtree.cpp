// The maxtree family's harness knowledge (see harness/family_of.hpp and common.hpp): one image per
// dataset; the reference is seq; every variant's parent image must equal it exactly (the normal
// form of algorithms/maxtree/maxtree.hpp is unique).
#include "core/atomic_file.hpp"
#include "datasets/io.hpp"
#include "harness/families/maxtree/common.hpp"

namespace repix::family {

namespace {

class MaxtreeFamily final : public maxtree_common::Base<maxtree::Variant> {
 public:
  std::string name() const override { return "maxtree"; }

 protected:
  const std::vector<Variant>& registry() const override { return maxtree::variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = tree_options();
    return t;
  }
  // The parent image: int32 per pixel (int64 from 2^31 pixels).
  std::uint64_t output_bytes(std::int64_t elements, DType) const override {
    return static_cast<std::uint64_t>(elements) * (elements >= (std::int64_t(1) << 31) ? 8 : 4);
  }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got, const std::string& what) const override {
    if (got.parent == ref.parent) return {true, "parent image equal to seq's (normal form)"};
    std::string why = "MISMATCH vs seq: parent image";
    if (got.parent.shape != ref.parent.shape)
      why += " of shape " + got.parent.shape.str() + " instead of " + ref.parent.shape.str();
    else
      why += maxtree_common::first_difference(ref.parent.shape, [&](std::int64_t i) {
        return std::make_pair(got.parent[i], ref.parent[i]);
      });
    return {false, what.empty() ? why : what + ": " + why};
  }

  std::vector<std::string> run_arguments() const override { return {"input", "output", "json"}; }
  std::vector<cli::OutputArg> run_outputs() const override {
    return {{"output", "", {".npy"}, "int32/int64 .npy", true}, cli::json_output()};
  }
  std::string run_synopsis() const override {
    return "--variant V --input IMG --output PARENT.npy [--json OUT.json]";
  }
  std::string run_summary() const override {
    return "max-tree parent image in normal form (int32; int64 from 2^31 pixels) of a 2-D uint8/uint16 image";
  }
  int run_command(const cli::Args& a, const Options& opt) const override {
    const std::string input = a.need("input"), output = a.get("output"), json_out = a.get("json");
    if (output.empty() && json_out.empty()) throw cli::UsageError("run maxtree needs --output and/or --json");
    const Variant& v = find_variant(a.get("variant", "omp"));
    const HostImage img = load_checked(input, opt);
    const Result r = v.run(img, opt);
    if (!output.empty()) {
      if (r.parent.wide) datasets::write_npy_int64(r.parent.wide_.data(), r.parent.shape, output);
      else datasets::write_npy_int32(r.parent.narrow.data(), r.parent.shape, output);
    }
    if (!json_out.empty()) {
      nlohmann::json j = run_json("maxtree", v.id, input, img, opt, r.stats);
      j["nodes"] = maxtree::count_nodes(img, r.parent);
      j["index_dtype"] = r.parent.wide ? "int64" : "int32";
      write_file_atomic(json_out, j.dump(1) + "\n");
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Family> maxtree_family() { return std::make_unique<MaxtreeFamily>(); }

}  // namespace repix::family
