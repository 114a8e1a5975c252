// seq: Berger et al. 2007 on the whole image (detail::berger_rect): counting sort, union-find from
// the highest level down with union by rank and path compression, then the canonicalisation, which
// with the stable sort gives the normal form directly. The reference every variant must equal.
#include "core/nvtx.hpp"
#include "maxtree/detail.hpp"
#include "maxtree/variants.hpp"

namespace repix::maxtree {

Result run_seq(const HostImage& image, const Options& opt) {
  nvtx::Range range("maxtree/seq");
  return detail::run_typed(image, opt, [&](auto f, auto& parent, Stats& stats) {
    using I = typename std::decay_t<decltype(parent)>::value_type;
    const auto t0 = std::chrono::steady_clock::now();
    nvtx::Range r("build");
    detail::BergerScratch<I> scratch;
    detail::berger_rect(f.data, f.shape.nx, {0, 0, f.shape.nx, f.shape.ny}, opt.connectivity, parent.data(), scratch);
    stats.build_ms = detail::ms_since(t0);
  });
}

}  // namespace repix::maxtree
