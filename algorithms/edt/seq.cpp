// `seq`: the paper's Algorithm 3 (Danielsson-style nearest-site propagation over the 8-neighbour
// grid with a FIFO queue), the reference of the wave variants. Sites are packed coordinates and
// "no site yet" is a flag (detail.hpp), so no squared distance can overflow. Single-threaded
// throughout (mask and output included): it is the baseline of omp-tiled's speedup.
#include "core/nvtx.hpp"
#include "edt/detail.hpp"
#include "edt/propagate.hpp"

namespace repix::edt {

Result run_seq(const HostImage& input, const Options& opt) {
  nvtx::Range range("edt/seq");
  check_input(input);
  const Shape sh = input.shape();
  const std::vector<std::uint8_t> bg = background_mask(input, 1);
  std::vector<std::int64_t> vr(static_cast<std::size_t>(sh.size()));
  const Window all{0, 0, sh.nx, sh.ny};
  Fifo q;
  Stats st;
  {
    nvtx::Range r("init");
    st.initially_queued = init_window(bg.data(), sh.nx, sh.ny, all, vr.data(), q);
  }
  {
    nvtx::Range r("propagate");
    st.total_queued = st.initially_queued + propagate_window(sh.nx, all, vr.data(), q);
  }
  st.passes = 1;
  Result res = result_from_packed(sh, vr, opt.want_sites, 1);
  res.stats = st;
  return res;
}

}  // namespace repix::edt
