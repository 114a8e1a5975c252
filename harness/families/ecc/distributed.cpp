#include "harness/families/ecc/distributed.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/slab_source.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"
#include "harness/distributed/driver.hpp"

namespace repix::family::ecc_distributed {

namespace {

// One rank's sums: per value, the signed change of the Euler characteristic and how many of
// its own voxels hold it (0: a value only its halo holds).
struct Sums {
  std::vector<float> values;
  std::vector<std::int64_t> vcec, present;
};

// The slabs [own_first, own_last) of `img` (this rank's part with its halo slabs), summed with
// their neighbours in `img`: the halo slabs count as neighbours only.
template <class T>
Sums sum_part(const HostImage& img, std::int64_t own_first, std::int64_t own_last, int threads) {
  const ImageView<T> view = img.view<T>();
  const ecc::CpuBins<T> bins(view, threads);
  Sums s;
  s.values = bins.values;
  s.vcec.assign(bins.values.size(), 0);
  s.present.assign(bins.values.size(), 0);
  if (own_first < own_last)
    ecc::accumulate_slabs_parallel(view, bins, own_first, own_last, threads, s.vcec.data(), s.present.data());
  return s;
}

// A rank with no slabs: float32 has no values to send; 8- and 16-bit bins still join the
// reduction, with zeros.
template <class T>
Sums empty_part() {
  if (std::is_same<T, float>::value) return {};
  const ecc::CpuBins<T> bins(ImageView<T>{nullptr, Shape{}}, 1);
  return {bins.values, std::vector<std::int64_t>(bins.values.size(), 0),
          std::vector<std::int64_t>(bins.values.size(), 0)};
}

// The first NaN or infinity among this rank's own slabs [own_first, own_last) of `img`, whose slab
// 0 is the image's slab `held_first`, said with its place in the whole image (ecc::check_input
// would name the place in the part).
void check_finite(const HostImage& img, const Shape& whole, std::int64_t held_first, std::int64_t own_first,
                  std::int64_t own_last) {
  if (img.dtype() != DType::f32) return;
  const float* v = img.data<float>();
  const std::int64_t per_slab = slab_elems(whole);
  for (std::int64_t i = own_first * per_slab; i < own_last * per_slab; ++i)
    if (!std::isfinite(v[i])) ecc::throw_nonfinite(whole, held_first * per_slab + i, std::isnan(v[i]));
}

// The sums of a part from its curve (gpu-stream over the part's slabs): each listed value's
// contribution is the step of the running sum there, and it is present.
template <class T>
Sums from_curve(const ecc::Curve& c) {
  Sums s = empty_part<T>();
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const std::int64_t step = c.ecc[i] - (i > 0 ? c.ecc[i - 1] : 0);
    if (std::is_same<T, float>::value) {
      s.values.push_back(c.values[i]);
      s.vcec.push_back(step);
      s.present.push_back(1);
    } else {  // the bins are the type's every value, in order
      const auto bin = static_cast<std::size_t>(c.values[i]);
      s.vcec.at(bin) = step;
      s.present.at(bin) = 1;
    }
  }
  return s;
}

// float32: each rank's values present in its own voxels with their sums, as bytes.
std::vector<char> pack(const Sums& s) {
  std::vector<char> out;
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (s.present[i] == 0) continue;
    const std::size_t at = out.size();
    out.resize(at + sizeof(float) + 2 * sizeof(std::int64_t));
    std::memcpy(out.data() + at, &s.values[i], sizeof(float));
    std::memcpy(out.data() + at + sizeof(float), &s.vcec[i], sizeof(std::int64_t));
    std::memcpy(out.data() + at + sizeof(float) + sizeof(std::int64_t), &s.present[i], sizeof(std::int64_t));
  }
  return out;
}

