// `seq`: the paper's Algorithm 1 on one thread, voxel by voxel. The reference every other
// variant is checked against.
#include "core/nvtx.hpp"
#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc {

Curve run_seq(const HostImage& img, const Options&) {
  nvtx::Range range("ecc/seq");
  check_input(img);
  return visit_image(img, [](auto view) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(view.data)>>;
    const CpuBins<T> bins(view, 1);  // one thread, binning included
    std::vector<std::int64_t> vcec(bins.values.size()), present(bins.values.size());
    accumulate_slabs(view, bins, 0, slab_count(view.shape), vcec.data(), present.data());
    return curve_from_bins(bins.values, vcec, present);
  });
}

}  // namespace repix::ecc
