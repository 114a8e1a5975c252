// `omp`: OpenMP over slabs of the whole image; each thread accumulates into private VCEC and
// occurrence arrays, merged once at the end (no atomics in the inner loop).
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
    const std::size_t nb = bins.values.size();
    const std::int64_t slabs = slab_count(view.shape);
    std::vector<std::int64_t> vcec(nb), present(nb);
    // Thread-private arrays unless they would be huge (float images with millions of distinct
    // values): then all threads add atomically into the shared pair.
    if (nb * threads * 2 * sizeof(std::int64_t) > (std::size_t(256) << 20)) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (std::int64_t s = 0; s < slabs; s += 4)
        accumulate_slabs<T, true>(view, bins, s, std::min(slabs, s + 4), vcec.data(),
                                  present.data());
      return curve_from_bins(bins.values, vcec, present);
    }
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::int64_t> my_vcec(nb), my_present(nb);
      // Slabs in small dynamic chunks: the border slabs cost the same as inner ones, but a
      // thread may be descheduled; chunks of a few slabs keep the tail short.
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t s = 0; s < slabs; s += 4)
        accumulate_slabs(view, bins, s, std::min(slabs, s + 4), my_vcec.data(),
                         my_present.data());
#pragma omp critical
      for (std::size_t i = 0; i < nb; ++i) {
        vcec[i] += my_vcec[i];
        present[i] += my_present[i];
      }
    }
    return curve_from_bins(bins.values, vcec, present);
  });
}

}  // namespace repix::ecc