// Appends value v's counts to `s`, merged with its last value where equal (== : -0.0 and 0.0 are one
// value, as the sort in merge() sees them).
void add_value(Sums& s, float v, std::int64_t c, std::int64_t n) {
  if (!s.values.empty() && s.values.back() == v) {
    s.vcec.back() += c;
    s.present.back() += n;
  } else {
    s.values.push_back(v);
    s.vcec.push_back(c);
    s.present.push_back(n);
  }
}

// Two sums sorted by value merged by value in one pass (a rank's running total and its next
// chunk: re-sorting the total at every chunk grows with the chunks at high-entropy float32).
// Values no voxel holds are left out, as pack() leaves them.
Sums merge_sorted(const Sums& a, const Sums& b) {
  Sums s;
  std::size_t i = 0, j = 0;
  while (i < a.values.size() || j < b.values.size()) {
    const bool take_a = j == b.values.size() || (i < a.values.size() && !(b.values[j] < a.values[i]));
    const Sums& from = take_a ? a : b;
    std::size_t& k = take_a ? i : j;
    if (from.present[k] != 0) add_value(s, from.values[k], from.vcec[k], from.present[k]);
    ++k;
  }
  return s;
}

// Every rank's packed sums merged by value: the bins of the whole image.
Sums merge(const std::vector<std::vector<char>>& parts) {
  std::vector<std::tuple<float, std::int64_t, std::int64_t>> all;
  const std::size_t rec = sizeof(float) + 2 * sizeof(std::int64_t);
  for (const auto& p : parts)
    for (std::size_t at = 0; at + rec <= p.size(); at += rec) {
      float v;
      std::int64_t c, n;
      std::memcpy(&v, p.data() + at, sizeof(float));
      std::memcpy(&c, p.data() + at + sizeof(float), sizeof c);
      std::memcpy(&n, p.data() + at + sizeof(float) + sizeof c, sizeof n);
      all.emplace_back(v, c, n);
    }
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
  Sums s;
  for (const auto& [v, c, n] : all) add_value(s, v, c, n);
  return s;
}

// seq's chunks: large enough that a chunk's two halo slabs are a small part of what it reads.
constexpr std::size_t kSeqChunkBytes = std::size_t(256) << 20;

// One rank's part of the curve.
class EccJob final : public distributed::Job {
 public:
  EccJob(const cli::Args& a, const ecc::Options& opt) : comm_(distributed::Comm::world()), opt_(opt) {
    opt_.generate_on_device = true;  // each rank's GPU makes its own slabs of a generated input
    variant_ = a.get("variant", gpu_available() ? "gpu-stream" : "seq");
    if (variant_ != "gpu-stream" && variant_ != "seq" && variant_ != "omp")
      throw cli::UsageError("--distributed runs every rank's slabs with gpu-stream (on GPU rank % GPUs), seq (the CPU "
                            "slab code, one thread) or omp (the same on --threads threads); --variant " + variant_ +
                            " does not apply");
    threads_ = variant_ == "omp" ? (opt.threads > 0 ? opt.threads : omp_get_max_threads()) : 1;
    if (a.has("plot")) throw cli::UsageError("--plot is not drawn by a distributed run (draw it from its --json)");
    input_ = a.need("input");
    output_ = a.get("output");
  }

  // The input's type and shape, this rank's part and (gpu-stream) its GPU; both variants read
  // their slabs in compute(), chunk by chunk.
  void load() override {
    spec_ = datasets::spec_of(input_);
    dtype_ = datasets::spec_dtype(spec_);
    shape_ = datasets::spec_shape(spec_);
    slabs_ = slab_count(shape_);
    std::tie(first_, last_) = distributed::part(slabs_, comm_.rank(), comm_.size());
    if (first_ < last_ && variant_ == "gpu-stream") distributed::use_rank_gpu(comm_);
  }

