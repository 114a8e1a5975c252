// std::vector whose resize() leaves new elements default-initialised (for arithmetic types:
// uninitialised) instead of zeroing them. For large outputs that are written in full right after
// (a GPU download, a parallel loop): value-initialising a 96 MB int32 image zeroes it on one thread
// and takes every first-touch page fault there, 25-30 ms at 6000x4000 on the lent machine, more
// than the kernel that fills it. Only resize() and the size constructor change; everything else is
// std::vector's.
#pragma once
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace repix {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;  // default-initialise: no zeroing
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace repix
