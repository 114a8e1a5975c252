// The tiled multi-device engine: configuration, the worker threads and their rounds, and the
// tile copies of GPU workers. See multi_device.hpp.
#include "core/tiling/multi_device.hpp"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>

#include "core/error.hpp"
#include "core/host_limits.hpp"
#include "core/nvtx.hpp"

namespace repix::tiling {

// ---- configuration -------------------------------------------------------------------------------

namespace {

std::vector<int> visible_gpus(int wanted) {
  std::vector<int> devices;
  if (!gpu_available()) return devices;
  int n = 0;
  REPIX_CUDA(cudaGetDeviceCount(&n));
  if (wanted > 0) n = std::min(n, wanted);
  for (int d = 0; d < n; ++d) devices.push_back(d);
  return devices;
}

}  // namespace

EngineConfig configure(const std::string& family, int gpus, int cpu_groups, int cpu_group_threads, int tile,
                       std::int64_t nx, std::int64_t ny) {
  const std::string who = family + "/multi-device: ";
  if (gpus < 0) throw Error(who + "gpus must be >= 0 (0 = every visible GPU), got " + std::to_string(gpus));
  if (cpu_groups < 0) throw Error(who + "cpu groups must be >= 0, got " + std::to_string(cpu_groups));
  if (cpu_group_threads < 0)
    throw Error(who + "cpu group threads must be >= 0 (0 = automatic), got " + std::to_string(cpu_group_threads));
  if (tile < 0) throw Error(who + "tile size must be positive (0 = automatic), got " + std::to_string(tile));
  EngineConfig cfg;
  cfg.devices = visible_gpus(gpus);
  cfg.cpu_groups = cpu_groups;
  if (cfg.devices.empty() && cpu_groups == 0)
    throw Error(who + "no workers: " + (gpu_available() ? std::string("no GPU selected") : gpu_unavailable_reason()) +
                " and no CPU groups (give --cpu-groups N to run on CPU cores)");
  const int gpu_threads = static_cast<int>(cfg.devices.size());
  cfg.cpu_group_threads = cpu_group_threads > 0 ? cpu_group_threads
                        : cpu_groups > 0        ? std::max(1, (omp_get_max_threads() - gpu_threads) / cpu_groups)
                                                : 1;
  // Each option is capped on its own (the CLI checks them); their product is checked here.
  const long long threads = static_cast<long long>(cpu_groups) * cfg.cpu_group_threads + gpu_threads;
  if (threads > max_threads())
    throw Error(who + std::to_string(cpu_groups) + " CPU groups of " + std::to_string(cfg.cpu_group_threads) +
                " threads are more threads than repix runs on this machine (" + max_threads_text() + ")");
  std::int64_t edge = tile;
  if (edge == 0) {
    const std::int64_t workers = gpu_threads + cpu_groups;
    auto tiles = [&](std::int64_t t) { return ((nx + t - 1) / t) * ((ny + t - 1) / t); };
    edge = 4096;
    while (edge > 1024 && tiles(edge) < 2 * workers) edge /= 2;
  }
  cfg.tile_width = std::min<std::int64_t>(edge, nx);
  cfg.tile_height = std::min<std::int64_t>(edge, ny);
  return cfg;
}

// ---- workers and rounds --------------------------------------------------------------------------

namespace {

constexpr std::int64_t kParallelEdgePixels = 1 << 18;

// One thread per worker, alive for the whole run (a GPU worker's device buffers and plans are
// made once). The engine's thread publishes a round (phase + tile list) and waits for it; the
// workers take tiles from the list through an atomic cursor until it is exhausted.
class Pool {
 public:
  Pool(TileFamily& family, const TileGrid& grid, std::vector<WorkerSpec> specs)
      : family_(family), grid_(grid), specs_(std::move(specs)), stats_(specs_.size()) {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      stats_[i].name = specs_[i].name();
      stats_[i].threads = specs_[i].device >= 0 ? 1 : specs_[i].threads;
    }
  }
  ~Pool() { stop(); }

