// omp-nontiled: the paper's contrast to tiling (section 5.1, "Non-Tiled parallelization"): the
// pixels of the initial wavefront are dealt round-robin to the threads, and each thread runs the
// FIFO propagation from its own pixels over the whole image, raising pixels with atomic
// compare-and-swap. Threads work in the same regions and keep invalidating each other's cache
// lines, which is why the paper saw it lose to the sequential code; it is kept to show that.
//
// Initial wavefront: there is no parallel raster scan, so (as the paper's GPU version does after
// its scans) every pixel p with a neighbour q such that J(q) < J(p) and J(q) < I(q), over the
// whole neighbourhood, is queued; found in parallel, dealt in raster order.
//
// Correctness: a pixel is queued by whichever thread raises it, so when every queue is empty each
// pixel was last processed with its final value and no neighbour can take more: J is the
// reconstruction. Relaxed atomics suffice (one location at a time, values only grow); the end of
// the parallel region publishes the result.
#include <omp.h>

#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {

template <class T>
T load_relaxed(const T* p) {
  T v;
  __atomic_load(const_cast<T*>(p), &v, __ATOMIC_RELAXED);
  return v;
}

// J(q) <- min(v, I(q)) if that is larger; true when this thread raised it.
template <class T>
bool raise(T* q, T v, T iq) {
  T want = detail::vmin(v, iq);
  T old = load_relaxed(q);
  while (old < want)
    if (__atomic_compare_exchange(q, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return true;
  return false;
}

struct NonTiled {
  HostImage& J;
  const HostImage& mask;
  Stats& st;
  int threads;

  template <class T, int Conn>
  void run() const {
    const std::int64_t nx = mask.shape().nx, ny = mask.shape().ny;
    T* j = J.data<T>();
    const T* m = mask.data<T>();
    using detail::kDx;
    using detail::kDy;

    // Initial wavefront, rows split over threads, concatenated in raster order.
    std::vector<std::vector<std::uint64_t>> found(static_cast<std::size_t>(threads));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t y = 0; y < ny; ++y) {
      auto& out = found[omp_get_thread_num()];
      for (std::int64_t x = 0; x < nx; ++x) {
        const T p = j[y * nx + x];
        for (int k = 0; k < Conn; ++k) {
          const std::int64_t qx = x + kDx[k], qy = y + kDy[k];
          if (qx < 0 || qx >= nx || qy < 0 || qy >= ny) continue;
          const T jq = j[qy * nx + qx];
          if (jq < p && jq < m[qy * nx + qx]) {
            out.push_back((static_cast<std::uint64_t>(y) << 32) | static_cast<std::uint64_t>(x));
            break;
          }
        }
      }
    }
    std::vector<std::uint64_t> wave;
    for (auto& f : found) wave.insert(wave.end(), f.begin(), f.end());
    const auto nwave = static_cast<std::int64_t>(wave.size());

    std::int64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const int me = omp_get_thread_num(), nth = omp_get_num_threads();
      detail::PixelQueue q(static_cast<std::size_t>(nwave / nth + 64));
      for (std::int64_t k = me; k < nwave; k += nth)  // round-robin
        q.push(static_cast<std::int64_t>(wave[k] & 0xffffffffu), static_cast<std::int64_t>(wave[k] >> 32));
      while (!q.empty()) {
        std::int64_t x, y;
        q.pop(x, y);
        const T v = load_relaxed(j + y * nx + x);
        for (int k = 0; k < Conn; ++k) {
          const std::int64_t qx = x + kDx[k], qy = y + kDy[k];
          if (qx < 0 || qx >= nx || qy < 0 || qy >= ny) continue;
          const std::int64_t i = qy * nx + qx;
          if (raise(j + i, v, m[i])) {
            q.push(qx, qy);
            ++total;
          }
        }
      }
    }
    st.initially_queued = nwave;
    st.total_queued = nwave + total;
  }
};

}  // namespace

Result run_omp_nontiled(const HostImage& marker, const HostImage& mask, const Options& opt) {
  const int threads = detail::thread_count(opt);
  return detail::run_variant("reconstruct/omp-nontiled", marker, mask, opt, threads,
                             [&](HostImage& J, Stats& st) { return NonTiled{J, mask, st, threads}; });
}

}  // namespace repix::reconstruct
