// The pieces every auto-mi variant shares: input checks, the host form of the canonical per-lag
// NMI, the lag sums, the end-to-end runner of GPU plans and the CSV output.
#include <cstdio>
#include <string>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"

namespace repix::ami::auto_mi {

void check_labels(const HostImage& img) {
  check_label_description({img.dtype(), img.shape()});
  if (img.dtype() == DType::u16) {
    const std::uint16_t* d = img.data<std::uint16_t>();
    for (std::int64_t i = 0; i < img.size(); ++i)
      if (d[i] > kMaxLabel) throw_label_above(img.shape(), i, d[i]);
  }
}

void check_label_description(const InputDesc& in) {
  const Shape& s = in.shape;
  if (s.ndim != 2)
    throw Error("auto-mi: the label image must be 2-D, got " + std::to_string(s.ndim) + "-D");
  if (in.dtype != DType::u8 && in.dtype != DType::u16)
    throw Error("auto-mi: labels must be uint8, or uint16 with values 0..256; got " + dtype_name(in.dtype));
  if (s.size() == 0) throw Error("auto-mi: the label image is empty");
}

void throw_label_above(const Shape& s, std::int64_t i, int label) {
  throw Error("auto-mi: label " + std::to_string(label) + " at (y=" + std::to_string(i / s.nx) + ", x=" +
              std::to_string(i % s.nx) + ") is above 256");
}

int label_bins(DType dtype) { return dtype == DType::u8 ? 256 : 257; }

std::int64_t total_pairs(std::int64_t h, std::int64_t w) { return h * w * (w - 1) / 2 + w * h * (h - 1) / 2; }

double nmi_of_histogram(const std::uint64_t* hist, int k, NmiScratch& s) {
  s.col_terms.assign(k, 0.0);
  s.col_counts.assign(k, 0);
  s.row_counts.assign(k, 0);
  std::uint64_t n = 0;
  for (int a = 0; a < k; ++a)
    for (int b = 0; b < k; ++b) n += hist[static_cast<std::size_t>(a) * k + b];
  // Row by row for the cache; each column still sums its rows in ascending order (canonical).
  for (int a = 0; a < k; ++a) {
    const std::uint64_t* row = hist + static_cast<std::size_t>(a) * k;
    for (int b = 0; b < k; ++b) {
      const std::uint64_t c = row[b];
      if (c == 0) continue;
      s.col_terms[b] = add_rn(s.col_terms[b], entropy_term(c, n));
      s.col_counts[b] += c;
      s.row_counts[a] += c;
    }
  }
  return nmi_from_columns(s.col_terms.data(), s.col_counts.data(), s.row_counts.data(), k, n);
}

namespace {
template <class T>
void count_lag(const T* l, std::int64_t w, const LagGeometry& g, int k, std::uint64_t* hist) {
  for (std::int64_t y = 0; y < g.rows; ++y) {
    const T* row = l + y * w;
    const T* partner = row + g.offset;
    for (std::int64_t x = 0; x < g.cols; ++x) ++hist[static_cast<std::size_t>(row[x]) * k + partner[x]];
  }
}
}  // namespace

double lag_nmi_cpu(const HostImage& labels, int direction, std::int64_t lag, std::vector<std::uint64_t>& hist,
                   NmiScratch& scratch) {
  const int k = label_bins(labels.dtype());
  const std::int64_t h = labels.shape().ny, w = labels.shape().nx;
  const LagGeometry g = lag_geometry(h, w, direction, lag);
  hist.assign(static_cast<std::size_t>(k) * k, 0);
  if (labels.dtype() == DType::u8) count_lag(labels.data<std::uint8_t>(), w, g, k, hist.data());
  else count_lag(labels.data<std::uint16_t>(), w, g, k, hist.data());
  return nmi_of_histogram(hist.data(), k, scratch);
}

void finish_features(Features& f, std::int64_t h, std::int64_t w) {
  // Lag order, one accumulator: the same sum in every variant.
  f.horizontal = 0;
  for (double v : f.nmi_x) f.horizontal += v;
  f.vertical = 0;
  for (double v : f.nmi_y) f.vertical += v;
  f.stats.pairs = total_pairs(h, w);
  f.stats.lags = static_cast<std::int64_t>(f.nmi_x.size() + f.nmi_y.size());
}

Features run_plan_end_to_end(DevicePlan& plan, const HostImage& img, const Options& opt, const char* nvtx_name) {
  nvtx::Range range(nvtx_name);
  check_labels(img);
  require_gpu();
  return plan_end_to_end(plan, img, opt);
}

void write_csv(const Features& f, const std::string& path) {
  char buf[128];
  std::string out = "direction,ami\n";
  std::snprintf(buf, sizeof buf, "horizontal,%.17g\nvertical,%.17g\n", f.horizontal, f.vertical);
  write_file_atomic(path, out + buf);
}

}  // namespace repix::ami::auto_mi