  // Ends the threads (each releases its worker first). stats() is complete afterwards.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  // Starts the threads; returns once every worker exists (or throws the first failure).
  void start() {
    running_ = specs_.size();
    for (std::size_t i = 0; i < specs_.size(); ++i) threads_.emplace_back([this, i] { main(i); });
    wait_and_rethrow();
  }

  // One round: every tile of `list` once. In border rounds, dirty[t] is set for the tiles whose
  // edges changed (each entry written by the worker that held the tile).
  void round(Phase phase, const std::vector<std::int64_t>& list, std::vector<std::uint8_t>& dirty) {
    {
      std::lock_guard<std::mutex> lock(m_);
      phase_ = phase;
      list_ = &list;
      dirty_ = &dirty;
      cursor_.store(0);
      running_ = specs_.size();
      ++generation_;
    }
    work_cv_.notify_all();
    wait_and_rethrow();
  }

  std::vector<WorkerStats> stats() const { return stats_; }

 private:
  void wait_and_rethrow() {
    std::unique_lock<std::mutex> lock(m_);
    done_cv_.wait(lock, [this] { return running_ == 0; });
    if (error_) std::rethrow_exception(error_);
  }
  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(m_);
    if (!error_) error_ = e;
    failed_.store(true);
  }
  void finished() {
    std::lock_guard<std::mutex> lock(m_);
    if (--running_ == 0) done_cv_.notify_one();
  }

  void main(std::size_t i) {
    const WorkerSpec& spec = specs_[i];
    std::unique_ptr<TileWorker> worker;
    try {
      if (spec.device >= 0) REPIX_CUDA(cudaSetDevice(spec.device));
      worker = family_.make_worker(spec);
    } catch (...) {
      fail(std::current_exception());
    }
    finished();
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) break;
        seen = generation_;
      }
      try {
        if (worker && !failed_.load()) take_tiles(*worker, stats_[i]);
      } catch (...) {
        fail(std::current_exception());
      }
      finished();
    }
    if (worker) {  // the worker's own counters, with the engine's tile counts and times
      WorkerStats all = worker->stats();
      const WorkerStats& mine = stats_[i];
      all.name = mine.name;
      all.threads = mine.threads;
      all.tiles = mine.tiles;
      all.border_tiles = mine.border_tiles;
      all.busy_ms = mine.busy_ms;
      stats_[i] = all;
    }
    try {
      worker.reset();  // device memory is released with its device current
    } catch (...) {
    }
  }

  // Takes tiles until the round's list is exhausted. A tile is begun before the previous one is
  // completed, so a GPU worker's upload of the next tile runs while the current one computes.
  void take_tiles(TileWorker& worker, WorkerStats& st) {
    const std::vector<std::int64_t>& list = *list_;
    const Phase phase = phase_;
    std::int64_t pending = -1;
    auto finish = [&](std::int64_t t) {
      if (phase == Phase::border) {
        (*dirty_)[t] = family_.edges_changed(grid_.tile(t));
        ++st.border_tiles;
      } else {
        ++st.tiles;
      }
    };
    for (;;) {
      if (failed_.load()) return;  // another worker failed: the run is over
      const std::size_t k = cursor_.fetch_add(1);
      const std::int64_t t = k < list.size() ? list[k] : -1;
      const Clock::time_point t0 = Clock::now();
      const bool in_flight = t >= 0 && worker.begin(phase, grid_.tile(t));
      if (pending >= 0) {
        worker.complete(grid_.tile(pending));
        finish(pending);
        pending = -1;
      }
      if (t >= 0) {
        if (in_flight)
          pending = t;
        else
          finish(t);
      }
      st.busy_ms += ms_since(t0);
      if (t < 0) return;
    }
  }

  TileFamily& family_;
  const TileGrid& grid_;
  std::vector<WorkerSpec> specs_;
  std::vector<WorkerStats> stats_;
  std::vector<std::thread> threads_;

  std::mutex m_;
  std::condition_variable work_cv_, done_cv_;
  std::uint64_t generation_ = 0;
  std::size_t running_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  Phase phase_ = Phase::tile;
  const std::vector<std::int64_t>* list_ = nullptr;
  std::vector<std::uint8_t>* dirty_ = nullptr;
  std::atomic<std::size_t> cursor_{0};
};

}  // namespace

