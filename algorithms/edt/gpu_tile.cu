// TilePropagator and distances_from_sites (gpu_tile.hpp), with the kernels of the edt queue
// variants that do not depend on the queue policy (compiled once here; the propagation kernel
// of each policy is in edt_gpu_queue_<policy>.cu):
//   init      Algorithm 6 lines 2-5: initial sites, contour pixels pushed as seeds (one pass
//             over the input: 9 bytes read per pixel for u8, not 9 sites);
//   frontier  re-seed after an overflow (and propagate_frontier): pixels whose site can still
//             improve a neighbour;
//   list      propagate_from's seed list;
//   distance  lines 20-21.
// The per-pixel logic of all of them is in gpu_queue_core.hpp (run on the CPU by the tests).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/gpu.hpp"
#include "core/grid2d.cuh"
#include "edt/gpu_queue_common.cuh"
#include "edt/gpu_tile.hpp"

namespace repix::edt {
namespace {

using queue_core::TileGeom;

constexpr int kListThreads = 256;

TileGeom geom_of(const Window& w) { return {w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0}; }

dim3 window_grid(const TileGeom& g) { return grid_2d(g.w, g.h); }
const dim3 kWindowBlock(kGrid2dX, kGrid2dY);

// f(lx, ly, i) for every pixel of the window (window-local coordinates and index).
template <class F>
__device__ __forceinline__ void for_each_window_pixel(const TileGeom& g, F&& f) {
  for_each_2d(g.w, g.h, [&](std::int64_t lx, std::int64_t ly) { f(lx, ly, ly * g.w + lx); });
}

// Sites that no thread writes during the kernel (the frontier pass runs between propagation
// kernels): the read-only cache may keep them, unlike the propagation's __ldcg.
struct ReadOnlySites {
  const std::int64_t* sites;
  __device__ std::int64_t load(std::uint32_t i) const { return load_readonly(sites + i); }
};

template <class T>
__global__ void __launch_bounds__(kGrid2dX* kGrid2dY)
    init_kernel(const T* __restrict__ in, TileGeom g, std::int64_t* __restrict__ sites, iwpp::QueueView q) {
  for_each_window_pixel(g, [&](std::int64_t lx, std::int64_t ly, std::int64_t i) {
    const bool background = in[i] == T(0);
    sites[i] = queue_core::initial_site(background, g.x0 + lx, g.y0 + ly);
    if (background && queue_core::has_foreground_neighbour(in, g, lx, ly))
      iwpp::push_seed(q, static_cast<std::uint32_t>(i));
  });
}

__global__ void __launch_bounds__(kGrid2dX* kGrid2dY)
    frontier_kernel(ReadOnlySites sites, TileGeom g, iwpp::QueueView q) {
  for_each_window_pixel(g, [&](std::int64_t lx, std::int64_t ly, std::int64_t i) {
    if (queue_core::can_improve_a_neighbour(sites, g, lx, ly)) iwpp::push_seed(q, static_cast<std::uint32_t>(i));
  });
}

__global__ void __launch_bounds__(kListThreads)
    list_kernel(const std::uint32_t* __restrict__ list, std::int64_t n, std::int64_t pixels, iwpp::QueueView q,
                unsigned long long* bad) {
  for (std::int64_t i = blockIdx.x * std::int64_t(kListThreads) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * kListThreads) {
    const std::uint32_t p = list[i];
    if (p < pixels) {
      iwpp::push_seed(q, p);
    } else {
      atomicAdd(bad, 1ull);
    }
  }
}

__global__ void __launch_bounds__(kGrid2dX* kGrid2dY)
    distance_kernel(const std::int64_t* __restrict__ sites, TileGeom g, std::int64_t nx, float* __restrict__ dist,
                    std::int64_t* __restrict__ linear) {
  for_each_window_pixel(g, [&](std::int64_t lx, std::int64_t ly, std::int64_t i) {
    const std::int64_t s = sites[i];
    dist[i] = distance_to_site(g.x0 + lx, g.y0 + ly, s);
    if (linear) linear[i] = linear_site(s, nx);
  });
}

template <class T>
void launch_init(const void* in, const TileGeom& g, std::int64_t* sites, const iwpp::QueueView& q, cudaStream_t s) {
  init_kernel<T><<<window_grid(g), kWindowBlock, 0, s>>>(static_cast<const T*>(in), g, sites, q);
  REPIX_CUDA_LAUNCH();
}

void launch_frontier(const TileGeom& g, const std::int64_t* sites, const iwpp::QueueView& q, cudaStream_t s) {
  frontier_kernel<<<window_grid(g), kWindowBlock, 0, s>>>(ReadOnlySites{sites}, g, q);
  REPIX_CUDA_LAUNCH();
}

std::unique_ptr<gpu_queue::TileEngine> engine_for(iwpp::QueuePolicy policy) {
  switch (policy) {
    case iwpp::QueuePolicy::atomic: return gpu_queue::make_tile_engine<iwpp::QueuePolicy::atomic>();
    case iwpp::QueuePolicy::warp_atomic: return gpu_queue::make_tile_engine<iwpp::QueuePolicy::warp_atomic>();
    case iwpp::QueuePolicy::scan: return gpu_queue::make_tile_engine<iwpp::QueuePolicy::scan>();
    case iwpp::QueuePolicy::thread_queue: return gpu_queue::make_tile_engine<iwpp::QueuePolicy::thread_queue>();
  }
  throw Error("internal: unknown queue policy");
}

std::string window_str(const Window& w) {
  return "[" + std::to_string(w.x0) + ", " + std::to_string(w.x1) + ") x [" + std::to_string(w.y0) + ", " +
         std::to_string(w.y1) + ")";
}

}  // namespace

TilePropagator::TilePropagator() = default;
TilePropagator::~TilePropagator() = default;
TilePropagator::TilePropagator(TilePropagator&&) noexcept = default;
TilePropagator& TilePropagator::operator=(TilePropagator&&) noexcept = default;

void TilePropagator::setup(std::int64_t max_w, std::int64_t max_h, iwpp::QueuePolicy policy,
                           std::int64_t queue_capacity) {
  engine_.reset();  // the previous buffers go before the new ones are allocated
  bad_seeds_.reset();
  max_pixels_ = 0;
  stats_ = Stats{};
  const std::string size = std::to_string(max_w) + "x" + std::to_string(max_h);
  if (max_w < 1 || max_h < 1) throw Error("edt: tile windows of " + size + " pixels (at least 1x1 needed)");
  if (max_w > queue_core::kMaxWindowPixels / max_h)
    throw Error("edt: a " + size + " window has more than 2^32-1 pixels (the queue indexes pixels with 32 bits)");
  if (queue_capacity < 0) throw Error("edt: negative queue capacity " + std::to_string(queue_capacity));
  std::unique_ptr<gpu_queue::TileEngine> engine = engine_for(policy);
  engine->setup(max_w * max_h, queue_capacity);
  bad_seeds_.allocate(1);
  engine_ = std::move(engine);
  max_pixels_ = max_w * max_h;
}

std::int64_t TilePropagator::checked_pixels(const Window& w) const {
  if (!engine_) throw Error("internal: edt tile propagation before setup()");
  const std::int64_t ww = w.x1 - w.x0, wh = w.y1 - w.y0;
  if (w.x0 < 0 || w.y0 < 0 || ww < 1 || wh < 1 || w.x1 > kMaxSide || w.y1 > kMaxSide)
    throw Error("edt: tile window " + window_str(w) + " is empty or outside [0, 2^30)^2");
  if (ww > max_pixels_ / wh)
    throw Error("edt: tile window " + window_str(w) + " has more pixels than the propagator was set up for (" +
                std::to_string(max_pixels_) + ")");
  return ww * wh;
}

template <class FirstSeed>
void TilePropagator::propagate(const Window& w, std::int64_t* d_sites, bool initial, FirstSeed&& first_seed,
                               cudaStream_t stream) {
  const TileGeom g = geom_of(w);
  const gpu_queue::EdtStep step{queue_core::SiteStore{d_sites}, g};
  bool first = true;
  const iwpp::EpisodeStats es = engine_->run(
      step,
      [&](const iwpp::QueueView& q, cudaStream_t s) {
        // The first episode's seeds are the caller's; an episode after an overflow re-seeds
        // from the sites as they are (gpu_queue_core.hpp: can_improve_a_neighbour).
        if (first) {
          first = false;
          first_seed(q, s);
        } else {
          launch_frontier(g, d_sites, q, s);
        }
      },
      stream);
  if (initial) stats_.initially_queued += es.initially_queued;
  stats_.total_queued += es.total_queued;
  stats_.passes += es.rounds;
  stats_.overflow_reruns += es.overflow_reruns;
}

void TilePropagator::init_and_propagate(const void* d_input, DType dtype, const Window& w, std::int64_t nx,
                                        std::int64_t ny, std::int64_t* d_sites, cudaStream_t stream) {
  checked_pixels(w);
  if (w.x1 > nx || w.y1 > ny)
    throw Error("edt: tile window " + window_str(w) + " is not inside the " + std::to_string(nx) + "x" +
                std::to_string(ny) + " image");
  const TileGeom g = geom_of(w);
  propagate(w, d_sites, true,
            [&](const iwpp::QueueView& q, cudaStream_t s) {
              dispatch_dtype(dtype, [&](auto tag) {
                launch_init<typename decltype(tag)::type>(d_input, g, d_sites, q, s);
              });
            },
            stream);
}

void TilePropagator::propagate_from(const std::uint32_t* d_seeds, std::int64_t nseeds, const Window& w,
                                    std::int64_t* d_sites, cudaStream_t stream) {
  const std::int64_t pixels = checked_pixels(w);
  if (nseeds < 0) throw Error("edt: negative seed count " + std::to_string(nseeds));
  REPIX_CUDA(cudaMemsetAsync(bad_seeds_.get(), 0, sizeof(unsigned long long), stream));
  propagate(w, d_sites, false,
            [&](const iwpp::QueueView& q, cudaStream_t s) {
              if (nseeds == 0) return;  // nothing queued: the episode loop ends at once
              const std::int64_t blocks = std::min<std::int64_t>((nseeds + kListThreads - 1) / kListThreads, 65535);
              list_kernel<<<static_cast<unsigned>(blocks), kListThreads, 0, s>>>(d_seeds, nseeds, pixels, q,
                                                                                  bad_seeds_.get());
              REPIX_CUDA_LAUNCH();
            },
            stream);
  unsigned long long bad = 0;
  REPIX_CUDA(cudaMemcpyAsync(&bad, bad_seeds_.get(), sizeof bad, cudaMemcpyDeviceToHost, stream));
  REPIX_CUDA(cudaStreamSynchronize(stream));
  if (bad)
    throw Error("edt: " + std::to_string(bad) + " of " + std::to_string(nseeds) + " seeds lie outside the tile window " +
                window_str(w) + " (" + std::to_string(pixels) + " pixels)");
}

void TilePropagator::propagate_frontier(const Window& w, std::int64_t* d_sites, cudaStream_t stream) {
  checked_pixels(w);
  const TileGeom g = geom_of(w);
  propagate(w, d_sites, false,
            [&](const iwpp::QueueView& q, cudaStream_t s) { launch_frontier(g, d_sites, q, s); }, stream);
}

void distances_from_sites(const std::int64_t* d_sites, const Window& w, std::int64_t nx, float* d_distance,
                          std::int64_t* d_linear_sites, cudaStream_t stream) {
  const TileGeom g = geom_of(w);
  if (g.w < 1 || g.h < 1 || w.x0 < 0 || w.x1 > nx)
    throw Error("edt: distances of tile window " + window_str(w) + " in an image " + std::to_string(nx) + " wide");
  distance_kernel<<<window_grid(g), kWindowBlock, 0, stream>>>(d_sites, g, nx, d_distance, d_linear_sites);
  REPIX_CUDA_LAUNCH();
}

}  // namespace repix::edt
