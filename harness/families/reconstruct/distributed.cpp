#include "harness/families/reconstruct/distributed.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/distributed/driver.hpp"
#include "harness/distributed/shared_npy.hpp"
#include "reconstruct/common.hpp"

namespace repix::family::reconstruct_distributed {

namespace {

namespace rd = reconstruct::detail;

// A border wave may queue up to the part's pixels / this on the host before the part is
// reconstructed again by the variant instead (multi-device's CPU budget: past it the variant's
// scans beat the FIFO).
constexpr std::int64_t kFifoDivisor = 16;

// Row `y` of `img` as bytes.
std::vector<char> row_bytes(const HostImage& img, std::int64_t y) {
  const std::size_t n = static_cast<std::size_t>(img.shape().nx) * dtype_size(img.dtype());
  const char* p = static_cast<const char*>(img.raw()) + static_cast<std::size_t>(y) * n;
  return {p, p + n};
}

// Raises each pixel of row `y` of J to min(max J(q), I(p)) over its neighbours q in `across` (the
// neighbouring rank's edge row) where that is higher, and queues it. Returns how many it raised.
template <class T>
std::int64_t pull_row(HostImage& J, const HostImage& mask, std::int64_t y, const std::vector<char>& across,
                      int connectivity, rd::PixelQueue& q) {
  const std::int64_t nx = J.shape().nx;
  std::vector<T> other(static_cast<std::size_t>(nx));
  std::memcpy(other.data(), across.data(), other.size() * sizeof(T));
  T* j = J.data<T>() + y * nx;
  const T* m = mask.data<T>() + y * nx;
  std::int64_t raised = 0;
  for (std::int64_t x = 0; x < nx; ++x) {
    T best = other[static_cast<std::size_t>(x)];
    if (connectivity == 8) {
      if (x > 0) best = rd::vmax(best, other[static_cast<std::size_t>(x - 1)]);
      if (x + 1 < nx) best = rd::vmax(best, other[static_cast<std::size_t>(x + 1)]);
    }
    if (!(j[x] < best) || m[x] == j[x]) continue;
    j[x] = rd::vmin(best, m[x]);
    q.push(x, y);
    ++raised;
  }
  return raised;
}

// Propagates the queued pixels inside J; where the wave outgrows its budget, reconstructs J again
// with `variant` (J as the marker). Returns whether the variant ran.
template <class T>
bool propagate_part(HostImage& J, const HostImage& mask, const reconstruct::Options& opt,
                    const reconstruct::Variant& variant, rd::PixelQueue& q) {
  const Shape s = J.shape();
  const rd::Window<T> w{J.data<T>(), mask.data<T>(), s.nx, 0, 0, s.nx, s.ny};
  const std::int64_t budget = std::max<std::int64_t>(1, s.size() / kFifoDivisor);
  if (opt.connectivity == 8) rd::propagate<T, 8>(w, q, budget);
  else rd::propagate<T, 4>(w, q, budget);
  if (q.empty()) return false;
  q.clear();
  J = variant.run(J, mask, opt).image;
  return true;
}

// One rank's rows.
class ReconstructJob final : public distributed::Job {
 public:
  ReconstructJob(const cli::Args& a, const reconstruct::Options& opt, const reconstruct::Variant& variant)
      : comm_(distributed::Comm::world()), opt_(opt), variant_(variant) {
    distributed::refuse_multi_device(variant.id, "rows");
    output_ = distributed::npy_output(a, "output");
    marker_name_ = a.need("marker");
    mask_name_ = a.need("mask");
    marker_spec_ = datasets::spec_of(marker_name_);
    mask_spec_ = datasets::spec_of(mask_name_);
  }

  void load() override {
    dtype_ = datasets::spec_dtype(mask_spec_);
    shape_ = datasets::spec_shape(mask_spec_);
    reconstruct::check_descriptions({datasets::spec_dtype(marker_spec_), datasets::spec_shape(marker_spec_)},
                                    {dtype_, shape_}, opt_);
    std::tie(first_, last_) = distributed::part(shape_.ny, comm_.rank(), comm_.size());
    if (first_ == last_) return;
    if (variant_.gpu) {
      distributed::use_rank_gpu(comm_);
    }
    const Shape rows = Shape::d2(shape_.nx, last_ - first_);
    marker_ = HostImage(dtype_, rows, variant_.gpu);
    mask_ = HostImage(dtype_, rows, variant_.gpu);
    datasets::open_source(marker_spec_)->read(first_, last_, marker_.raw());
    datasets::open_source(mask_spec_)->read(first_, last_, mask_.raw());
    reconstruct::check_part(marker_, mask_, opt_, shape_, first_ * shape_.nx);
  }

