// pinned_host_pool(): pinned_pool.hpp says why and what.
#include "core/pinned_pool.hpp"

#include <cuda_runtime_api.h>

#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/gpu.hpp"

namespace repix {

namespace {

class PinnedPool final : public HostMemorySource {
 public:
  void* allocate(std::size_t bytes) override {
    if (bytes < kPinnedPoolMinBytes || !gpu_available()) return nullptr;
    {
      std::lock_guard<std::mutex> hold(lock_);
      for (auto it = cached_.begin(); it != cached_.end(); ++it)
        if (it->second == bytes) {
          void* p = it->first;
          cached_.erase(it);
          cached_bytes_ -= bytes;
          live_.emplace(p, bytes);
          ++counters_.reused;
          return p;
        }
    }
    void* p = nullptr;  // pinned outside the lock: tens of milliseconds for 100 MB
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();  // not sticky; the heap serves this one
      return nullptr;
    }
    std::lock_guard<std::mutex> hold(lock_);
    live_.emplace(p, bytes);
    ++counters_.pinned;
    return p;
  }

  bool release(void* p, std::size_t bytes) noexcept override {
    std::deque<void*> unpin;
    {
      std::lock_guard<std::mutex> hold(lock_);
      const auto it = live_.find(p);
      if (it == live_.end()) return false;
      live_.erase(it);
      cached_.emplace_back(p, bytes);
      cached_bytes_ += bytes;
      while (cached_bytes_ > kPinnedPoolCacheBytes && !cached_.empty()) {
        unpin.push_back(cached_.front().first);
        cached_bytes_ -= cached_.front().second;
        cached_.pop_front();
      }
    }
    for (void* q : unpin) cudaFreeHost(q);  // an error here (a context gone) leaks the block, no more
    return true;
  }

  PinnedPoolCounters counters() {
    std::lock_guard<std::mutex> hold(lock_);
    PinnedPoolCounters c = counters_;
    c.cached_bytes = cached_bytes_;
    return c;
  }

 private:
  std::mutex lock_;
  std::unordered_map<void*, std::size_t> live_;     // handed out
  std::deque<std::pair<void*, std::size_t>> cached_;  // returned, oldest first
  std::size_t cached_bytes_ = 0;
  PinnedPoolCounters counters_;
};

PinnedPool& pool() {
  static PinnedPool* p = new PinnedPool;  // never destroyed (pinned_pool.hpp)
  return *p;
}

}  // namespace

HostMemorySource& pinned_host_pool() { return pool(); }

PinnedPoolCounters pinned_pool_counters() { return pool().counters(); }

}  // namespace repix
