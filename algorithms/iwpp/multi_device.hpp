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
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/gpu.hpp"
#include "core/image.hpp"
#include "iwpp/tile_stats.hpp"

namespace repix::iwpp {

// Pixels [x0, x1) x [y0, y1) of the image.
struct Rect {
  std::int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::int64_t width() const { return x1 - x0; }
  std::int64_t height() const { return y1 - y0; }
  std::int64_t pixels() const { return width() * height(); }
  bool contains(std::int64_t x, std::int64_t y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

// An nx x ny image cut into tiles of tw x th pixels (the last column and row of tiles may be
// smaller). Tile t is column t % cols(), row t / cols().
class TileGrid {
 public:
  TileGrid(std::int64_t nx, std::int64_t ny, std::int64_t tw, std::int64_t th);
  std::int64_t nx() const { return nx_; }
  std::int64_t ny() const { return ny_; }
  std::int64_t tile_width() const { return tw_; }
  std::int64_t tile_height() const { return th_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t count() const { return cols_ * rows_; }
  Rect tile(std::int64_t t) const;
  // f(u) for every tile u that touches tile t: side by side, or (with `diagonal`) corner to corner.
  template <class F>
  void for_each_neighbour(std::int64_t t, bool diagonal, F&& f) const {
    const std::int64_t cx = t % cols_, cy = t / cols_;
    for (std::int64_t dy = -1; dy <= 1; ++dy)
      for (std::int64_t dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || (!diagonal && dx != 0 && dy != 0)) continue;
        const std::int64_t ux = cx + dx, uy = cy + dy;
        if (ux >= 0 && uy >= 0 && ux < cols_ && uy < rows_) f(uy * cols_ + ux);
      }
  }

 private:
  std::int64_t nx_, ny_, tw_, th_, cols_, rows_;
};

// f(x, y) for every pixel on the edge of r, each once (a 1-pixel-wide r is all edge).
template <class F>
void for_each_edge_pixel(const Rect& r, F&& f) {
  for (std::int64_t y = r.y0; y < r.y1; ++y) {
    if (y == r.y0 || y == r.y1 - 1) {
      for (std::int64_t x = r.x0; x < r.x1; ++x) f(x, y);
    } else {
      f(r.x0, y);
      if (r.x1 - 1 != r.x0) f(r.x1 - 1, y);
    }
  }
}

// f(qx, qy) for every neighbour q of (x, y) that lies outside r but inside the nx x ny image:
// the 4-neighbours, and the diagonal ones too with `diagonal`.
template <class F>
void for_each_outside_neighbour(const Rect& r, std::int64_t nx, std::int64_t ny, std::int64_t x, std::int64_t y,
                                bool diagonal, F&& f) {
  for (std::int64_t dy = -1; dy <= 1; ++dy)
    for (std::int64_t dx = -1; dx <= 1; ++dx) {
      if ((dx == 0 && dy == 0) || (!diagonal && dx != 0 && dy != 0)) continue;
      const std::int64_t qx = x + dx, qy = y + dy;
      if (qx < 0 || qy < 0 || qx >= nx || qy >= ny || r.contains(qx, qy)) continue;
      f(qx, qy);
    }
}

// The rows and columns on both sides of every tile boundary, copied from the state image (E per
// pixel, nx a row) between rounds. Whole image rows and columns are kept, so a pixel next to a
// boundary is found by one table lookup whichever tile it belongs to; the snapshot is small
// (about 4 / tile edge of the image).
template <class E>
class EdgeSnapshot {
 public:
  explicit EdgeSnapshot(const TileGrid& g)
      : nx_(g.nx()), ny_(g.ny()), row_slot_(static_cast<std::size_t>(g.ny()), -1),
        col_slot_(static_cast<std::size_t>(g.nx()), -1) {
    std::int64_t rows = 0, cols = 0;
    for (std::int64_t k = 1; k < g.rows(); ++k)
      for (std::int64_t y : {k * g.tile_height() - 1, k * g.tile_height()})
        if (row_slot_[y] < 0) row_slot_[y] = rows++;
    for (std::int64_t k = 1; k < g.cols(); ++k)
      for (std::int64_t x : {k * g.tile_width() - 1, k * g.tile_width()})
        if (col_slot_[x] < 0) col_slot_[x] = cols++;
    rows_.resize(static_cast<std::size_t>(rows * nx_));
    cols_.resize(static_cast<std::size_t>(cols * ny_));
  }

  // Copies the edge rows and columns of tile r that lie next to a boundary from `state`.
  void refresh(const E* state, const Rect& r) {
    visit_edges(*this, r, state, [](E& snap, const E& now) { snap = now; });
  }
  // True when an edge pixel of tile r that lies next to a boundary differs from its snapshot
  // (compared with ==: a float -0 that became +0 is no change).
  bool differs(const E* state, const Rect& r) const {
    bool d = false;
    visit_edges(*this, r, state, [&d](const E& snap, const E& now) { d |= !(snap == now); });
    return d;
  }
  // The snapshot of pixel (x, y), which must lie next to a tile boundary.
  E at(std::int64_t x, std::int64_t y) const {
    const std::int64_t r = row_slot_[y];
    if (r >= 0) return rows_[r * nx_ + x];
    assert(col_slot_[x] >= 0);
    return cols_[col_slot_[x] * ny_ + y];
  }

 private:
  // f(snapshot element, state element) for tile r's edge rows and columns that have a slot.
  // Self is EdgeSnapshot or const EdgeSnapshot.
  template <class Self, class F>
  static void visit_edges(Self& self, const Rect& r, const E* state, F&& f) {
    const std::int64_t nx = self.nx_, ny = self.ny_;
    // First and last row, then first and last column; a one-row (column) tile has one.
    for (int k = 0; k < 2 && (k == 0 || r.height() > 1); ++k) {
      const std::int64_t y = k == 0 ? r.y0 : r.y1 - 1, s = self.row_slot_[y];
      if (s >= 0)
        for (std::int64_t x = r.x0; x < r.x1; ++x) f(self.rows_[s * nx + x], state[y * nx + x]);
    }
    for (int k = 0; k < 2 && (k == 0 || r.width() > 1); ++k) {
      const std::int64_t x = k == 0 ? r.x0 : r.x1 - 1, s = self.col_slot_[x];
      if (s >= 0)
        for (std::int64_t y = r.y0; y < r.y1; ++y) f(self.cols_[s * ny + y], state[y * nx + x]);
    }
  }
  std::int64_t nx_, ny_;
  std::vector<std::int64_t> row_slot_, col_slot_;  // image row / column -> slot, -1 where none
  std::vector<E> rows_, cols_;
};

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

}  // namespace repix::iwpp
