// TEMPORARY, delete when the recon-cpu branch (reconstruct_common.cpp) is merged.
// A weak check_inputs so that this branch links on its own; the real one (strong symbol) replaces
// it at link time. It checks what the GPU variants rely on, per the contract in reconstruct.hpp.
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "iwpp/reconstruct.hpp"

namespace repix::reconstruct {

__attribute__((weak)) void check_inputs(const HostImage& marker, const HostImage& mask, const Options& opt) {
  const Shape& s = mask.shape();
  if (s.size() <= 0 || s.nz != 1 || s.ndim > 2) throw Error("reconstruct: a non-empty 2D mask is needed");
  if (marker.shape() != s || marker.dtype() != mask.dtype())
    throw Error("reconstruct: marker and mask differ in shape or dtype");
  if (opt.connectivity != 4 && opt.connectivity != 8)
    throw Error("reconstruct: connectivity must be 4 or 8, got " + std::to_string(opt.connectivity));
  visit_image(mask, [&](auto k) {
    using T = std::remove_const_t<std::remove_reference_t<decltype(k.data[0])>>;
    const T* m = marker.data<T>();
    for (std::int64_t i = 0; i < k.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(m[i]) || !std::isfinite(k.data[i])) throw Error("reconstruct: NaN or inf in the input");
      }
      if (!opt.clip && m[i] > k.data[i])
        throw Error("reconstruct: marker > mask at pixel " + std::to_string(i) + " (use clip)");
    }
  });
}

}  // namespace repix::reconstruct
