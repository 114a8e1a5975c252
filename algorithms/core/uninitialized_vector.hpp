// std::vector whose resize() leaves new elements default-initialised (for arithmetic types:
// uninitialised) instead of zeroing them. For large outputs that are written in full right after
// (a GPU download, a parallel loop): value-initialising a 96 MB int32 image zeroes it on one thread
// and takes every first-touch page fault there, 25-30 ms at 6000x4000 on the GPU host, more
// than the kernel that fills it. Only resize() and the size constructor change; everything else is
// std::vector's.
//
// Its memory may also come from a HostMemorySource (the allocator's state, null by default: the
// heap): a GPU output vector takes a pinned block of core/pinned_pool.hpp, so that the device
// writes into it at the link's speed with no staging copy and no page fault, and the block goes
// back to the pool when the vector dies. Copies of such a vector take heap memory
// (select_on_container_copy_construction); moves and swaps carry the source with the memory.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace repix {

// Where host memory may come from instead of the heap.
class HostMemorySource {
 public:
  // `bytes` from this source, or nullptr when it cannot serve them (the heap then does).
  virtual void* allocate(std::size_t bytes) = 0;
  // Takes back a block that allocate() returned (same bytes); false when `p` is not one of its
  // blocks (the heap's then).
  virtual bool release(void* p, std::size_t bytes) noexcept = 0;

 protected:
  ~HostMemorySource() = default;
};

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  using is_always_equal = std::false_type;  // std::allocator's says true: not with a source
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };

  DefaultInitAllocator() noexcept = default;
  explicit DefaultInitAllocator(HostMemorySource* source) noexcept : source_(source) {}
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>& o) noexcept : source_(o.source()) {}

  T* allocate(std::size_t n) {
    if (source_)
      if (void* p = source_->allocate(n * sizeof(T))) return static_cast<T*>(p);
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (source_ && source_->release(p, n * sizeof(T))) return;
    std::allocator<T>::deallocate(p, n);
  }
  // A copy of a vector gets heap memory, whatever the original's came from.
  DefaultInitAllocator select_on_container_copy_construction() const noexcept { return DefaultInitAllocator(); }

  template <class U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;  // default-initialise: no zeroing
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  HostMemorySource* source() const noexcept { return source_; }

 private:
  HostMemorySource* source_ = nullptr;
};

template <class T, class U>
bool operator==(const DefaultInitAllocator<T>& a, const DefaultInitAllocator<U>& b) noexcept {
  return a.source() == b.source();
}
template <class T, class U>
bool operator!=(const DefaultInitAllocator<T>& a, const DefaultInitAllocator<U>& b) noexcept {
  return !(a == b);
}

template <class T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace repix