EngineResult run_tiles(const TileGrid& grid, TileFamily& family, const EngineConfig& cfg) {
  std::vector<WorkerSpec> specs;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) specs.push_back({cfg.devices[i], 1, static_cast<int>(i)});
  for (int g = 0; g < cfg.cpu_groups; ++g) specs.push_back({-1, std::max(1, cfg.cpu_group_threads), g});
  if (specs.empty()) throw Error("internal: run_tiles without workers");
  EngineResult res;
  res.run.tile_width = grid.tile_width();
  res.run.tile_height = grid.tile_height();
  res.run.tiles = grid.count();
  Pool pool(family, grid, std::move(specs));
  pool.start();

  const std::int64_t n = grid.count();
  std::vector<std::uint8_t> dirty(static_cast<std::size_t>(n), 1);
  std::vector<std::int64_t> list(static_cast<std::size_t>(n));
  std::iota(list.begin(), list.end(), std::int64_t(0));
  {
    nvtx::Range r("tiles");
    const Clock::time_point t0 = Clock::now();
    pool.round(Phase::tile, list, dirty);
    res.run.tile_phase_ms = ms_since(t0);
  }
  {
    nvtx::Range r("borders");
    const Clock::time_point t0 = Clock::now();
    std::vector<std::int64_t> stale;
    for (;;) {
      list.clear();
      for (std::int64_t t = 0; t < n; ++t) {
        bool near_dirty = false;
        grid.for_each_neighbour(t, cfg.diagonal, [&](std::int64_t u) { near_dirty |= dirty[u] != 0; });
        if (near_dirty) list.push_back(t);
      }
      if (list.empty()) break;
      ++res.border_rounds;
      // Only the tiles that changed have stale edges in the snapshot; each writes its own
      // segments, so they refresh in parallel, when there is enough of them to pay for waking
      // a team (whose spinning threads would otherwise compete with the workers).
      stale.clear();
      std::int64_t edge_pixels = 0;
      for (std::int64_t t = 0; t < n; ++t)
        if (dirty[t]) {
          stale.push_back(t);
          edge_pixels += 2 * (grid.tile(t).width() + grid.tile(t).height());
        }
      const auto nstale = static_cast<std::int64_t>(stale.size());
#pragma omp parallel for schedule(dynamic, 1) if (edge_pixels >= kParallelEdgePixels)
      for (std::int64_t k = 0; k < nstale; ++k) family.snapshot_edges(grid.tile(stale[k]));
      std::fill(dirty.begin(), dirty.end(), 0);
      pool.round(Phase::border, list, dirty);
    }
    res.run.border_phase_ms = ms_since(t0);
  }
  pool.stop();
  res.run.workers = pool.stats();
  return res;
}

// ---- tile copies ---------------------------------------------------------------------------------

TileCopier::TileCopier() = default;

void TileCopier::reserve(std::size_t row_bytes) {
  const std::size_t want = std::max(kChunkBytes, row_bytes);  // a chunk holds at least one row
  if (want <= chunk_bytes_) return;
  for (auto& e : done_)
    if (e) REPIX_CUDA(cudaEventSynchronize(e->get()));  // nothing may still read the old ring
  ring_.clear();
  done_.clear();
  for (int k = 0; k < kChunks; ++k) {
    ring_.emplace_back(want, true);
    done_.push_back(std::make_unique<CudaEvent>(cudaEventDisableTiming));
  }
  chunk_bytes_ = want;
}

