// A process-wide pool of pinned (page-locked) host blocks for large outputs the GPU writes
// straight into (core/uninitialized_vector.hpp's HostMemorySource).
//
// Why: a device-to-host copy into pageable memory runs through staging buffers and a host copy,
// and fresh pageable memory faults page by page (core/download.hpp); into pinned memory it is one
// DMA at the link's speed. Pinning costs as much as it saves (cudaHostAlloc faults and locks every
// page), so a block is pinned once and reused: when an output dies its block goes back to the
// pool, and the next output of the same size takes it. The max-tree's 96 MB parent image at
// 6000x4000 is the case it was made for, and the staging of its input's upload.
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

constexpr std::size_t kPinnedPoolMinBytes = std::size_t(1) << 20;
constexpr std::size_t kPinnedPoolCacheBytes = std::size_t(2) << 30;

HostMemorySource& pinned_host_pool();

// Counters for tests and reports: blocks pinned with cudaHostAlloc so far, blocks served from
// the cache, and the bytes cached now.
struct PinnedPoolCounters {
  std::size_t pinned = 0, reused = 0, cached_bytes = 0;
};
PinnedPoolCounters pinned_pool_counters();

// A block of the pool for as long as it lives (get() is nullptr where the pool could not serve).
// The caller makes sure no copy still uses it when it dies.
class PinnedBlock {
 public:
  PinnedBlock() = default;
  explicit PinnedBlock(std::size_t bytes) : p_(pinned_host_pool().allocate(bytes)), bytes_(bytes) {}
  PinnedBlock(PinnedBlock&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  PinnedBlock& operator=(PinnedBlock&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = o.p_;
      bytes_ = o.bytes_;
      o.p_ = nullptr;
    }
    return *this;
  }
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock() { reset(); }
  void* get() const { return p_; }

 private:
  void reset() noexcept {
    if (p_) pinned_host_pool().release(p_, bytes_);
    p_ = nullptr;
  }
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace repix
