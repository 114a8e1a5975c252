#include "harness/families/ecc/distributed.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/slab_source.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"
#include "harness/distributed/comm.hpp"
#include "harness/json_text.hpp"

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
Sums sum_part(const HostImage& img, std::int64_t own_first, std::int64_t own_last) {
  const ImageView<T> view = img.view<T>();
  const ecc::CpuBins<T> bins(view, 1);
  Sums s;
  s.values = bins.values;
  s.vcec.assign(bins.values.size(), 0);
  s.present.assign(bins.values.size(), 0);
  if (own_first < own_last) ecc::accumulate_slabs(view, bins, own_first, own_last, s.vcec.data(), s.present.data());
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
  for (const auto& [v, c, n] : all) {
    if (!s.values.empty() && s.values.back() == v) {
      s.vcec.back() += c;
      s.present.back() += n;
    } else {
      s.values.push_back(v);
      s.vcec.push_back(c);
      s.present.push_back(n);
    }
  }
  return s;
}

}  // namespace

int run(const cli::Args& a) {
  distributed::Comm& comm = distributed::Comm::world();
  if (a.has("variant"))
    throw cli::UsageError("--distributed runs every rank's part with the family's CPU slab code; --variant does not apply");
  if (a.has("plot")) throw cli::UsageError("--plot is not drawn by a distributed run (draw it from its --json)");
  const std::string input = a.need("input"), output = a.get("output"), json_out = a.get("json");
  const datasets::Spec spec = datasets::spec_of(input);
  const DType dtype = datasets::spec_dtype(spec);
  const Shape shape = datasets::spec_shape(spec);
  const std::int64_t slabs = slab_count(shape);
  const auto [first, last] = distributed::part(slabs, comm.rank(), comm.size());
  // The part and a halo slab on each side where the image goes on.
  const std::int64_t held_first = first < last ? std::max<std::int64_t>(0, first - 1) : first;
  const std::int64_t held_last = first < last ? std::min(slabs, last + 1) : first;

  comm.barrier();
  const double t0 = comm.wtime();
  std::string error;
  Sums sums;
  try {
    Shape held = shape;
    if (shape.ndim == 3) held.nz = held_last - held_first;
    else held.ny = held_last - held_first;
    if (first == last) {
      sums = dispatch_dtype(dtype, [&](auto tag) { return empty_part<typename decltype(tag)::type>(); });
    } else {
      HostImage img(dtype, held);
      datasets::open_source(spec)->read(held_first, held_last, img.raw());
      check_finite(img, shape, held_first, first - held_first, last - held_first);
      sums = dispatch_dtype(dtype, [&](auto tag) {
        return sum_part<typename decltype(tag)::type>(img, first - held_first, last - held_first);
      });
    }
  } catch (const std::exception& e) {
    error = "rank " + std::to_string(comm.rank()) + ": " + message_of(e);
  }
  comm.throw_first_error(error);
  // 8- and 16-bit values are bins of fixed places (every rank the same): one reduction. float32:
  // each rank's values, gathered and merged.
  Sums whole;
  if (dtype == DType::f32) {
    const std::vector<std::vector<char>> parts = comm.gather_to_root(pack(sums));
    if (comm.root()) whole = merge(parts);
  } else {
    comm.sum_to_root(sums.vcec);
    comm.sum_to_root(sums.present);
    whole = std::move(sums);
  }
  const double mine = comm.wtime() - t0;
  comm.barrier();
  const double slowest_ms = 1e3 * (comm.wtime() - t0);
  const std::vector<double> rank_s = comm.gather_to_root(mine);
  if (!comm.root()) return 0;
  const ecc::Curve curve = ecc::curve_from_bins(whole.values, whole.vcec, whole.present);
  if (!output.empty()) ecc::write_csv(curve, output);
  if (!json_out.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (int r = 0; r < comm.size(); ++r) {
      const auto [f, l] = distributed::part(slabs, r, comm.size());
      parts.push_back({{"rank", r}, {"slabs", {f, l}}, {"ms", 1e3 * rank_s[static_cast<std::size_t>(r)]}});
    }
    nlohmann::json j = {{"family", "ecc"},
                        {"distributed", {{"ranks", comm.size()},
                                         {"split", shape.ndim == 3 ? "z planes" : "rows"},
                                         {"parts", parts},
                                         {"mpi", distributed::mpi_library()}}},
                        {"input", input},
                        {"shape", shape.str()},
                        {"dtype", dtype_name(dtype)},
                        {"ms", slowest_ms},
                        {"values", curve.values},
                        {"ecc", curve.ecc}};
    write_file_atomic(json_out, json_text::dump(j, 1) + "\n");
  }
  return 0;
}

}  // namespace repix::family::ecc_distributed
