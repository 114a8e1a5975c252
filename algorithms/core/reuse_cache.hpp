// A process-wide, one-entry cache of an expensive workspace (device buffers, pinned staging,
// streams, plans) keyed by the configuration it was built for. GPU variants' end-to-end runs use
// it so that a second call with the same input type and shape allocates nothing: cudaMalloc,
// cudaHostAlloc and plan set-up cost milliseconds per call, more than the work on images of a
// few MiB.
//
// take() hands the entry out (the cache is then empty) only for an identical key, so two threads
// never share one workspace: the second builds its own, and whichever put()s last is kept. A
// different key frees the cached entry first, so two configurations never hold device memory at
// once. A run that throws simply never put()s its workspace back (it is destroyed with the
// exception), so a workspace in an unknown state is never reused.
#pragma once
#include <memory>
#include <mutex>

namespace repix {

template <class Key, class Workspace>
class ReuseCache {
 public:
  std::unique_ptr<Workspace> take(const Key& key) {
    std::lock_guard<std::mutex> lock(m_);
    if (ws_ && key_ == key) return std::move(ws_);
    ws_.reset();  // a different configuration: free the old one before the caller allocates anew
    return nullptr;
  }
  // take(), or a new workspace from `make` (a callable returning std::unique_ptr<Workspace>) when
  // none is cached for `key`.
  template <class Make>
  std::unique_ptr<Workspace> take_or_make(const Key& key, Make&& make) {
    std::unique_ptr<Workspace> ws = take(key);
    return ws ? std::move(ws) : make();
  }
  void put(const Key& key, std::unique_ptr<Workspace> ws) {
    std::lock_guard<std::mutex> lock(m_);
    key_ = key;
    ws_ = std::move(ws);
  }

 private:
  std::mutex m_;
  Key key_{};
  std::unique_ptr<Workspace> ws_;
};

// The one cache of a given (Key, Workspace) pair, never destroyed: the workspace holds CUDA
// resources, and no CUDA call may run after main returns.
template <class Key, class Workspace>
ReuseCache<Key, Workspace>& reuse_cache() {
  static auto* cache = new ReuseCache<Key, Workspace>;
  return *cache;
}

}  // namespace repix
