// `multi-device`: reconstruction on every GPU and on groups of CPU cores together, by the tiled
// engine of multi_device.hpp (Teodoro et al. section 4). This file is the reconstruct adapter:
//
//   tile phase: a GPU worker uploads the tile's marker and mask, runs a gpu-opt plan (one per
//     distinct tile shape, set up once) and downloads J; a CPU group copies the marker into J and
//     runs omp-tiled's code on the tile with its OpenMP threads (micro-tiles: the paper's
//     multi-level tiling);
//   border rounds: the tile's edge pixels pull from the snapshot,
//     J(p) <- max(J(p), min(J(q), I(p))) for each neighbour q across the edge (diagonals too with
//     8-connectivity); the raised pixels seed a FIFO inside the tile. A tile was stable before the
//     pull, so the FIFO from the raised pixels makes it stable again; when the wave is large (over
//     a budget of the tile's pixels) the tile is instead reconstructed again with J as the marker,
//     on the GPU or by the group's tiled code. That is sound: J is a lower bound of the answer,
//     and the reconstruction of a lower bound stays one.
// Every update is a max of a min of existing values, so J never exceeds the reconstruction; at
// the fixpoint (no tile edge changed in a round) every neighbour pair, inside and across tiles,
// satisfies J(q) >= min(J(p), I(q)): J is the reconstruction, the unique one, so the result
// equals seq bit for bit (-0 canonicalised to +0 at the end, as every CPU variant does).
//
// Stats: initially_queued / total_queued summed over tiles (GPU tiles count what their plan
// reports: 32x32 sub-tiles), passes = 1 + border rounds (the tile phase is a pass), tiled = tiles, phase times and per-worker
// counters.
#include <atomic>
#include <map>
#include <utility>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/tiling/multi_device.hpp"
#include "reconstruct/variants.hpp"
#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {

using tiling::Phase;
using tiling::Rect;

// A border-round FIFO may queue up to a tile's pixels / divisor before the tile is reconstructed
// again instead. CPU groups use omp-tiled's 16 (past it the scans beat the FIFO); GPU workers
// use a tighter budget because their alternative is one round trip over PCIe (~3 tile copies),
// not a second pass in the cache: a wave that small is finished on the host.
constexpr std::int64_t kCpuFifoDivisor = 16;
constexpr std::int64_t kGpuFifoDivisor = 256;

// The image-wide state of one run and the family's side of the engine.
template <class T, int Conn>
class Tiles final : public tiling::TileFamily {
 public:
  Tiles(const HostImage& marker, const HostImage& mask, HostImage& J, const Options& opt, const tiling::TileGrid& grid)
      : marker_(marker), mask_(mask), J_img_(J), opt_(opt), grid_(grid), J_(J.data<T>()), I_(mask.data<T>()),
        nx_(mask.shape().nx), snap_(grid, nx_) {}

  std::unique_ptr<tiling::TileWorker> make_worker(const tiling::WorkerSpec& spec) override;
  void snapshot_edges(const Rect& r) override { snap_.refresh(J_, r); }
  bool edges_changed(const Rect& r) const override { return snap_.differs(J_, r); }

  const Options& opt() const { return opt_; }
  const tiling::TileGrid& grid() const { return grid_; }
  const HostImage& marker() const { return marker_; }
  const HostImage& mask() const { return mask_; }
  HostImage& J() { return J_img_; }
  detail::Window<T> window(const Rect& r) const { return {J_, I_, nx_, r.x0, r.y0, r.x1, r.y1}; }

  // J on r from the marker, clipped to the mask with Options::clip (the inputs are checked).
  void start(const Rect& r) const {
    const T* mk = marker_.data<T>();
    for (std::int64_t y = r.y0; y < r.y1; ++y) {
      T* j = J_ + y * nx_;
      const T* m = mk + y * nx_;
      if (opt_.clip)
        for (std::int64_t x = r.x0; x < r.x1; ++x) j[x] = detail::vmin(m[x], I_[y * nx_ + x]);
      else
        std::memcpy(j + r.x0, m + r.x0, static_cast<std::size_t>(r.width()) * sizeof(T));
    }
  }