  void compute() override {
    Sums sums;
    distributed::on_every_rank(comm_, [&] {
      if (first_ == last_) {
        sums = dispatch_dtype(dtype_, [&](auto tag) { return empty_part<typename decltype(tag)::type>(); });
      } else if (variant_ == "gpu-stream") {
        // The source reads each chunk with its halo slabs itself: the part is never whole in memory.
        const ecc::Curve part = ecc::run_gpu_stream_slabs(*datasets::open_source(spec_), opt_, first_, last_);
        sums = dispatch_dtype(dtype_, [&](auto tag) { return from_curve<typename decltype(tag)::type>(part); });
      } else {
        sums = dispatch_dtype(dtype_, [&](auto tag) { return sum_streamed<typename decltype(tag)::type>(); });
      }
    });
    // 8- and 16-bit values are bins of fixed places (every rank the same): one reduction.
    // float32: each rank's values, gathered and merged.
    Sums whole;
    if (dtype_ == DType::f32) {
      const std::vector<std::vector<char>> parts = comm_.gather_to_root(pack(sums));
      if (comm_.root()) whole = merge(parts);
    } else {
      comm_.sum_to_root(sums.vcec);
      comm_.sum_to_root(sums.present);
      whole = std::move(sums);
    }
    if (comm_.root()) curve_ = ecc::curve_from_bins(whole.values, whole.vcec, whole.present);
  }

  void write() override {
    if (comm_.root() && !output_.empty()) ecc::write_csv(curve_, output_);
  }
  nlohmann::json rank_part() const override { return {{"slabs", {first_, last_}}, {"threads", threads_}}; }

 private:
  // seq and omp: the part in chunks of whole slabs (--chunk-mib, else about kSeqChunkBytes each; at
  // least one slab), each read with the halo slab on each side, checked and summed: a part
  // larger than the rank's memory streams through it.
  template <class T>
  Sums sum_streamed() const {
    const auto src = datasets::open_source(spec_);
    const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(shape_)) * dtype_size(dtype_);
    const std::size_t chunk_bytes = opt_.chunk_bytes ? opt_.chunk_bytes : kSeqChunkBytes;
    const std::int64_t per = std::max<std::int64_t>(1, static_cast<std::int64_t>(chunk_bytes / slab_bytes));
    Sums total = empty_part<T>();
    for (std::int64_t c0 = first_; c0 < last_; c0 += per) {
      const std::int64_t c1 = std::min(last_, c0 + per);
      const std::int64_t h0 = std::max<std::int64_t>(0, c0 - 1), h1 = std::min(slabs_, c1 + 1);
      Shape held = shape_;
      if (shape_.ndim == 3) held.nz = h1 - h0;
      else held.ny = h1 - h0;
      HostImage img(dtype_, held);
      src->read(h0, h1, img.raw());
      check_finite(img, shape_, h0, c0 - h0, c1 - h0);
      const Sums chunk = sum_part<T>(img, c0 - h0, c1 - h0, threads_);
      if (std::is_same<T, float>::value) {
        total = merge_sorted(total, chunk);
      } else {  // the same bins in every chunk
        for (std::size_t i = 0; i < total.vcec.size(); ++i) {
          total.vcec[i] += chunk.vcec[i];
          total.present[i] += chunk.present[i];
        }
      }
    }
    return total;
  }

  std::string split() const override { return shape_.ndim == 3 ? "z planes" : "rows"; }
  nlohmann::json record() const override {
    return {{"family", "ecc"},      {"variant", variant_},  {"input", input_},     {"shape", shape_.str()},
            {"dtype", dtype_name(dtype_)}, {"values", curve_.values}, {"ecc", curve_.ecc},
            {"generated_on_gpu", variant_ == "gpu-stream" && datasets::generates_on_device(spec_)}};
  }

  const distributed::Comm& comm_;
  ecc::Options opt_;
  std::string variant_, input_, output_;
  datasets::Spec spec_;
  DType dtype_ = DType::u8;
  Shape shape_;
  std::int64_t slabs_ = 0, first_ = 0, last_ = 0;
  int threads_ = 1;  // seq: 1; omp: --threads or OpenMP's default
  ecc::Curve curve_;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const ecc::Options& opt) {
  return std::make_unique<EccJob>(a, opt);
}

}  // namespace repix::family::ecc_distributed
