#include "harness/families/ami/ami_distributed.hpp"

#include <vector>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "ami/ranklet/ranklet.hpp"
#include "core/error.hpp"
#include "datasets/io.hpp"

namespace repix::family::ami_distributed {

namespace {

namespace am = ami::auto_mi;

class AmiJob final : public distributed::Job {
 public:
  AmiJob(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant)
      : comm_(distributed::Comm::world()), opt_(opt), variant_(variant) {
    distributed::refuse_multi_device(variant.id, "windows");
    input_ = a.need("input");
    output_ = a.get("output");
    const auto windows = static_cast<std::int64_t>(opt.windows.size());
    grouped_ = comm_.size() > windows;
    if (!grouped_) {
      std::tie(first_, last_) = distributed::part(windows, comm_.rank(), comm_.size());
    } else {
      // Rank r's window: the one whose group of ranks holds r (groups of sizes differing by one).
      for (std::int64_t w = 0; w < windows; ++w) {
        const auto [a0, a1] = distributed::part(comm_.size(), static_cast<int>(w), static_cast<int>(windows));
        if (comm_.rank() >= a0 && comm_.rank() < a1) {
          first_ = w;
          last_ = w + 1;
          lag_part_ = static_cast<int>(comm_.rank() - a0);
          lag_parts_ = static_cast<int>(a1 - a0);
        }
      }
    }
    mine_ = opt_;
    mine_.windows.assign(opt.windows.begin() + first_, opt.windows.begin() + last_);
  }

  void load() override {
    if (first_ < last_ && variant_.gpu) distributed::use_rank_gpu(comm_);
    image_ = datasets::load(input_, variant_.gpu);
    ami::check_input(image_, opt_);
  }

  void compute() override {
    std::vector<double> sent;
    distributed::on_every_rank(comm_, [&] {
      if (first_ == last_) return;
      sent = grouped_ ? lag_nmis() : variant_.run(image_, mine_).features;
    });
    const std::vector<std::vector<char>> parts = comm_.gather_to_root(distributed::bytes_of(sent));
    distributed::on_every_rank(comm_, [&] {
      if (!comm_.root()) return;
      whole_ = ami::Result{};
      whole_.windows = opt_.windows;
      if (grouped_) {
        whole_.features = features_from_groups(parts);
      } else {
        // The ranks' windows are contiguous and in rank order: their features, back to back, are
        // the single process's order.
        for (const std::vector<char>& p : parts) {
          const std::vector<double> f = distributed::values_of<double>(p);
          whole_.features.insert(whole_.features.end(), f.begin(), f.end());
        }
      }
      if (whole_.features.size() != opt_.windows.size() * ami::kFeaturesPerWindow)
        throw Error("ami: internal: the ranks sent " + std::to_string(whole_.features.size()) + " features");
    });
  }

  void write() override {
    if (comm_.root() && !output_.empty()) ami::write_csv(whole_, output_);
  }
  nlohmann::json rank_part() const override {
    nlohmann::json j = {{"windows", mine_.windows}};
    if (grouped_) j["lag_part"] = {lag_part_, lag_parts_};
    return j;
  }
  std::string split() const override {
    return grouped_ ? "windows, each window's lags shared by its group of ranks"
                    : "windows (each rank its windows' planes and features)";
  }
  nlohmann::json record() const override {
    return {{"family", "ami"},
            {"variant", variant_.id},
            {"windows", opt_.windows},
            {"input", input_},
            {"shape", image_.shape().str()},
            {"features", whole_.features}};
  }

 private:
  // More ranks than windows: this rank's window's three ranklet planes (every rank of the group
  // makes them: the ranklet stage is the small one), each quantised as the pipeline does, and the
  // per-lag NMIs of its part of the lags (auto-mi's ranges of equal pair counts): orientation by
  // orientation, horizontal lags then vertical ones.
  std::vector<double> lag_nmis() const {
    const ami::ranklet::Variant& rv = ami::ranklet::find_variant(variant_.ranklet_id);
    const am::Variant& av = am::find_variant(variant_.auto_mi_id);
    ami::ranklet::Options ro;
    ro.windows = mine_.windows;
    ro.threads = opt_.threads;
    const ami::ranklet::Result planes = rv.run(image_, ro);
    am::Options ao;
    ao.threads = opt_.threads;
    ao.flush_level = opt_.flush_level;
    ao.part = lag_part_;
    ao.parts = lag_parts_;
    HostImage labels(DType::u8, image_.shape(), av.gpu);
    std::vector<double> out;
    for (int o = 0; o < ami::kOrientations; ++o) {
      ami::quantise_plane(ami::ranklet::plane(planes, 0, o), image_.size(), mine_.windows[0], labels.data<std::uint8_t>(),
                          opt_.threads);
      const am::Features f = av.run(labels, ao);
      out.insert(out.end(), f.nmi_x.begin(), f.nmi_x.end());
      out.insert(out.end(), f.nmi_y.begin(), f.nmi_y.end());
    }
    return out;
  }

  // At rank 0: each window's features from its group's lag NMIs. A lag's NMI is nonzero in one
  // rank's part at most, so the sum over the group is that rank's value exactly, and A_x and A_y
  // sum the lags in the single process's order (finish_features).
  std::vector<double> features_from_groups(const std::vector<std::vector<char>>& parts) const {
    const std::int64_t h = image_.shape().ny, w = image_.shape().nx;
    const auto lags_x = static_cast<std::size_t>(am::lag_count(h, w, am::kHorizontal));
    const auto lags_y = static_cast<std::size_t>(am::lag_count(h, w, am::kVertical));
    const std::size_t per_plane = lags_x + lags_y;
    const auto windows = static_cast<int>(opt_.windows.size());
    std::vector<double> features(opt_.windows.size() * ami::kFeaturesPerWindow);
    for (int win = 0; win < windows; ++win) {
      const auto [a0, a1] = distributed::part(comm_.size(), win, windows);
      std::vector<double> sum(per_plane * ami::kOrientations, 0.0);
      for (std::int64_t r = a0; r < a1; ++r) {
        const std::vector<double> v = distributed::values_of<double>(parts[static_cast<std::size_t>(r)]);
        if (v.size() != sum.size())
          throw Error("ami: internal: rank " + std::to_string(r) + " sent " + std::to_string(v.size()) + " lag NMIs");
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
      }
      for (int o = 0; o < ami::kOrientations; ++o) {
        am::Features f;
        const auto at = sum.begin() + static_cast<std::ptrdiff_t>(per_plane * static_cast<std::size_t>(o));
        f.nmi_x.assign(at, at + static_cast<std::ptrdiff_t>(lags_x));
        f.nmi_y.assign(at + static_cast<std::ptrdiff_t>(lags_x), at + static_cast<std::ptrdiff_t>(per_plane));
        am::finish_features(f, h, w);
        features[ami::feature_index(static_cast<std::size_t>(win), o, 0)] = f.horizontal;
        features[ami::feature_index(static_cast<std::size_t>(win), o, 1)] = f.vertical;
      }
    }
    return features;
  }

  const distributed::Comm& comm_;
  ami::Options opt_, mine_;
  const ami::Variant& variant_;
  std::string input_, output_;
  bool grouped_ = false;
  std::int64_t first_ = 0, last_ = 0;
  int lag_part_ = 0, lag_parts_ = 1;
  HostImage image_;
  ami::Result whole_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const ami::Options& opt, const ami::Variant& variant) {
  return std::make_unique<AmiJob>(a, opt, variant);
}

}  // namespace repix::family::ami_distributed
