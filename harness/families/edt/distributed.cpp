#include "harness/families/edt/distributed.hpp"

#include <omp.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "edt/detail.hpp"
#include "harness/distributed/driver.hpp"
#include "harness/distributed/shared_npy.hpp"

namespace repix::family::edt_distributed {

namespace {

// Column x's first background row of the part in [x] and its last in [nx + x] (the whole image's
// row numbers; -1: none).
std::vector<std::int32_t> column_ends(const std::vector<std::uint8_t>& bg, std::int64_t nx, std::int64_t rows,
                              std::int64_t y0) {
  std::vector<std::int32_t> ends(static_cast<std::size_t>(2 * nx), -1);
  for (std::int64_t y = 0; y < rows; ++y)
    for (std::int64_t x = 0; x < nx; ++x)
      if (bg[static_cast<std::size_t>(y * nx + x)]) {
        std::int32_t& first = ends[static_cast<std::size_t>(x)];
        if (first < 0) first = static_cast<std::int32_t>(y0 + y);
        ends[static_cast<std::size_t>(nx + x)] = static_cast<std::int32_t>(y0 + y);
      }
  return ends;
}

// The variants a rank may run: seq-exact's passes (CPU), or an exact separable GPU variant, which
// takes the columns' bounds outside the part (edt::Options::column_bounds).
bool exact_on_parts(const edt::Variant& v) {
  return v.id == "seq-exact" || v.id == "gpu-opt" || v.id == "gpu-exact-envelope" || v.id == "gpu-exact-rowfill";
}

// One rank's rows.
class EdtJob final : public distributed::Job {
 public:
  EdtJob(const cli::Args& a, const edt::Options& given, const edt::Variant& variant)
      : comm_(distributed::Comm::world()), opt_(given), variant_(variant) {
    if (!exact_on_parts(variant))
      throw cli::UsageError("--distributed runs an exact EDT on every rank's rows: --variant seq-exact, gpu-opt, "
                            "gpu-exact-envelope or gpu-exact-rowfill; got " + variant.id);
    output_ = distributed::npy_output(a, "output");
    sites_out_ = distributed::npy_output(a, "sites");
    input_ = a.need("input");
    spec_ = datasets::spec_of(input_);
    opt_.want_sites = !sites_out_.empty();
    threads_ = opt_.threads > 0 ? opt_.threads : omp_get_max_threads();
  }

  void load() override {
    shape_ = datasets::spec_shape(spec_);
    edt::check_description(shape_);
    std::tie(first_, last_) = distributed::part(shape_.ny, comm_.rank(), comm_.size());
    if (first_ == last_) {  // no rows: no column has a background row here
      ends_ = distributed::bytes_of(column_ends(bg_, shape_.nx, 0, first_));
      return;
    }
    if (variant_.gpu) distributed::use_rank_gpu(comm_);
    rows_ = HostImage(datasets::spec_dtype(spec_), Shape::d2(shape_.nx, last_ - first_), variant_.gpu);
    datasets::open_source(spec_)->read(first_, last_, rows_.raw());
    edt::check_part(rows_, shape_, first_ * shape_.nx);
    bg_ = edt::background_mask(rows_, threads_);
    // The part's own column ends: what it sends at every compute().
    ends_ = distributed::bytes_of(column_ends(bg_, shape_.nx, last_ - first_, first_));
  }

  // Column x's nearest background row above the part: the last one of the nearest rank above
  // that has one; below: the first one of the nearest rank below.
  void compute() override {
    std::vector<std::vector<std::int32_t>> ends;
    for (const std::vector<char>& b : comm_.gather_to_all(ends_)) ends.push_back(distributed::values_of<std::int32_t>(b));
    const std::int64_t nx = shape_.nx;
    std::vector<std::int32_t> above(static_cast<std::size_t>(nx), -1), below(static_cast<std::size_t>(nx), -1);
    auto end_of = [&](int r, std::int64_t i) { return ends[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]; };
    for (std::int64_t x = 0; x < nx; ++x) {
      for (int r = comm_.rank() - 1; r >= 0 && above[static_cast<std::size_t>(x)] < 0; --r)
        above[static_cast<std::size_t>(x)] = end_of(r, nx + x);
      for (int r = comm_.rank() + 1; r < comm_.size() && below[static_cast<std::size_t>(x)] < 0; ++r)
        below[static_cast<std::size_t>(x)] = end_of(r, x);
    }
    distributed::on_every_rank(comm_, [&] {
      if (first_ == last_) return;
      if (!variant_.gpu) {
        result_ = edt::exact_rows(bg_, Shape::d2(nx, last_ - first_), first_, above.data(), below.data(), opt_, threads_);
        return;
      }
      // The GPU variant on the part, the bounds counted from its first row; its sites are then
      // indices into the part's rows (negative above it): shifted to the whole image's.
      edt::Options o = opt_;
      o.column_bounds.assign(static_cast<std::size_t>(2 * nx), edt::kNoRow);
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::size_t i = static_cast<std::size_t>(x);
        if (above[i] >= 0) o.column_bounds[i] = static_cast<std::int32_t>(above[i] - first_);
        if (below[i] >= 0) o.column_bounds[static_cast<std::size_t>(nx) + i] = static_cast<std::int32_t>(below[i] - first_);
      }
      result_ = variant_.run(rows_, o);
      if (result_.sites.empty()) return;
      const float* d = result_.distance.data<float>();
      const std::int64_t shift = first_ * nx, n = rows_.size();
#pragma omp parallel for num_threads(threads_) schedule(static)
      for (std::int64_t i = 0; i < n; ++i)
        if (std::isfinite(d[i])) result_.sites[static_cast<std::size_t>(i)] += shift;
    });
  }

  void write() override {
    const std::uint64_t at = static_cast<std::uint64_t>(first_ * shape_.nx);
    const std::size_t count = static_cast<std::size_t>((last_ - first_) * shape_.nx);
    if (!output_.empty())
      distributed::write_npy_parts(comm_, output_, "<f4", datasets::npy_dims(shape_), at * sizeof(float),
                                   count ? result_.distance.raw() : nullptr, count * sizeof(float));
    if (!sites_out_.empty())
      distributed::write_npy_parts(comm_, sites_out_, "<i8", datasets::npy_dims(shape_), at * sizeof(std::int64_t),
                                   result_.sites.data(), count * sizeof(std::int64_t));
  }
  nlohmann::json rank_part() const override { return {{"rows", {first_, last_}}, {"threads", threads_}}; }
  std::string split() const override { return "rows; the columns' nearest background rows gathered"; }
  nlohmann::json record() const override {
    return {{"family", "edt"},
            {"variant", variant_.id},
            {"input", input_},
            {"shape", shape_.str()}};
  }

 private:
  const distributed::Comm& comm_;
  edt::Options opt_;
  const edt::Variant& variant_;
  std::string output_, sites_out_, input_;
  datasets::Spec spec_;
  int threads_ = 1;
  Shape shape_;
  std::int64_t first_ = 0, last_ = 0;
  HostImage rows_;
  std::vector<std::uint8_t> bg_;
  std::vector<char> ends_;
  edt::Result result_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const edt::Options& opt, const edt::Variant& variant) {
  return std::make_unique<EdtJob>(a, opt, variant);
}

}  // namespace repix::family::edt_distributed
