#include "harness/families/ami/ami_distributed.hpp"

#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "datasets/io.hpp"

namespace repix::family::ami_distributed {

namespace {

class AmiJob final : public distributed::Job {
 public:
  AmiJob(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant)
      : comm_(distributed::Comm::world()), opt_(opt), variant_(variant) {
    distributed::refuse_multi_device(variant.id, "windows");
    input_ = a.need("input");
    output_ = a.get("output");
    std::tie(first_, last_) = distributed::part(static_cast<std::int64_t>(opt.windows.size()), comm_.rank(), comm_.size());
    mine_ = opt_;
    mine_.windows.assign(opt.windows.begin() + first_, opt.windows.begin() + last_);
  }

  void load() override {
    if (first_ < last_ && variant_.gpu) distributed::use_rank_gpu(comm_);
    image_ = datasets::load(input_, variant_.gpu);
    ami::check_input(image_, opt_);
  }

  void compute() override {
    ami::Result part;
    distributed::on_every_rank(comm_, [&] {
      if (first_ < last_) part = variant_.run(image_, mine_);
    });
    std::vector<char> bytes(part.features.size() * sizeof(double));
    if (!bytes.empty()) std::memcpy(bytes.data(), part.features.data(), bytes.size());
    const std::vector<std::vector<char>> parts = comm_.gather_to_root(bytes);
    distributed::on_every_rank(comm_, [&] {
      if (!comm_.root()) return;
      // The ranks' windows are contiguous and in rank order: their features, back to back, are the
      // single process's order.
      whole_ = ami::Result{};
      whole_.windows = opt_.windows;
      for (const std::vector<char>& p : parts) {
        const std::size_t at = whole_.features.size();
        whole_.features.resize(at + p.size() / sizeof(double));
        if (!p.empty()) std::memcpy(whole_.features.data() + at, p.data(), p.size());
      }
      if (whole_.features.size() != opt_.windows.size() * ami::kFeaturesPerWindow)
        throw Error("ami: internal: the ranks sent " + std::to_string(whole_.features.size()) + " features");
    });
  }

  void write() override {
    if (comm_.root() && !output_.empty()) ami::write_csv(whole_, output_);
  }
  nlohmann::json rank_part() const override { return {{"windows", mine_.windows}}; }
  std::string split() const override { return "windows (each rank its windows' planes and features)"; }
  nlohmann::json record() const override {
    return {{"family", "ami"},
            {"variant", variant_.id},
            {"windows", opt_.windows},
            {"input", input_},
            {"shape", image_.shape().str()},
            {"features", whole_.features}};
  }

 private:
  const distributed::Comm& comm_;
  ami::Options opt_, mine_;
  const ami::Variant& variant_;
  std::string input_, output_;
  std::int64_t first_ = 0, last_ = 0;
  HostImage image_;
  ami::Result whole_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant) {
  return std::make_unique<AmiJob>(a, opt, variant);
}

}  // namespace repix::family::ami_distributed
