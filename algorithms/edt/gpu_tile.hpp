// The GPU queue propagation of the distance transform (Algorithm 6) on one rectangular window of
// a larger image: the building block of the single-device queue variants (gpu-queue-atomic /
// -scan / -tq, whose window is the whole image) and of a multi-device engine (one window per
// tile, the paper's section 4: local propagation, then border rounds until nothing changes).
// Host-only header: no CUDA type but cudaStream_t.
//
// Layout. A window w = [x0, x1) x [y0, y1) of an nx x ny image. Its input and its sites are
// device buffers in window-local row-major order (pixel (x, y) at (y - y0) * (x1 - x0) + x - x0).
// Sites are packed GLOBAL coordinates, pack_xy(x, y) = y << 32 | x, and kNoSite (-1) where no
// background has reached yet (detail.hpp), so sites pulled from another window are valid
// here as they are. Propagation reads and writes only the window's own buffer.
//
// Contract between the rounds of a multi-window engine: a window's state is always a partial
// solution (every site is a background pixel of the image, sites only move strictly closer), so
// writing a strictly closer site into a pixel and propagating from it is always sound. When
// every window's state is a fixed point inside the window and no pixel next to a window border
// takes a strictly closer site from its neighbours across the border, the union of the windows
// passes check_propagation (verify.hpp).
//
// Every call returns after the propagation has finished (it synchronises `stream`), uses the
// device that was current at setup(), and shares one set of queue buffers: one call at a time
// per propagator. GPU out-of-memory and bad arguments throw repix::Error.
//
// Buffers passed in (input, sites, seed lists) must be ready in the order of `stream`: write them
// with cudaMemcpyAsync / kernels on `stream`, or synchronise before the call. A plain cudaMemcpy
// from pageable host memory may return before its data has landed and is ordered only on the
// legacy default stream, which a non-blocking stream (CudaStream) does not wait for; the kernels
// then read a stale tail of the buffer (a test driver did exactly that: wrong distances that look
// like a propagation error, reproduced in tests/iwpp/test_edt_propagation_order.cpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/gpu.hpp"
#include "core/image.hpp"
#include "edt/edt.hpp"
#include "edt/propagate.hpp"
#include "iwpp/queue_policy.hpp"

namespace repix::edt {

namespace gpu_queue {
class TileEngine;  // the queue of one policy (gpu_queue_common.cuh)
}

class TilePropagator {
 public:
  TilePropagator();
  ~TilePropagator();
  TilePropagator(TilePropagator&&) noexcept;
  TilePropagator& operator=(TilePropagator&&) noexcept;

  // Allocates the queue once for windows of up to max_w * max_h pixels (at most 2^32-1: queue
  // items are 32-bit window-local indices). queue_capacity as Options::queue_capacity: elements
  // of the initial queue and, in total, of the per-block queues; 0 = automatic. A queue that
  // overflows is never silently incomplete: the propagation re-seeds from the current sites
  // (every pixel that can still improve a neighbour) and runs again; Stats::overflow_reruns
  // counts those reruns. Calling setup again releases the previous buffers first.
  void setup(std::int64_t max_w, std::int64_t max_h, iwpp::QueuePolicy policy, std::int64_t queue_capacity = 0);

  // Initial pass (Algorithm 6 lines 2-19) on window w: sites from the window's input (dtype
  // u8, u16 or f32; zero pixels are background, as everywhere in edt), seeds = background pixels
  // with a foreground 8-neighbour inside the window, then propagation inside the window.
  void init_and_propagate(const void* d_input, DType dtype, const Window& w, std::int64_t nx, std::int64_t ny,
                          std::int64_t* d_sites, cudaStream_t stream);

  // Border round: the caller has written strictly closer sites into some pixels of the window
  // (e.g. taken from across a border); propagates from the `nseeds` window-local pixel indices
  // in d_seeds (device memory). Duplicates are harmless; an index outside the window throws
  // (after the valid ones have propagated).
  void propagate_from(const std::uint32_t* d_seeds, std::int64_t nseeds, const Window& w, std::int64_t* d_sites,
                      cudaStream_t stream);

  // The same without a list: seeds = every pixel of the window whose site is strictly closer to
  // one of its 8-neighbours in the window than that neighbour's site (one pass over the window).
  void propagate_frontier(const Window& w, std::int64_t* d_sites, cudaStream_t stream);

  // Accumulated over the calls since setup() or reset_stats(): initially_queued = seeds of
  // init_and_propagate; total_queued = every element queued (seeds included); passes = queue
  // rounds (the longest block's, summed over episodes); overflow_reruns = episodes re-seeded
  // after an overflow.
  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = Stats{}; }

 private:
  std::int64_t checked_pixels(const Window& w) const;  // throws unless set up and w fits
  // Episodes until no overflow: the first seeded by first_seed, re-runs by the frontier.
  template <class FirstSeed>
  void propagate(const Window& w, std::int64_t* d_sites, bool initial, FirstSeed&& first_seed, cudaStream_t stream);

  std::unique_ptr<gpu_queue::TileEngine> engine_;
  std::int64_t max_pixels_ = 0;
  Stats stats_;
  DeviceBuffer<unsigned long long> bad_seeds_;  // propagate_from: indices outside the window
};

// The final step (Algorithm 6 lines 20-21) on window w of an nx-wide image: distance of each
// pixel to its site (float32 by distance_from_sq, bit-identical to the CPU variants; +inf where
// there is no site) into d_distance, and, if d_linear_sites is not null, the site as a linear
// index of the nx-wide image (-1 for none). Both window-local row-major. Asynchronous on stream.
void distances_from_sites(const std::int64_t* d_sites, const Window& w, std::int64_t nx, float* d_distance,
                          std::int64_t* d_linear_sites, cudaStream_t stream);

}  // namespace repix::edt
