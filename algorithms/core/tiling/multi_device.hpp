// The tiled multi-device engine of the IWPP families (Teodoro et al. 2013, section 4), shared by
// reconstruct's and edt's `multi-device` variants; each family adds a small adapter.
//
// The whole image stays in host memory (it may be larger than one GPU). It is cut into large
// tiles; the workers are one host thread per GPU (its own streams, device buffers and plans, set
// up once per run) and `cpu_groups` threads that each drive a group of OpenMP threads. Tiles are
// dealt on demand from one shared list per round (an atomic cursor): whoever is free takes the
// next tile, the paper's demand-driven scheduler, which balances tiles of very different cost and
// workers of very different speed without a model of either.
//
//   tile phase (TP): every tile is computed on its own, its border a wall;
//   border rounds (BP): the one-pixel rows and columns on both sides of every tile boundary are
//     copied into a snapshot (only the edges of tiles that changed in the last round are stale);
//     every tile next to a changed tile pulls what crosses its edges from the snapshot (the
//     family's rule) and propagates it inside; a tile whose edges changed marks itself for the
//     next round. Rounds repeat until one changes no tile edge.
// Reading the neighbours only through the snapshot keeps a round free of data races: a worker
// writes only the pixels of the tile it holds. The families' propagations are monotone (values
// only rise, sites only get closer), so a snapshot value that is a round old is merely late.
//
// Workers take the next tile before finishing the current one (TileWorker::begin / complete):
// a GPU worker uploads tile k+1 while tile k computes.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/image.hpp"
#include "core/tiling/tile_stats.hpp"
#include "core/tiling/tiles.hpp"

namespace repix::tiling {

enum class Phase { tile, border };

// One worker's share of a family's algorithm. The engine creates one per worker, in the worker's
// thread (after selecting its GPU), and calls it from that thread only.
class TileWorker {
 public:
  virtual ~TileWorker() = default;
  // Starts `tile` in `phase`. Phase::tile: compute the tile on its own, its border a wall.
  // Phase::border: pull what crosses the tile's edges from the family's snapshot and propagate it
  // inside. Returns true when work is left in flight that complete(tile) must finish; the engine
  // then begins the worker's next tile first (so a GPU worker's next upload overlaps this tile's
  // compute). At most two tiles are begun and not completed at any time.
  virtual bool begin(Phase phase, const Rect& tile) = 0;
  virtual void complete(const Rect& tile) { (void)tile; }
  // Counters the worker keeps itself (transfer and compute times, reruns). The engine adds the
  // tile counts and busy time.
  virtual WorkerStats stats() const { return {}; }
};

struct WorkerSpec {
  int device = -1;  // CUDA device of a GPU worker; -1 for a CPU group
  int threads = 1;  // a CPU group's OpenMP threads
  int index = 0;    // among the workers of its kind
  std::string name() const { return (device >= 0 ? "gpu" : "cpu") + std::to_string(device >= 0 ? device : index); }
};

// What a family provides: its workers and its border exchange.
class TileFamily {
 public:
  virtual ~TileFamily() = default;
  virtual std::unique_ptr<TileWorker> make_worker(const WorkerSpec& spec) = 0;
  // Between rounds (no worker running): copy tile r's edges into the snapshot.
  virtual void snapshot_edges(const Rect& r) = 0;
  // After a border-round tile, in the worker's thread: do r's edges differ from the snapshot?
  virtual bool edges_changed(const Rect& r) const = 0;
};

// Workers and tiles of one run.
struct EngineConfig {
  std::vector<int> devices;     // one GPU worker per CUDA device listed
  int cpu_groups = 0;           // CPU workers
  int cpu_group_threads = 1;    // OpenMP threads of each CPU worker
  std::int64_t tile_width = 0, tile_height = 0;
  bool diagonal = true;         // tiles exchange across corners (8-neighbourhoods)
};

// The configuration the families' Options ask for (Options::gpus, cpu_groups, cpu_group_threads
// and tile, as in the CLI's --gpus, --cpu-groups, --cpu-group-threads and --tile):
//   gpus: 0 = every visible GPU, N = the first N (capped to what exists); none without a GPU;
//   cpu_group_threads: 0 = the OpenMP threads left over by the GPU workers' host threads, shared
//     out among the groups (at least 1 each);
//   tile: square tiles of that edge; 0 = 4096, halved (down to 1024) until every worker can get
//     two tiles, so that transfers overlap compute and the last tiles balance.
// Throws repix::Error (one line) for negative values and when there is no worker at all.
EngineConfig configure(const std::string& family, int gpus, int cpu_groups, int cpu_group_threads, int tile,
                       std::int64_t nx, std::int64_t ny);

// Runs the tile phase and the border rounds to the fixpoint. Returns what it did (TiledRun) and
// the number of border rounds. A worker's exception (a GPU out of memory, a CUDA error) stops
// the others after their current tile and is rethrown here.
struct EngineResult {
  TiledRun run;
  std::int64_t border_rounds = 0;
};
EngineResult run_tiles(const TileGrid& grid, TileFamily& family, const EngineConfig& cfg);

// Copies tiles between a host image (`stride` elements a row) and a dense device buffer (the
// tile's rows back to back) for GPU workers. Pinned host memory goes to the copy engine as one
// 2D copy; pageable memory goes through a small ring of pinned chunks that this thread packs or
// unpacks while the copy engine moves the neighbouring chunk (pinning a whole image per run would
// cost more than the copies). Create it with the worker's device current.
class TileCopier {
 public:
  TileCopier();
  // Asynchronous on `s` (pinned) or returns once every chunk is queued (pageable).
  void upload(void* dev, const void* host, bool host_pinned, std::int64_t stride, const Rect& r, std::size_t elem,
              cudaStream_t s);
  // Returns when the host rows hold the data.
  void download(void* host, bool host_pinned, std::int64_t stride, const Rect& r, std::size_t elem, const void* dev,
                cudaStream_t s);

