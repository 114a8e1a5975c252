#include "harness/families/ami/auto_mi_distributed.hpp"

#include <vector>

#include "ami/auto_mi/nmi_core.hpp"
#include "core/error.hpp"
#include "datasets/io.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::auto_mi_distributed {

namespace am = ami::auto_mi;

namespace {

// A rank's per-lag NMIs, horizontal then vertical, as bytes.
std::vector<char> pack(const am::Features& f) {
  std::vector<double> all(f.nmi_x);
  all.insert(all.end(), f.nmi_y.begin(), f.nmi_y.end());
  return distributed::bytes_of(all);
}

// Rank `rank`'s lags of `direction` as the --json record says them: [first, last], or [] for none.
nlohmann::json lags_of(std::int64_t h, std::int64_t w, int direction, int rank, int ranks) {
  std::int64_t first = 1, last = 0;
  am::lag_range(h, w, direction, rank, ranks, &first, &last);
  return first <= last ? nlohmann::json{first, last} : nlohmann::json::array();
}

// One rank's lags.
class AutoMiJob final : public distributed::Job {
 public:
  AutoMiJob(const cli::Args& a, const am::Options& given, const am::Variant& variant)
      : comm_(distributed::Comm::world()), variant_(variant), opt_(given) {
    distributed::refuse_multi_device(variant.id, "lags");
    input_ = a.need("input");
    output_ = a.get("output");
    opt_.part = comm_.rank();
    opt_.parts = comm_.size();
  }

  void load() override {
    if (variant_.gpu) {
      distributed::use_rank_gpu(comm_);
    }
    labels_ = datasets::load(input_, variant_.gpu);
    shape_ = labels_.shape();
  }

  void compute() override {
    am::Features mine;
    distributed::on_every_rank(comm_, [&] { mine = variant_.run(labels_, opt_); });
    const std::vector<std::vector<char>> parts = comm_.gather_to_root(pack(mine));
    distributed::on_every_rank(comm_, [&] {
      if (!comm_.root()) return;
      // Each lag's NMI is nonzero in one part at most: the sum over ranks is that part's value, exactly.
      whole_ = am::Features{};
      whole_.nmi_x.assign(mine.nmi_x.size(), 0.0);
      whole_.nmi_y.assign(mine.nmi_y.size(), 0.0);
      for (const std::vector<char>& p : parts) {
        if (p.size() != (whole_.nmi_x.size() + whole_.nmi_y.size()) * sizeof(double))
          throw Error("auto-mi: internal: a rank sent " + std::to_string(p.size()) + " bytes of lags");
        const std::vector<double> v = distributed::values_of<double>(p);
        for (std::size_t i = 0; i < whole_.nmi_x.size(); ++i) whole_.nmi_x[i] += v[i];
        for (std::size_t i = 0; i < whole_.nmi_y.size(); ++i) whole_.nmi_y[i] += v[whole_.nmi_x.size() + i];
      }
      am::finish_features(whole_, shape_.ny, shape_.nx);
    });
  }

  void write() override {
    if (comm_.root() && !output_.empty()) am::write_csv(whole_, output_);
  }
  nlohmann::json rank_part() const override {
    return {{"horizontal_lags", lags_of(shape_.ny, shape_.nx, am::kHorizontal, comm_.rank(), comm_.size())},
            {"vertical_lags", lags_of(shape_.ny, shape_.nx, am::kVertical, comm_.rank(), comm_.size())}};
  }
  std::string split() const override { return "lags, ranges of equal pair counts"; }
  nlohmann::json record() const override {
    return {{"family", "auto-mi"},      {"variant", variant_.id},           {"input", input_},
            {"shape", shape_.str()},    {"horizontal", whole_.horizontal}, {"vertical", whole_.vertical}};
  }

 private:
  const distributed::Comm& comm_;
  const am::Variant& variant_;
  am::Options opt_;
  std::string input_, output_;
  HostImage labels_;
  Shape shape_;
  am::Features whole_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const am::Options& opt, const am::Variant& variant) {
  return std::make_unique<AutoMiJob>(a, opt, variant);
}

}  // namespace repix::family::auto_mi_distributed
