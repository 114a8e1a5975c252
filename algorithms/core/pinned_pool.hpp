// A process-wide pool of pinned (page-locked) host blocks for large outputs the GPU writes
// straight into (core/uninitialized_vector.hpp's HostMemorySource).
//
// Why: a device-to-host copy into pageable memory runs through staging buffers and a host copy,
// and fresh pageable memory faults page by page (core/download.hpp); into pinned memory it is one
// DMA at the link's speed. Pinning costs as much as it saves (cudaHostAlloc faults and locks every
// page), so a block is pinned once and reused: when an output dies its block goes back to the
// pool, and the next output of the same size takes it. The max-tree's 96 MB parent image at
// 6000x4000 is the case it was made for.
//
// allocate() serves only blocks of at least kPinnedPoolMinBytes (smaller ones: nullptr, the heap)
// and only with a usable GPU; a failed cudaHostAlloc (pinned memory is limited) is nullptr too.
// Freed blocks stay cached up to kPinnedPoolCacheBytes in all (beyond, the oldest are unpinned:
// cudaFreeHost, which waits for the device). Thread-safe. The pool is never destroyed: blocks
// still cached at exit go with the process (the CUDA context may be gone before static
// destructors run).
#pragma once
#include <cstddef>

#include "core/uninitialized_vector.hpp"

namespace repix {

constexpr std::size_t kPinnedPoolMinBytes = std::size_t(4) << 20;
constexpr std::size_t kPinnedPoolCacheBytes = std::size_t(2) << 30;

HostMemorySource& pinned_host_pool();

// Counters for tests and reports: blocks pinned with cudaHostAlloc so far, blocks served from
// the cache, and the bytes cached now.
struct PinnedPoolCounters {
  std::size_t pinned = 0, reused = 0, cached_bytes = 0;
};
PinnedPoolCounters pinned_pool_counters();

}  // namespace repix
