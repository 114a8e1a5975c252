// Pieces shared by the CPU reconstruct variants (internal to algorithms/iwpp/):
//   - typed dispatch (dtype x connectivity -> a template instantiation),
//   - the working image J (a copy of the marker, clipped to the mask when asked),
//   - a rectangular Window of the image whose border is a wall (nothing propagates across it):
//     the whole image for the sequential variants, one tile for omp-tiled,
//   - Vincent's raster / anti-raster scans and the FIFO propagation phase of FH (Algorithm 2)
//     over a Window, written once and used by seq, seq-sr, seq-qb and omp-tiled.
//
// Only comparisons, max and min touch pixel values (no arithmetic), so float32 results are
// exact and every variant equals the reference bit for bit (signed zeros are canonicalised to
// +0 at the end: -0 and +0 compare equal, so which of them survives would otherwise depend on
// the order of propagation).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/nvtx.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::reconstruct::detail {

// check_inputs with an explicit thread count for its scans (seq passes 1: the sequential
// baseline stays single-threaded end to end).
void check_inputs_threads(const HostImage& marker, const HostImage& mask, const Options& opt, int threads);

// Checks the inputs, then returns J = marker (min(marker, mask) with opt.clip), same dtype.
HostImage start_image(const HostImage& marker, const HostImage& mask, const Options& opt, int threads);

// float32: -0 -> +0 everywhere (see the header comment). No-op for integer images.
void canonical_zeros(HostImage& img, int threads);

// Threads a parallel variant uses: opt.threads, or OpenMP's default when 0.
int thread_count(const Options& opt);

// Calls f.template operator()<T, Conn>() ... C++17 has no templated lambdas, so `f` is a functor
// with `template <class T, int Conn> R run() const`.
template <class F>
decltype(auto) dispatch(DType dt, int connectivity, const F& f) {
  return dispatch_dtype(dt, [&](auto tag) -> decltype(auto) {
    using T = typename decltype(tag)::type;
    return connectivity == 4 ? f.template run<T, 4>() : f.template run<T, 8>();
  });
}