void TileCopier::upload(void* dev, const void* host, bool host_pinned, std::int64_t stride, const Rect& r,
                        std::size_t elem, cudaStream_t s) {
  const std::size_t row = static_cast<std::size_t>(r.width()) * elem, pitch = static_cast<std::size_t>(stride) * elem;
  const auto* src = static_cast<const char*>(host) + (r.y0 * stride + r.x0) * static_cast<std::int64_t>(elem);
  auto* dst = static_cast<char*>(dev);
  if (host_pinned) {
    REPIX_CUDA(cudaMemcpy2DAsync(dst, row, src, pitch, row, static_cast<std::size_t>(r.height()),
                                 cudaMemcpyHostToDevice, s));
    return;
  }
  reserve(row);
  const std::int64_t rows_per_chunk = static_cast<std::int64_t>(chunk_bytes_ / row);
  for (std::int64_t y = 0, k = 0; y < r.height(); y += rows_per_chunk, ++k) {
    const std::int64_t rows = std::min(rows_per_chunk, r.height() - y);
    const int c = static_cast<int>(k % kChunks);
    REPIX_CUDA(cudaEventSynchronize(done_[c]->get()));  // its previous copy has left the chunk
    auto* chunk = static_cast<char*>(ring_[c].data());
    for (std::int64_t i = 0; i < rows; ++i) std::memcpy(chunk + i * row, src + (y + i) * pitch, row);
    REPIX_CUDA(cudaMemcpyAsync(dst + y * row, chunk, static_cast<std::size_t>(rows) * row, cudaMemcpyHostToDevice, s));
    REPIX_CUDA(cudaEventRecord(done_[c]->get(), s));
  }
}

void TileCopier::download(void* host, bool host_pinned, std::int64_t stride, const Rect& r, std::size_t elem,
                          const void* dev, cudaStream_t s) {
  const std::size_t row = static_cast<std::size_t>(r.width()) * elem, pitch = static_cast<std::size_t>(stride) * elem;
  auto* dst = static_cast<char*>(host) + (r.y0 * stride + r.x0) * static_cast<std::int64_t>(elem);
  const auto* src = static_cast<const char*>(dev);
  if (host_pinned) {
    REPIX_CUDA(cudaMemcpy2DAsync(dst, pitch, src, row, row, static_cast<std::size_t>(r.height()),
                                 cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    return;
  }
  reserve(row);
  const std::int64_t rows_per_chunk = static_cast<std::int64_t>(chunk_bytes_ / row);
  const std::int64_t chunks = (r.height() + rows_per_chunk - 1) / rows_per_chunk;
  // Chunk k goes to ring entry k % kChunks; up to kChunks copies are in flight while this thread
  // unpacks the oldest one.
  auto enqueue = [&](std::int64_t k) {
    const int c = static_cast<int>(k % kChunks);
    const std::int64_t y = k * rows_per_chunk, rows = std::min(rows_per_chunk, r.height() - y);
    REPIX_CUDA(cudaEventSynchronize(done_[c]->get()));
    REPIX_CUDA(cudaMemcpyAsync(ring_[c].data(), src + y * row, static_cast<std::size_t>(rows) * row,
                               cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaEventRecord(done_[c]->get(), s));
  };
  for (std::int64_t k = 0; k < std::min<std::int64_t>(chunks, kChunks); ++k) enqueue(k);
  for (std::int64_t k = 0; k < chunks; ++k) {
    const int c = static_cast<int>(k % kChunks);
    REPIX_CUDA(cudaEventSynchronize(done_[c]->get()));
    const std::int64_t y = k * rows_per_chunk, rows = std::min(rows_per_chunk, r.height() - y);
    const auto* chunk = static_cast<const char*>(ring_[c].data());
    for (std::int64_t i = 0; i < rows; ++i) std::memcpy(dst + (y + i) * pitch, chunk + i * row, row);
    if (k + kChunks < chunks) enqueue(k + kChunks);
  }
}

}  // namespace repix::tiling