 private:
  static constexpr int kChunks = 4;
  static constexpr std::size_t kChunkBytes = std::size_t(4) << 20;
  void reserve(std::size_t row_bytes);
  std::size_t chunk_bytes_ = 0;
  std::vector<HostBuffer> ring_;
  std::vector<std::unique_ptr<CudaEvent>> done_;  // per chunk: its last copy finished
};

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// What every family's GPU worker shares: a copy stream for uploads and a compute stream, two
// slots of the family's device buffers (`Buffers`) so that the next tile's upload overlaps the
// current tile's compute, the tile copier, and the upload / compute / download timings of
// WorkerStats. The family's begin() fills start_upload()'s slot and calls finish_upload(); its
// complete() runs its computation through compute() and then download(), which frees the slot.
// Construct it with the worker's device current (the engine does).
template <class Buffers>
class GpuTileWorker : public TileWorker {
 public:
  WorkerStats stats() const override { return ws_; }

 protected:
  struct Slot : Buffers {
    CudaEvent up0, up1;  // the slot's uploads on the copy stream
    Rect tile;
    bool busy = false;
  };

  // A free slot, with the start of its uploads marked on the copy stream.
  Slot& start_upload() {
    Slot& s = slots_[slots_[0].busy ? 1 : 0];
    if (s.busy) throw Error("internal: multi-device GPU worker has no free slot");
    s.up0.record(copy_.get());
    return s;
  }
  void finish_upload(Slot& s, const Rect& r, std::int64_t bytes) {
    s.up1.record(copy_.get());
    s.tile = r;
    s.busy = true;
    ws_.upload_bytes += bytes;
  }
  Slot& slot_of(const Rect& r) {
    for (Slot& s : slots_)
      if (s.busy && s.tile.x0 == r.x0 && s.tile.y0 == r.y0) return s;
    throw Error("internal: multi-device GPU worker completes a tile it never began");
  }
  // f(compute stream) once the slot's uploads have arrived, timed by events.
  template <class F>
  void compute(Slot& s, F&& f) {
    REPIX_CUDA(cudaStreamWaitEvent(compute_.get(), s.up1.get(), 0));
    c0_.record(compute_.get());
    f(compute_.get());
    c1_.record(compute_.get());
  }
  // The slot's tile from `dev` (dense rows of `elem` bytes a pixel) into the host image; frees
  // the slot.
  void download(Slot& s, void* host, bool host_pinned, std::int64_t stride, std::size_t elem, const void* dev) {
    const Clock::time_point t0 = Clock::now();
    copier_.download(host, host_pinned, stride, s.tile, elem, dev, compute_.get());
    ws_.download_ms += ms_since(t0);
    ws_.download_bytes += s.tile.pixels() * static_cast<std::int64_t>(elem);
    // Every event of the slot has completed: the compute stream waited for the upload, and the
    // download synchronised the compute stream.
    ws_.upload_ms += s.up1.ms_since(s.up0);
    ws_.compute_ms += c1_.ms_since(c0_);
    s.busy = false;
  }

  CudaStream copy_, compute_;
  TileCopier copier_;
  Slot slots_[2];
  WorkerStats ws_;

 private:
  CudaEvent c0_, c1_;  // around the last compute()
};

}  // namespace repix::tiling
