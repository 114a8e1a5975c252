// The area-opening family's harness knowledge (see harness/family_of.hpp and common.hpp): one image
// per dataset, threshold --area A; each variant is a tree variant followed by the area filter; the
// reference is seq's; outputs must be equal pixel for pixel.
#include <cstring>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "harness/families/maxtree/common.hpp"
#include "harness/families/maxtree/distributed.hpp"
#include "harness/json_text.hpp"

namespace repix::family {

namespace {

class AreaOpeningFamily final : public maxtree_common::Base<maxtree::AreaVariant> {
 public:
  std::string name() const override { return "area-opening"; }
  std::string algorithms() const override { return "maxtree"; }

 protected:
  const std::vector<Variant>& registry() const override { return maxtree::area_variants(); }
  const std::vector<Option>& option_table() const override {
    static const std::vector<Option> t = [] {
      options::Spec area = options::integer("area", "A", "the area threshold (pixels, at least 1)", "100",
                                            options::kRun | options::kProfile | options::kBench);
      area.min = 1;
      area.max = std::numeric_limits<long long>::max();
      std::vector<Option> v = tree_options();
      v.push_back(options::bind_int(&Options::area, area));
      return v;
    }();
    return t;
  }
  // The output image, and the tree (int32 parents, int64 areas) while it is filtered.
  std::uint64_t output_bytes(std::int64_t elements, DType dtype) const override {
    return static_cast<std::uint64_t>(elements) * (dtype_size(dtype) + 12);
  }
  Verdict check(const Variant&, const Inputs&, const Result& ref, const Result& got, const std::string& what) const override {
    const HostImage &g = got.image, &w = ref.image;
    if (g.dtype() == w.dtype() && g.shape() == w.shape() && g.content_hash() == w.content_hash() &&
        std::memcmp(g.raw(), w.raw(), g.bytes()) == 0)
      return {true, "output equal to seq's"};
    std::string why = "MISMATCH vs seq: area opening";
    if (g.dtype() != w.dtype() || g.shape() != w.shape())
      why += " is " + dtype_name(g.dtype()) + " " + g.shape().str() + " instead of " + dtype_name(w.dtype()) + " " +
             w.shape().str();
    else
      visit_image(w, [&](auto want) {
        using T = std::decay_t<decltype(*want.data)>;
        const T* have = g.data<T>();
        why += maxtree_common::first_difference(w.shape(), [&](std::int64_t i) {
          return std::make_pair(static_cast<long long>(have[i]), static_cast<long long>(want.data[i]));
        });
      });
    return {false, what.empty() ? why : what + ": " + why};
  }
  // Peers (baselines/peers.py: scikit-image's area_opening, Higra's max-tree filtered by area): their
  // image compared with seq's exactly. scikit-image returns zeros when the whole image is smaller
  // than A (repix, like Higra, keeps the root): such inputs leave it out rather than count as wrong.
  nlohmann::json peer_params(const Options& o) const override {
    return {{"connectivity", o.connectivity}, {"area", o.area}};
  }
  nlohmann::json peer_extra(const Options& o) const override {
    return {{"connectivity", o.connectivity}, {"area", o.area}};
  }
  std::string peer_skip_reason(const peers::Peer& p, const std::string& spec, const Options& o) const override {
    const Shape s = datasets::spec_shape(datasets::spec_of(spec));
    if (is_skimage(p) && s.size() < o.area)
      return "scikit-image's area_opening returns zeros when the whole image (" + std::to_string(s.size()) +
             " pixels) is smaller than A = " + std::to_string(o.area) + "; repix keeps the root";
    return small_side_reason(p, spec);
  }
  Verdict check_peer(const peers::Peer&, const Inputs& in, const Result& ref, HostImage output) const override {
    const HostImage& img = in.at(0);
    if (output.dtype() != img.dtype() || output.shape() != img.shape())
      return {false, "the peer wrote a " + dtype_name(output.dtype()) + " " + output.shape().str() + " array; expected " +
                         dtype_name(img.dtype()) + " " + img.shape().str()};
    return check(find_variant("seq"), in, ref, Result{std::move(output), {}}, "");
  }

  nlohmann::json extra(const Variant& v, const std::string& scope, const Stats& s, const Options& o) const override {
    nlohmann::json j = Base::extra(v, scope, s, o);
    j["area"] = o.area;
    return j;
  }

  // No --variant: the fastest exact one the machine runs (gpu-opt with a GPU, omp without).
  RunDeclaration run_declaration() const override {
    return {{"input"},
            {{{"output", "", {".npy"}, ".npy (the input's dtype)", true},
              false,
              [](const Result& r, const Inputs&, const std::string& path) { datasets::write_npy(r.image, path); },
              [](Result& r, const Shape&) { return array_of("output", std::move(r.image)); }}},
            "--variant V --input IMG --area A [--output OUT.npy] [--json OUT.json]",
            "area opening of a 2-D uint8/uint16 image (same dtype; the root is always kept: never below min)",
            "gpu-opt",
            "omp"};
  }
  void check_run_arguments(const cli::Args& a) const override {
    if (!a.has("area")) throw cli::UsageError("run area-opening needs --area A");
  }
  // The variants check their input (maxtree::check_area_input); on the device, the same here.
  void check_device_inputs(const std::vector<DeviceImage>& in, const Options& opt, cudaStream_t) const override {
    maxtree::check_area_input(InputDesc{in.at(0).dtype, in.at(0).shape}, opt);
  }
  bool has_distributed_run() const override { return true; }
  std::unique_ptr<distributed::Job> distributed_job(const cli::Args& a, const Options& opt) const override {
    return maxtree_distributed::job(a, opt, declared_run_variant(a).id, /*area_opening=*/true);
  }
  nlohmann::json run_record_extra(const Variant&, const Result& r, const Inputs&, const Options& opt) const override {
    nlohmann::json j = run_record_common(opt, r.stats);
    j["area"] = opt.area;
    return j;
  }
};

}  // namespace

std::unique_ptr<Family> area_opening_family() { return std::make_unique<AreaOpeningFamily>(); }

}  // namespace repix::family