// Neighbour offsets: the first 4 are the 4-neighbourhood, all 8 the 8-neighbourhood.
inline constexpr int kDx[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
inline constexpr int kDy[8] = {0, 0, -1, 1, -1, -1, 1, 1};

// The frame of every CPU variant: J from the checked inputs, make(J, stats) (a functor for
// dispatch) run on the typed image, -0 canonicalised. `threads` for the O(n) input passes.
// `name` is the NVTX range of the whole invocation ("reconstruct/<id>").
template <class Make>
Result run_variant(const char* name, const HostImage& marker, const HostImage& mask, const Options& opt,
                   int threads, Make make) {
  nvtx::Range whole(name);
  Result r;
  {
    nvtx::Range init("init");
    r.image = start_image(marker, mask, opt, threads);
  }
  nvtx::Range propagate("propagate");
  dispatch(mask.dtype(), opt.connectivity, make(r.image, r.stats));
  canonical_zeros(r.image, threads);
  return r;
}

// ---- FIFO of pixel positions ------------------------------------------------------------------
// A growable ring buffer of packed (x, y) positions: y in the high 32 bits, x in the low ones, so
// the propagation never divides to recover coordinates. Doubles when full (FIFO order kept).
// Cache-line aligned: per-thread queues sit side by side in a vector, and head/tail updates on
// every push and pop would otherwise falsely share a line between threads.
class alignas(64) PixelQueue {
 public:
  explicit PixelQueue(std::size_t capacity = 1024) { reserve_pow2(capacity); }
  bool empty() const { return head_ == tail_; }
  std::size_t size() const { return tail_ - head_; }
  void push(std::int64_t x, std::int64_t y) {
    if (tail_ - head_ == buf_.size()) grow();
    buf_[tail_++ & mask_] = (static_cast<std::uint64_t>(y) << 32) | static_cast<std::uint64_t>(x);
  }
  void pop(std::int64_t& x, std::int64_t& y) {
    const std::uint64_t e = buf_[head_++ & mask_];
    x = static_cast<std::int64_t>(e & 0xffffffffu);
    y = static_cast<std::int64_t>(e >> 32);
  }
  void clear() { head_ = tail_ = 0; }

 private:
  void reserve_pow2(std::size_t want) {
    std::size_t c = 64;
    while (c < want) c *= 2;
    buf_.assign(c, 0);
    mask_ = c - 1;
  }
  void grow() {
    std::vector<std::uint64_t> bigger(buf_.size() * 2);
    const std::size_t n = size();
    for (std::size_t i = 0; i < n; ++i) bigger[i] = buf_[(head_ + i) & mask_];
    buf_.swap(bigger);
    mask_ = buf_.size() - 1;
    head_ = 0;
    tail_ = n;
  }
  std::vector<std::uint64_t> buf_;
  std::size_t mask_ = 0, head_ = 0, tail_ = 0;
};

// ---- a rectangular part of the image -------------------------------------------------------------
// Pixels [x0, x1) x [y0, y1) of row-major images with `stride` elements per row. Neighbours
// outside the window are never read or written: the window border acts as the image border.
template <class T>
struct Window {
  T* J;                 // the image being reconstructed
  const T* I;           // the mask
  std::int64_t stride;  // elements per image row
  std::int64_t x0, y0, x1, y1;
  T* jrow(std::int64_t y) const { return J + y * stride; }
  const T* irow(std::int64_t y) const { return I + y * stride; }
};

template <class T>
inline T vmax(T a, T b) { return a < b ? b : a; }
template <class T>
inline T vmin(T a, T b) { return b < a ? b : a; }

// r[x] <- max(r[x], n[x], and n[x-1], n[x+1] with 8-connectivity) over [x0, x1): the
// neighbours in the adjacent row `n` (above for raster, below for anti-raster). Independent per
// pixel, so the compiler vectorises it; the window ends lack one diagonal.
template <class T, int Conn>
void merge_row(T* __restrict r, const T* __restrict n, std::int64_t x0, std::int64_t x1) {
  if (Conn == 4) {
    for (std::int64_t x = x0; x < x1; ++x) r[x] = vmax(r[x], n[x]);
    return;
  }
  T first = vmax(r[x0], n[x0]);
  if (x0 + 1 < x1) first = vmax(first, n[x0 + 1]);
  const T last = x1 - 1 > x0 ? vmax(vmax(r[x1 - 1], n[x1 - 1]), n[x1 - 2]) : first;
  for (std::int64_t x = x0 + 1; x < x1 - 1; ++x) r[x] = vmax(vmax(r[x], n[x]), vmax(n[x - 1], n[x + 1]));
  r[x0] = first;
  if (x1 - 1 > x0) r[x1 - 1] = last;
}

// max of J(q), q in the adjacent row `n` around x (x-1, x, x+1 with 8-connectivity), and v.
template <class T, int Conn>
T fold_row(T v, const T* n, std::int64_t x, std::int64_t x0, std::int64_t x1) {
  v = vmax(v, n[x]);
  if (Conn == 8) {
    if (x > x0) v = vmax(v, n[x - 1]);
    if (x + 1 < x1) v = vmax(v, n[x + 1]);
  }
  return v;
}

// One raster scan (top-left to bottom-right): J(p) <- max{J(q), q in N+(p) u {p}} ^ I(p), where
// N+ are the neighbours already visited (left; and up-left, up, up-right with 8-connectivity).
// Each row is done in two passes: the neighbours in the row above are merged first (independent
// per pixel, so the compiler vectorises it), then the left-to-right dependency chain runs with
// one max and one min per pixel. Returns whether any pixel changed (only when kTrack).
template <class T, int Conn, bool kTrack>
bool raster_scan(const Window<T>& w) {
  bool changed = false;
  const std::int64_t x0 = w.x0, x1 = w.x1;
  for (std::int64_t y = w.y0; y < w.y1; ++y) {
    T* __restrict r = w.jrow(y);
    const T* __restrict m = w.irow(y);
    const bool has_up = y > w.y0;
    const T* __restrict u = has_up ? w.jrow(y - 1) : nullptr;
    if (kTrack) {  // SR needs to know whether anything changed: one fused pass
      T prev = r[x0];
      for (std::int64_t x = x0; x < x1; ++x) {
        const T old = r[x];
        T v = has_up ? fold_row<T, Conn>(old, u, x, x0, x1) : old;
        if (x > x0) v = vmax(v, prev);
        v = vmin(v, m[x]);
        changed |= v != old;
        r[x] = v;
        prev = v;
      }
    } else {
      if (has_up) merge_row<T, Conn>(r, u, x0, x1);
      T prev = r[x0] = vmin(r[x0], m[x0]);
      for (std::int64_t x = x0 + 1; x < x1; ++x) prev = r[x] = vmin(vmax(r[x], prev), m[x]);
    }
  }
  return changed;
}

// One anti-raster scan (bottom-right to top-left) with N- (right; and down-left, down,
// down-right with 8-connectivity). With a queue (FH's last scan), every pixel p that has a
// q in N-(p) with J(q) < J(p) and J(q) < I(q) is queued (Algorithm 2, lines 8-9); the check
// runs once the row is final, which is when the sequential algorithm makes it.
template <class T, int Conn, bool kTrack>
bool anti_raster_scan(const Window<T>& w, PixelQueue* queue) {
  bool changed = false;
  const std::int64_t x0 = w.x0, x1 = w.x1;
  for (std::int64_t y = w.y1 - 1; y >= w.y0; --y) {
    T* __restrict r = w.jrow(y);
    const T* __restrict m = w.irow(y);
    const bool has_down = y + 1 < w.y1;
    const T* __restrict d = has_down ? w.jrow(y + 1) : nullptr;
    if (kTrack) {  // SR needs to know whether anything changed: one fused pass
      T prev = r[x1 - 1];
      for (std::int64_t x = x1 - 1; x >= x0; --x) {
        const T old = r[x];
        T v = has_down ? fold_row<T, Conn>(old, d, x, x0, x1) : old;
        if (x + 1 < x1) v = vmax(v, prev);
        v = vmin(v, m[x]);
        changed |= v != old;
        r[x] = v;
        prev = v;
      }
    } else {
      if (has_down) merge_row<T, Conn>(r, d, x0, x1);
      T prev = r[x1 - 1] = vmin(r[x1 - 1], m[x1 - 1]);
      for (std::int64_t x = x1 - 2; x >= x0; --x) prev = r[x] = vmin(vmax(r[x], prev), m[x]);
    }
    if (queue) {
      // Branch-free test (bitwise | and &): the outcome is rarely true and data dependent, so
      // short-circuit branches would mispredict on every pixel.
      const T* __restrict dm = has_down ? w.irow(y + 1) : nullptr;
      for (std::int64_t x = x1 - 1; x >= x0; --x) {
        const T p = r[x];
        // q can take more from p: J(q) < J(p) and J(q) < I(q).
        auto can = [p](T jq, T iq) { return (jq < p) & (jq < iq); };
        bool add = (x + 1 < x1) && can(r[x + 1], m[x + 1]);
        if (has_down) {
          add |= can(d[x], dm[x]);
          if (Conn == 8) {
            if (x > x0) add |= can(d[x - 1], dm[x - 1]);
            if (x + 1 < x1) add |= can(d[x + 1], dm[x + 1]);
          }
        }
        if (add) queue->push(x, y);
      }
    }
  }
  return changed;
}

// The propagation phase of FH / QB (Algorithm 2, lines 11-16): until the queue is empty, take p
// and give every neighbour q with J(q) < J(p) and I(q) != J(q) the value min(J(p), I(q)),
// queueing q. Pixels away from the window border take the unchecked path. Returns the number of
// pixels queued. With a `budget`, stops once that many pixels were queued (the queue is then
// not empty: the caller finishes another way).
template <class T, int Conn>
std::int64_t propagate(const Window<T>& w, PixelQueue& queue,
                       std::int64_t budget = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t queued = 0;
  const std::int64_t s = w.stride;
  while (!queue.empty() && queued < budget) {
    std::int64_t x, y;
    queue.pop(x, y);
    const std::int64_t i = y * s + x;
    const T v = w.J[i];
    // Inlined on purpose: 8 calls per pixel, GCC otherwise keeps it out of line.
    auto visit = [&](std::int64_t dx, std::int64_t dy) __attribute__((always_inline)) {
      const std::int64_t k = i + dy * s + dx;
      const T jq = w.J[k];
      if (jq < v) {
        const T iq = w.I[k];
        if (iq != jq) {
          w.J[k] = vmin(v, iq);
          queue.push(x + dx, y + dy);
          ++queued;
        }
      }
    };
    if (x > w.x0 && x + 1 < w.x1 && y > w.y0 && y + 1 < w.y1) {
      visit(-1, 0), visit(1, 0), visit(0, -1), visit(0, 1);
      if (Conn == 8) visit(-1, -1), visit(1, -1), visit(-1, 1), visit(1, 1);
    } else {
      const bool l = x > w.x0, r = x + 1 < w.x1, u = y > w.y0, d = y + 1 < w.y1;
      if (l) visit(-1, 0);
      if (r) visit(1, 0);
      if (u) visit(0, -1);
      if (d) visit(0, 1);
      if (Conn == 8) {
        if (l && u) visit(-1, -1);
        if (r && u) visit(1, -1);
        if (l && d) visit(-1, 1);
        if (r && d) visit(1, 1);
      }
    }
  }
  return queued;
}

// Vincent's fast hybrid reconstruction (Algorithm 2) of one window: `pairs` raster +
// anti-raster pairs (the last one queues the initial wavefront), then the FIFO phase. Stops
// after an earlier pair that changed nothing (the window is then stable). Adds to `st`.
template <class T, int Conn>
void fast_hybrid(const Window<T>& w, int pairs, PixelQueue& queue, Stats& st) {
  pairs = std::max(1, pairs);
  for (int k = 1; k < pairs; ++k) {
    const bool a = raster_scan<T, Conn, true>(w);
    const bool b = anti_raster_scan<T, Conn, true>(w, nullptr);
    st.passes += 2;
    if (!a && !b) return;
  }
  raster_scan<T, Conn, false>(w);
  queue.clear();
  anti_raster_scan<T, Conn, false>(w, &queue);
  st.passes += 2;
  const auto initial = static_cast<std::int64_t>(queue.size());
  st.initially_queued += initial;
  st.total_queued += initial + propagate<T, Conn>(w, queue);
}

// omp-tiled's algorithm on the window `outer` (omp_tiled.cpp): micro-tiles of
// `tile` pixels (0 = automatic), each reconstructed by FH in parallel on `threads` OpenMP threads,
// then border rounds on a snapshot until no micro-tile edge changes; `outer`'s border is a wall.
// omp-tiled runs it on the whole image, multi-device's CPU groups on one large tile (the paper's
// multi-level tiling). J may start anywhere between the marker and the window's reconstruction.
// Adds to st (passes += border rounds).
template <class T, int Conn>
void tiled_reconstruct(const Window<T>& outer, std::int64_t tile, int raster_scans, int threads, Stats& st);

}  // namespace repix::reconstruct::detail
