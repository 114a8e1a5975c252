// The maxtree family's harness knowledge (see harness/family_of.hpp and common.hpp): one image per
// dataset; the reference is seq; every variant's parent image must equal it exactly (the normal
// form of algorithms/maxtree/maxtree.hpp is unique).
#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/families/maxtree/common.hpp"
#include "harness/families/maxtree/distributed.hpp"
#include "harness/json_text.hpp"

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

  // Peers (baselines/peers.py: scikit-image's max_tree, Higra's component_tree_max_tree): their tree
  // mapped to the normal form (maxtree::normal_form_of) and compared with seq's exactly.
  std::string peer_skip_reason(const peers::Peer& p, const std::string& spec, const Options&) const override {
    return small_side_reason(p, spec);
  }
  // The peer's parent indices come as uint16 (2, H, W): low 16 bits, then high 16 bits (repix reads
  // no integer type wider than 16 bits from .npy; images of up to 2^32 pixels).
  Verdict check_peer(const peers::Peer&, const Inputs& in, const Result& ref, HostImage output) const override {
    const HostImage& img = in.at(0);
    const Shape& sh = img.shape();
    if (output.dtype() != DType::u16 || output.shape() != Shape::d3(sh.nx, sh.ny, 2))
      return {false, "the peer wrote a " + dtype_name(output.dtype()) + " " + output.shape().str() +
                         " array; expected uint16 " + Shape::d3(sh.nx, sh.ny, 2).str() + " (low, high 16 bits)"};
    const std::uint16_t* v = output.data<std::uint16_t>();
    const std::int64_t n = img.size();
    std::vector<std::int64_t> parent(static_cast<std::size_t>(n));
    for (std::int64_t p = 0; p < n; ++p) parent[static_cast<std::size_t>(p)] = v[p] | (std::int64_t(v[n + p]) << 16);
    maxtree::ParentImage mapped;
    try {
      mapped = maxtree::normal_form_of(img, parent);
    } catch (const Error& e) {
      return {false, std::string("the peer's tree is not a max-tree: ") + e.what()};
    }
    return check(find_variant("seq"), in, ref, Result{mapped, {}}, "mapped to the normal form");
  }

  // No --variant: the fastest exact one the machine runs (gpu-opt with a GPU, omp without).
  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".npy"}, "int32/int64 .npy", true},
              false,
              [](const Result& r, const Inputs&, const std::string& path) {
                if (r.parent.wide) datasets::write_npy_int64(r.parent.wide_.data(), r.parent.shape, path);
                else datasets::write_npy_int32(r.parent.narrow.data(), r.parent.shape, path);
              },
              [](Result& r, const Shape& input_shape) {
                const std::vector<std::int64_t> shape = numpy_shape(input_shape);
                return r.parent.wide ? array_of("output", std::move(r.parent.wide_), shape)
                                     : array_of("output", std::move(r.parent.narrow), shape);
              }}},
            "--variant V --input IMG --output PARENT.npy [--json OUT.json]",
            "max-tree parent image in normal form (int32; int64 from 2^31 pixels) of a 2-D uint8/uint16 image",
            "gpu-opt",
            "omp"};
  }
  // The variants check their input (maxtree::check_input); on the device, the same here.
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options& opt, cudaStream_t) const override {
    maxtree::check_input(InputDesc{in.at(0).dtype, in.at(0).shape}, opt);
  }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return maxtree_distributed::job(a, opt, declared_run_variant(a).id, /*area_opening=*/false);
  }
  nlohmann::json run_record_extra(const Variant&, const Result& r, const Inputs& in, const Options& opt) const override {
    nlohmann::json j = run_record_common(opt, r.stats);
    j["nodes"] = maxtree::count_nodes(in.at(0), r.parent);
    j["index_dtype"] = r.parent.wide ? "int64" : "int32";
    return j;
  }
};

}  // namespace

std::unique_ptr<Family> maxtree_family() { return std::make_unique<MaxtreeFamily>(); }

}  // namespace repix::family
