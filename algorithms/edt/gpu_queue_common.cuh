// The policy-dependent half of the edt queue variants (gpu-queue-atomic / -scan / -tq): the
// propagation step that queue.cuh's persistent kernel runs for each dequeued pixel, and the
// TileEngine that owns one policy's queue buffers and episode loop. Each policy file
// (edt_gpu_queue_<policy>.cu) instantiates one engine, so the three propagation kernels compile
// in separate translation units; the kernels that do not depend on the policy (initial sites and
// seeds, re-seed, seed lists, distances) are compiled once, in gpu_tile.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "edt/gpu_queue_core.hpp"
#include "edt/gpu_tile.hpp"
#include "iwpp/queue.cuh"

namespace repix::edt::gpu_queue {

// queue.cuh's Step: Algorithm 6 lines 9-19 for one dequeued pixel (gpu_queue_core.hpp),
// emitting each neighbour that took the pixel's site. Sites are read with __ldcg and installed
// with atomicCAS (SiteStore), as the persistent kernel requires.
struct EdtStep {
  static constexpr int kMaxFanout = 8;
  queue_core::SiteStore sites;
  queue_core::TileGeom g;
  template <class Emit>
  __device__ void operator()(std::uint32_t p, Emit& emit) const {
    queue_core::propagate_pixel(sites, g, p, emit);
  }
};

// Launches a seed kernel that push_seed()s the frontier into the queue.
using SeedLaunch = std::function<void(const iwpp::QueueView&, cudaStream_t)>;

class TileEngine {
 public:
  virtual ~TileEngine() = default;
  virtual void setup(std::int64_t domain, std::int64_t capacity) = 0;
  // queue.cuh's run_episodes with this engine's policy: seed, propagate, and again while the
  // queue overflowed (synchronises the stream twice per episode, never per round).
  virtual iwpp::EpisodeStats run(const EdtStep& step, const SeedLaunch& seed, cudaStream_t stream) = 0;
};

template <iwpp::QueuePolicy P>
class TileEngineFor final : public TileEngine {
 public:
  void setup(std::int64_t domain, std::int64_t capacity) override {
    queue_.setup(domain, capacity, iwpp::propagate_blocks<P, EdtStep>(domain));
  }
  iwpp::EpisodeStats run(const EdtStep& step, const SeedLaunch& seed, cudaStream_t stream) override {
    return iwpp::run_episodes<P>(queue_, step, seed, stream);
  }

 private:
  iwpp::QueueBuffers queue_;
};

// The engine of policy P. Instantiated only by the policy files (extern below), so that
// gpu_tile.cu, which picks one by the policy given to setup(), compiles no propagation kernel.
template <iwpp::QueuePolicy P>
std::unique_ptr<TileEngine> make_tile_engine() {
  return std::make_unique<TileEngineFor<P>>();
}
extern template std::unique_ptr<TileEngine> make_tile_engine<iwpp::QueuePolicy::atomic>();
extern template std::unique_ptr<TileEngine> make_tile_engine<iwpp::QueuePolicy::warp_atomic>();
extern template std::unique_ptr<TileEngine> make_tile_engine<iwpp::QueuePolicy::scan>();
extern template std::unique_ptr<TileEngine> make_tile_engine<iwpp::QueuePolicy::thread_queue>();

}  // namespace repix::edt::gpu_queue