  // The part reconstructed alone, then border rounds until no rank raises a pixel. The ranks with
  // rows are 0 .. active-1; each swaps its edge rows with its neighbours.
  void compute() override {
    const bool mine = first_ < last_;
    distributed::on_every_rank(comm_, [&] {
      if (mine) J_ = variant_.run(marker_, mask_, opt_).image;
    });
    const std::int64_t active = std::min<std::int64_t>(comm_.size(), shape_.ny);
    const int up = mine && comm_.rank() > 0 ? comm_.rank() - 1 : -1;
    const int down = mine && comm_.rank() + 1 < active ? comm_.rank() + 1 : -1;
    const std::size_t row_size = static_cast<std::size_t>(shape_.nx) * dtype_size(dtype_);
    rounds_ = reruns_ = raised_total_ = 0;
    rd::PixelQueue queue;
    for (;;) {
      std::vector<char> from_up(row_size), from_down(row_size);
      if (mine) {
        comm_.exchange(up, row_bytes(J_, 0), from_up);
        comm_.exchange(down, row_bytes(J_, last_ - first_ - 1), from_down);
      }
      std::int64_t raised = 0;
      distributed::on_every_rank(comm_, [&] {
        if (!mine) return;
        dispatch_dtype(dtype_, [&](auto tag) {
          using T = typename decltype(tag)::type;
          if (up >= 0) raised += pull_row<T>(J_, mask_, 0, from_up, opt_.connectivity, queue);
          if (down >= 0) raised += pull_row<T>(J_, mask_, last_ - first_ - 1, from_down, opt_.connectivity, queue);
          if (raised > 0 && propagate_part<T>(J_, mask_, opt_, variant_, queue)) ++reruns_;
        });
      });
      raised_total_ += raised;
      if (comm_.sum_all(raised) == 0) break;
      ++rounds_;
    }
    if (mine) rd::canonical_zeros(J_, rd::thread_count(opt_));
  }

  void write() override {
    if (output_.empty()) return;
    const std::size_t row_size = static_cast<std::size_t>(shape_.nx) * dtype_size(dtype_);
    const bool mine = first_ < last_;
    distributed::write_npy_parts(comm_, output_, datasets::npy_descr(dtype_), datasets::npy_dims(shape_),
                                 static_cast<std::uint64_t>(first_) * row_size, mine ? J_.raw() : nullptr,
                                 mine ? J_.bytes() : 0);
  }
  nlohmann::json rank_part() const override {
    return {{"rows", {first_, last_}},
            {"border_rounds", rounds_},
            {"raised_at_borders", raised_total_},
            {"variant_reruns", reruns_}};
  }
  std::string split() const override { return "rows"; }
  nlohmann::json record() const override {
    return {{"family", "reconstruct"},
            {"variant", variant_.id},
            {"connectivity", opt_.connectivity},
            {"clip", opt_.clip},
            {"marker", marker_name_},
            {"mask", mask_name_},
            {"shape", shape_.str()},
            {"dtype", dtype_name(dtype_)},
            {"border_rounds", rounds_}};
  }

 private:
  const distributed::Comm& comm_;
  reconstruct::Options opt_;
  const reconstruct::Variant& variant_;
  std::string output_, marker_name_, mask_name_;
  datasets::Spec marker_spec_, mask_spec_;
  DType dtype_ = DType::u8;
  Shape shape_;
  std::int64_t first_ = 0, last_ = 0;
  HostImage marker_, mask_, J_;
  std::int64_t rounds_ = 0, reruns_ = 0, raised_total_ = 0;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const reconstruct::Options& opt,
                                      const reconstruct::Variant& variant) {
  return std::make_unique<ReconstructJob>(a, opt, variant);
}

}  // namespace repix::family::reconstruct_distributed
