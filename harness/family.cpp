// The pieces of harness/family.hpp that are not the interface itself: outputs of a run in memory.
#include "harness/family.hpp"

namespace repix::family {

Array array_of(std::string name, HostImage img) {
  const Shape& s = img.shape();
  std::vector<std::int64_t> dims = s.ndim == 1 ? std::vector<std::int64_t>{s.nx}
                                   : s.ndim == 2 ? std::vector<std::int64_t>{s.ny, s.nx}
                                                 : std::vector<std::int64_t>{s.nz, s.ny, s.nx};
  const char* dtype = dispatch_dtype(img.dtype(), [](auto tag) { return numpy_dtype<typename decltype(tag)::type>(); });
  auto held = std::make_shared<HostImage>(std::move(img));
  return {std::move(name), dtype, std::move(dims), held->raw(), held};
}

}  // namespace repix::family
