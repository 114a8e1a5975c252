// The pieces of harness/family.hpp that are not the interface itself: outputs of a run in memory.
#include "harness/family.hpp"

namespace repix::family {

std::size_t bytes_of(const Array& a) {
  std::size_t bytes = static_cast<std::size_t>(std::stoul(a.dtype.substr(2)));  // "<f8": 8
  for (const std::int64_t d : a.shape) bytes *= static_cast<std::size_t>(d);
  return bytes;
}

std::vector<std::int64_t> numpy_shape(const Shape& s) {
  return s.ndim == 1   ? std::vector<std::int64_t>{s.nx}
         : s.ndim == 2 ? std::vector<std::int64_t>{s.ny, s.nx}
                       : std::vector<std::int64_t>{s.nz, s.ny, s.nx};
}

Array array_of(std::string name, HostImage img) {
  std::vector<std::int64_t> dims = numpy_shape(img.shape());
  return array_of(std::move(name), std::move(img), std::move(dims));
}

Array array_of(std::string name, HostImage img, std::vector<std::int64_t> dims) {
  const char* dtype = dispatch_dtype(img.dtype(), [](auto tag) { return numpy_dtype<typename decltype(tag)::type>(); });
  auto held = std::make_shared<HostImage>(std::move(img));
  return {std::move(name), dtype, std::move(dims), held->raw(), held};
}

std::string distributed_families() {
  std::string out;
  for (const auto& f : all())
    if (f->has_distributed_run()) out += (out.empty() ? "" : ", ") + f->name();
  return out.empty() ? "none" : out;
}

}  // namespace repix::family
