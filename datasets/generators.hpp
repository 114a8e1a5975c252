// Internal interface between datasets.cpp (dispatch, sources) and the per-kind generator files.
// Every function takes a canonical Spec (Spec::parse or canonical() output).
#pragma once
#include <cstdint>
#include <functional>

#include "core/image.hpp"
#include "datasets/spec.hpp"

namespace repix::datasets::detail {

// An elementwise kind: fill(begin, end, dst) writes elements [begin, end) of the linear index
// range (x fastest) to dst as `dtype`. Each element depends only on its index, so any range can
// be produced alone and ranges can be filled in parallel.
struct Elementwise {
  DType dtype = DType::u8;
  std::function<void(std::int64_t begin, std::int64_t end, void* dst)> fill;
};

Elementwise make_uniform(const Spec& s);  // uniform.cpp
Elementwise make_simple(const Spec& s);   // simple_kinds.cpp: const, checker, ramp
Elementwise make_sparse(const Spec& s);   // sparse.cpp

HostImage generate_grf(const Spec& s, bool pinned);    // grf.cpp
HostImage generate_blobs(const Spec& s, bool pinned);  // blobs.cpp
// noise-mask and tissue masks, or their markers when the spec has marker= (masks.cpp).
HostImage generate_mask_kind(const Spec& s, bool pinned);

}  // namespace repix::datasets::detail
