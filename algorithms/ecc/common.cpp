// Pieces shared by all ECC variants: input checks, binning helpers, VCEC -> curve, CSV IO and
// the generic end-to-end driver for GPU plans.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"
#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc {

void check_input(const HostImage& img) {
  if (img.size() <= 0) throw Error("empty image");
  if (img.dtype() != DType::f32) return;
  const float* d = img.data<float>();
  const std::int64_t n = img.size();
  std::int64_t first_bad = n;
#pragma omp parallel for reduction(min : first_bad)
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(d[i])) first_bad = std::min(first_bad, i);
  if (first_bad < n) throw_nonfinite(img.shape(), first_bad, std::isnan(d[first_bad]));
}

void throw_nonfinite(const Shape& s, std::int64_t index, bool is_nan) {
  const std::int64_t x = index % s.nx, y = (index / s.nx) % s.ny, z = index / s.slice_size();
  std::ostringstream o;
  o << (is_nan ? "NaN" : "infinity") << " in the input at (x=" << x << ", y=" << y;
  if (s.ndim == 3) o << ", z=" << z;
  o << "): the ECC needs finite values";
  throw Error(o.str());
}

std::vector<float> sorted_distinct(const float* data, std::int64_t n, int threads) {
  // Each thread sorts and dedups its own contiguous part, then the parts are merged pairwise.
  const int parts = std::max(1, std::min<int>(threads, static_cast<int>(n / 65536) + 1));
  std::vector<std::vector<float>> sorted(parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    const std::int64_t b = n * p / parts, e = n * (p + 1) / parts;
    std::vector<float>& v = sorted[p];
    v.reserve(static_cast<std::size_t>(e - b));
    for (std::int64_t i = b; i < e; ++i) v.push_back(data[i] + 0.0f);  // -0 -> +0
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  for (int step = 1; step < parts; step *= 2) {
#pragma omp parallel for num_threads(parts) schedule(dynamic, 1)
    for (int p = 0; p < parts - step; p += 2 * step) {
      std::vector<float> merged;
      merged.reserve(sorted[p].size() + sorted[p + step].size());
      std::merge(sorted[p].begin(), sorted[p].end(), sorted[p + step].begin(),
                 sorted[p + step].end(), std::back_inserter(merged));
      merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
      sorted[p] = std::move(merged);
      std::vector<float>().swap(sorted[p + step]);
    }
  }
  return std::move(sorted[0]);
}

Curve curve_from_bins(const std::vector<float>& bin_values, const std::vector<std::int64_t>& vcec,
                      const std::vector<std::int64_t>& present) {
  Curve c;
  std::int64_t acc = 0;
  for (std::size_t i = 0; i < bin_values.size(); ++i) {
    acc += vcec[i];
    if (present[i] == 0) continue;
    c.values.push_back(bin_values[i]);
    c.ecc.push_back(acc);
  }
  return c;
}

void write_csv(const Curve& c, const std::string& path) {
  AtomicFile f(path);
  std::FILE* fp = f.stream();
  std::fputs("value,ecc\n", fp);
  for (std::size_t i = 0; i < c.values.size(); ++i)
    std::fprintf(fp, "%.9g,%lld\n", static_cast<double>(c.values[i]),
                 static_cast<long long>(c.ecc[i]));
  f.commit();
}

Curve read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open '" + path + "'");
  std::string line;
  if (!std::getline(in, line) || line != "value,ecc")
    throw Error("'" + path + "' is not an ECC CSV (header 'value,ecc' expected)");
  Curve c;
  std::size_t lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const auto comma = line.find(',');
    try {
      if (comma == std::string::npos) throw std::invalid_argument("no comma");
      std::size_t used = 0;
      c.values.push_back(std::stof(line.substr(0, comma), &used));
      c.ecc.push_back(std::stoll(line.substr(comma + 1)));
    } catch (const std::exception&) {
      throw Error("'" + path + "' line " + std::to_string(lineno) + ": expected value,ecc");
    }
  }
  return c;
}

Curve run_plan_end_to_end(DevicePlan& plan, const HostImage& img, const std::string& nvtx_name, const Options& opt) {
  nvtx::Range range(nvtx_name.c_str());
  check_input(img);
  require_gpu();
  return plan_end_to_end(plan, img, opt);
}

}  // namespace repix::ecc
