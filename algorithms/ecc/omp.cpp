// `omp`: OpenMP over slabs of the whole image (accumulate_slabs_parallel: each thread into
// private VCEC and occurrence arrays, merged once at the end).
#include <omp.h>

#include "core/nvtx.hpp"
#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc {

Curve run_omp(const HostImage& img, const Options& opt) {
  nvtx::Range range("ecc/omp");
  check_input(img);
  return visit_image(img, [&](auto view) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(view.data)>>;
    const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
    const CpuBins<T> bins(view, threads);
    std::vector<std::int64_t> vcec(bins.values.size()), present(bins.values.size());
    accumulate_slabs_parallel(view, bins, 0, slab_count(view.shape), threads, vcec.data(), present.data());
    return curve_from_bins(bins.values, vcec, present);
  });
}

}  // namespace repix::ecc