  // Raises each edge pixel p of r to min(max J(q), I(p)) over its neighbours q across the edge
  // (snapshot values) where that is higher, and queues it.
  void pull(const Rect& r, detail::PixelQueue& q) const {
    tiling::for_each_edge_pixel(r, [&](std::int64_t x, std::int64_t y) {
      bool any = false;
      T best{};
      tiling::for_each_outside_neighbour(r, grid_.area(), x, y, Conn == 8, [&](std::int64_t qx, std::int64_t qy) {
        const T v = snap_.at(qx, qy);
        best = any ? detail::vmax(best, v) : v;
        any = true;
      });
      T& jp = J_[y * nx_ + x];
      if (!any || !(jp < best)) return;
      const T ip = I_[y * nx_ + x];
      if (ip == jp) return;
      jp = detail::vmin(best, ip);
      q.push(x, y);
    });
  }

  void add_queued(std::int64_t initially, std::int64_t total) {
    initially_ += initially;
    total_ += total;
  }
  std::int64_t initially_queued() const { return initially_.load(); }
  std::int64_t total_queued() const { return total_.load(); }

 private:
  const HostImage& marker_;
  const HostImage& mask_;
  HostImage& J_img_;
  const Options& opt_;
  const tiling::TileGrid& grid_;
  T* J_;
  const T* I_;
  std::int64_t nx_;
  tiling::EdgeSnapshot<T> snap_;
  std::atomic<std::int64_t> initially_{0}, total_{0};
};

// A group of CPU cores: omp-tiled's code on one tile with the group's threads.
template <class T, int Conn>
class CpuGroup final : public tiling::TileWorker {
 public:
  CpuGroup(Tiles<T, Conn>& f, int threads) : f_(f), threads_(threads) {}

  bool begin(Phase phase, const Rect& r) override {
    const detail::Window<T> w = f_.window(r);
    Stats local;
    if (phase == Phase::tile) {
      f_.start(r);
      detail::tiled_reconstruct<T, Conn>(w, 0, f_.opt().raster_scans, threads_, local);
    } else {
      q_.clear();
      f_.pull(r, q_);
      if (!q_.empty()) {
        local.total_queued += static_cast<std::int64_t>(q_.size());
        local.total_queued += detail::propagate<T, Conn>(w, q_, r.pixels() / kCpuFifoDivisor);
        if (!q_.empty()) {
          ++ws_.border_reruns;
          detail::tiled_reconstruct<T, Conn>(w, 0, 1, threads_, local);
        }
      }
    }
    f_.add_queued(local.initially_queued, local.total_queued);
    return false;
  }
  tiling::WorkerStats stats() const override { return ws_; }

 private:
  Tiles<T, Conn>& f_;
  int threads_;
  detail::PixelQueue q_;
  tiling::WorkerStats ws_;
};

// The device inputs of one tile in flight.
template <class T>
struct ReconstructSlot {
  DeviceBuffer<T> marker, mask;
};

// One GPU: a gpu-opt plan per tile shape, set up once; slots, streams and copies from the engine.
template <class T, int Conn>
class GpuWorker final : public tiling::GpuTileWorker<ReconstructSlot<T>> {
  using Base = tiling::GpuTileWorker<ReconstructSlot<T>>;

 public:
  explicit GpuWorker(Tiles<T, Conn>& f) : f_(f) {
    const auto n = static_cast<std::size_t>(f.grid().tile_width() * f.grid().tile_height());
    for (auto& s : this->slots_) {
      s.marker.allocate(n);
      s.mask.allocate(n);
    }
  }

  bool begin(Phase phase, const Rect& r) override {
    const HostImage* source = &f_.marker();  // the tile phase starts from the marker ...
    if (phase == Phase::border) {
      q_.clear();
      f_.pull(r, q_);
      if (q_.empty()) return false;
      std::int64_t queued = static_cast<std::int64_t>(q_.size());
      queued += detail::propagate<T, Conn>(f_.window(r), q_, r.pixels() / kGpuFifoDivisor);
      f_.add_queued(0, queued);
      if (q_.empty()) return false;  // finished on the host
      ++this->ws_.border_reruns;
      source = &f_.J();  // ... a border re-run from the raised J
    }
    const std::int64_t nx = f_.mask().shape().nx;
    auto& s = this->start_upload();
    this->copier_.upload(s.marker.get(), source->raw(), source->pinned(), nx, r, sizeof(T), this->copy_.get());
    this->copier_.upload(s.mask.get(), f_.mask().raw(), f_.mask().pinned(), nx, r, sizeof(T), this->copy_.get());
    this->finish_upload(s, r, 2 * r.pixels() * static_cast<std::int64_t>(sizeof(T)));
    return true;
  }

