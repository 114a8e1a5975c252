#include "harness/families/ami/ranklet_distributed.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/distributed/shared_npy.hpp"

namespace repix::family::ranklet_distributed {

namespace {

namespace rk = ami::ranklet;

class RankletJob final : public distributed::Job {
 public:
  RankletJob(const cli::Args& a, const rk::Options& opt, const rk::Variant& variant)
      : comm_(distributed::Comm::world()), opt_(opt), variant_(variant) {
    distributed::refuse_multi_device(variant.id, "rows");
    output_ = distributed::npy_output(a, "output");
    input_ = a.need("input");
  }

  void load() override {
    const datasets::Spec spec = datasets::spec_of(input_);
    shape_ = datasets::spec_shape(spec);
    rk::check_input(InputDesc{datasets::spec_dtype(spec), shape_});
    rk::check_windows(opt_.windows);
    std::tie(first_, last_) = distributed::part(shape_.ny, comm_.rank(), comm_.size());
    if (first_ == last_) return;
    const int half = *std::max_element(opt_.windows.begin(), opt_.windows.end()) / 2;
    above_ = std::min<std::int64_t>(first_, half - 1);
    below_ = std::min<std::int64_t>(shape_.ny - last_, half);
    if (variant_.gpu) distributed::use_rank_gpu(comm_);
    held_ = HostImage(DType::u8, Shape::d2(shape_.nx, last_ - first_ + above_ + below_), variant_.gpu);
    datasets::open_source(spec)->read(first_ - above_, last_ + below_, held_.raw());
  }

  void compute() override {
    distributed::on_every_rank(comm_, [&] {
      if (first_ < last_) result_ = variant_.run(held_, opt_);
    });
  }

  // This rank's rows of every plane: one run each.
  void write() override {
    if (output_.empty()) return;
    const std::int64_t planes = static_cast<std::int64_t>(opt_.windows.size()) * rk::kOrientations;
    const std::int64_t nx = shape_.nx, held_rows = held_.shape().ny;
    std::vector<distributed::Segment> mine;
    if (first_ < last_)
      for (std::int64_t p = 0; p < planes; ++p)
        mine.push_back({static_cast<std::uint64_t>((p * shape_.ny + first_) * nx) * sizeof(float),
                        result_.ranklet.data<float>() + (p * held_rows + above_) * nx,
                        static_cast<std::size_t>((last_ - first_) * nx) * sizeof(float)});
    distributed::write_npy_parts(
        comm_, output_, "<f4",
        {static_cast<std::int64_t>(opt_.windows.size()), rk::kOrientations, shape_.ny, shape_.nx}, mine);
  }
  nlohmann::json rank_part() const override {
    return {{"rows", {first_, last_}}, {"halo_rows", {above_, below_}}};
  }
  std::string split() const override { return "rows, with halo rows of the largest window"; }
  nlohmann::json record() const override {
    return {{"family", "ranklet"},
            {"variant", variant_.id},
            {"windows", opt_.windows},
            {"input", input_},
            {"shape", shape_.str()}};
  }

 private:
  const distributed::Comm& comm_;
  rk::Options opt_;
  const rk::Variant& variant_;
  std::string output_, input_;
  Shape shape_;
  std::int64_t first_ = 0, last_ = 0, above_ = 0, below_ = 0;
  HostImage held_;
  rk::Result result_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const rk::Options& opt, const rk::Variant& variant) {
  return std::make_unique<RankletJob>(a, opt, variant);
}

}  // namespace repix::family::ranklet_distributed
