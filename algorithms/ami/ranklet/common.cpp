// Pieces shared by the ranklet variants: input and window checks, the output layout, the CPU row
// driver.
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {

void check_input(const HostImage& img) { check_input(InputDesc{img.dtype(), img.shape()}); }

void check_input(const InputDesc& in) {
  if (in.shape.ndim != 2)
    throw Error("the ranklet transform takes a 2-D image; got " + std::to_string(in.shape.ndim) + "-D, shape " +
                in.shape.str());
  if (in.dtype != DType::u8)
    throw Error("the ranklet transform takes a uint8 image; got " + dtype_name(in.dtype) +
                " (convert with a.astype(np.uint8) after scaling to 0..255)");
  if (in.shape.size() <= 0) throw Error("empty image (shape " + in.shape.str() + ")");
}

void check_windows(const std::vector<int>& windows) {
  if (windows.empty()) throw Error("no window sizes given (e.g. 4,8,16,32)");
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const int r = windows[i];
    if (r < kMinWindow || r > kMaxWindow || (r & (r - 1)) != 0)
      throw Error("window size " + std::to_string(r) + " is not a power of two from 2 to 32");
    for (std::size_t j = 0; j < i; ++j)
      if (windows[j] == r) throw Error("window size " + std::to_string(r) + " given twice");
  }
}

std::vector<int> parse_windows(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (tok.empty() || tok.size() > 3 || tok.find_first_not_of("0123456789") != std::string::npos)
      throw Error("window sizes are a comma-separated list of powers of two from 2 to 32 (e.g. 4,8,16,32); got '" +
                  text + "'");
    out.push_back(std::atoi(tok.c_str()));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  check_windows(out);
  return out;
}

std::string windows_text(const std::vector<int>& windows) {
  std::string s;
  for (std::size_t i = 0; i < windows.size(); ++i) s += (i ? "," : "") + std::to_string(windows[i]);
  return s;
}

Result make_result(const Shape& shape, const std::vector<int>& windows, bool pinned) {
  Result r;
  r.windows = windows;
  r.ranklet = HostImage(DType::f32, Shape::d3(shape.nx, shape.ny, kOrientations * static_cast<std::int64_t>(windows.size())),
                        pinned);
  return r;
}

float* plane(Result& r, std::size_t w, int o) {
  return r.ranklet.data<float>() + (w * kOrientations + o) * r.ranklet.shape().slice_size();
}
const float* plane(const Result& r, std::size_t w, int o) {
  return r.ranklet.data<float>() + (w * kOrientations + o) * r.ranklet.shape().slice_size();
}

Result run_rows(const HostImage& input, const Options& opt, int threads, const RowFn& row) {
  check_input(input);
  check_windows(opt.windows);
  Result res = make_result(input.shape(), opt.windows);
  const std::int64_t width = input.shape().nx, height = input.shape().ny;
  for (std::size_t w = 0; w < opt.windows.size(); ++w) {
    float* planes[kOrientations];
    for (int o = 0; o < kOrientations; ++o) planes[o] = plane(res, w, o);
    const int r = opt.windows[w];
    const int n = threads == 1 ? 1 : threads > 0 ? threads : omp_get_max_threads();
    // Rows in parallel: every row writes only its own output (dynamic: border rows cost the same
    // as the others, but the machine is shared).
#pragma omp parallel for num_threads(n) schedule(dynamic, 1) if (n > 1)
    for (std::int64_t y = 0; y < height; ++y) {
      float* out[kOrientations];
      for (int o = 0; o < kOrientations; ++o) out[o] = planes[o] + y * width;
      row(r, y, out);
    }
  }
  return res;
}

}  // namespace repix::ami::ranklet