  void complete(const Rect& r) override {
    auto& s = this->slot_of(r);
    DevicePlan& plan = plan_for(r);
    this->compute(s, [&](cudaStream_t st) { plan.compute({s.marker.get(), s.mask.get()}, st); });
    const DevicePlan::DeviceResult out = plan.device_result();
    f_.add_queued(out.stats.initially_queued, out.stats.total_queued);
    HostImage& J = f_.J();
    this->download(s, J.raw(), J.pinned(), J.shape().nx, sizeof(T), out.data);
  }

 private:
  // Tiles come in at most four shapes (full, last column, last row, corner).
  DevicePlan& plan_for(const Rect& r) {
    auto& p = plans_[{r.width(), r.height()}];
    if (!p) {
      p = gpu::gpu_opt_variant().make_plan();
      p->setup({f_.mask().dtype(), Shape::d2(r.width(), r.height())}, f_.opt(), this->compute_.get());
    }
    return *p;
  }

  Tiles<T, Conn>& f_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::unique_ptr<DevicePlan>> plans_;
  detail::PixelQueue q_;
};

template <class T, int Conn>
std::unique_ptr<tiling::TileWorker> Tiles<T, Conn>::make_worker(const tiling::WorkerSpec& spec) {
  if (spec.device >= 0) return std::make_unique<GpuWorker<T, Conn>>(*this);
  return std::make_unique<CpuGroup<T, Conn>>(*this, spec.threads);
}

struct Engine {
  const HostImage& marker;
  const HostImage& mask;
  HostImage& J;
  const Options& opt;
  const tiling::EngineConfig& cfg;
  Stats& st;

  template <class T, int Conn>
  void run() const {
    const tiling::TileGrid grid(mask.shape().nx, mask.shape().ny, cfg.tile_width, cfg.tile_height);
    Tiles<T, Conn> tiles(marker, mask, J, opt, grid);
    const tiling::EngineResult r = tiling::run_tiles(grid, tiles, cfg);
    st.passes = 1 + r.border_rounds;
    st.tiled = r.run;
    st.initially_queued = tiles.initially_queued();
    st.total_queued = tiles.total_queued();
  }
};

// The inputs are checked.
Result run_checked(const HostImage& marker, const HostImage& mask, const Options& opt, tiling::EngineConfig cfg,
                   int threads) {
  cfg.diagonal = opt.connectivity == 8;
  Result r;
  // Not initialised: every pixel is written when its tile is first computed.
  r.image = HostImage(mask.dtype(), mask.shape());
  {
    nvtx::Range range("propagate");
    detail::dispatch(mask.dtype(), opt.connectivity, Engine{marker, mask, r.image, opt, cfg, r.stats});
  }
  detail::canonical_zeros(r.image, threads);
  return r;
}

Result run_multi_device(const HostImage& marker, const HostImage& mask, const Options& opt) {
  nvtx::Range whole("reconstruct/multi-device");
  const int threads = detail::thread_count(opt);
  detail::check_inputs_threads(marker, mask, opt, threads);  // bad inputs first, then missing workers
  const tiling::EngineConfig cfg = tiling::configure("reconstruct", opt.gpus, opt.cpu_groups, opt.cpu_group_threads,
                                                 opt.tile, mask.shape().nx, mask.shape().ny);
  return run_checked(marker, mask, opt, cfg, threads);
}

}  // namespace

Result run_multi_device_with(const HostImage& marker, const HostImage& mask, const Options& opt,
                             tiling::EngineConfig cfg) {
  nvtx::Range whole("reconstruct/multi-device");
  const int threads = detail::thread_count(opt);
  detail::check_inputs_threads(marker, mask, opt, threads);
  return run_checked(marker, mask, opt, std::move(cfg), threads);
}

namespace gpu {
Variant multi_device_variant() {
  Variant v;
  v.id = "multi-device";
  v.gpu = true;
  v.step = "multi-device";
  v.description =
      "tiles dealt on demand to every GPU (gpu-opt per tile) and to CPU groups (omp-tiled per tile), "
      "then border rounds until stable (section 4)";
  v.run = run_multi_device;
  v.make_plan = nullptr;  // the image lives in host memory: there is no device-resident scope
  return v;
}
}  // namespace gpu

}  // namespace repix::reconstruct
