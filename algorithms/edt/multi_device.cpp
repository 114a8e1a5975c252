// `multi-device` edt: Algorithm 3/6's nearest-site propagation on every GPU and on groups of CPU
// cores together, by the tiled engine of multi_device.hpp (Teodoro et al. section 4). This file
// is the edt adapter; the state is the packed global site of every pixel (detail.hpp), kept
// in host memory:
//
//   tile phase: a GPU worker uploads the tile's input and runs a TilePropagator's
//     init_and_propagate on it (gpu_tile.hpp: the TQ queue, the paper's best), then downloads
//     the sites; a CPU group runs omp-tiled's code on the tile with its OpenMP threads
//     (tiled_propagate: micro-tiles, the paper's multi-level tiling);
//   border rounds: each edge pixel of the tile is offered the snapshot sites of its 8-neighbours
//     across the edge and takes a strictly closer one (offer_across_edges, the rule omp-tiled's
//     micro-tiles use); the pixels that took one seed a FIFO inside the tile. A GPU worker runs
//     the FIFO on the host up to a small budget and sends what is left to the GPU as the seeds
//     of propagate_from (uploading the tile's sites first); a CPU group runs it to the end.
// Sites only ever move strictly closer and every site is a background pixel, so each tile's
// state is always a partial solution; when a round changes no tile edge, every tile is a fixed
// point inside and no pixel next to a tile border takes a closer site from across it, which is
// what check_propagation verifies (as for every wave variant; which of two equidistant sites a
// pixel keeps depends on the order, as in omp-tiled).
//
// Stats: initially_queued / total_queued / overflow_reruns summed over tiles (GPU tiles count
// what their propagator reports), passes = 1 + border rounds (as edt omp-tiled), tiled = tiles, phase times and
// per-worker counters.
#include <omp.h>

#include <atomic>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_tile.hpp"
#include "edt/variants.hpp"
#include "edt/propagate.hpp"
#include "core/tiling/multi_device.hpp"
#include "edt/variants.hpp"

namespace repix::edt {

namespace {

using tiling::Phase;
using tiling::Rect;

// A GPU worker finishes a border wave on the host while it queues at most a tile's pixels / 256;
// a larger wave goes to the GPU (a round trip of the tile's sites, 16 bytes a pixel over PCIe).
constexpr std::int64_t kGpuFifoDivisor = 256;
// CPU groups' micro-tiles: omp-tiled's default.
constexpr std::int64_t kCpuMicroTile = 256;

class Tiles final : public tiling::TileFamily {
 public:
  Tiles(const HostImage& input, const std::vector<std::uint8_t>& bg, std::vector<std::int64_t>& vr, const Options& opt,
        const tiling::TileGrid& grid)
      : input_(input), bg_(bg), vr_(vr), opt_(opt), grid_(grid), nx_(input.shape().nx), snap_(grid, nx_) {}

  std::unique_ptr<tiling::TileWorker> make_worker(const tiling::WorkerSpec& spec) override;
  void snapshot_edges(const Rect& r) override { snap_.refresh(vr_.data(), r); }
  bool edges_changed(const Rect& r) const override { return snap_.differs(vr_.data(), r); }

  const HostImage& input() const { return input_; }
  const std::uint8_t* bg() const { return bg_.data(); }
  std::int64_t* vr() { return vr_.data(); }
  std::int64_t nx() const { return nx_; }
  const Options& opt() const { return opt_; }
  const tiling::TileGrid& grid() const { return grid_; }

  // Offers r's edge pixels the snapshot sites across its edges; pushes the pixels that took a
  // closer one onto q. Returns how many did.
  std::int64_t pull(const Rect& r, Fifo& q) {
    return offer_across_edges(
        r, grid_.area(), nx_, vr_.data(), [this](std::int64_t x, std::int64_t y) { return snap_.at(x, y); },
        [&q](std::int64_t x, std::int64_t y) { q.push(pack_xy(x, y)); });
  }

  void add(const Stats& s) {
    initially_ += s.initially_queued;
    total_ += s.total_queued;
    overflow_reruns_ += s.overflow_reruns;
  }
  void fill(Stats& st) const {
    st.initially_queued = initially_.load();
    st.total_queued = total_.load();
    st.overflow_reruns = overflow_reruns_.load();
  }

 private:
  const HostImage& input_;
  const std::vector<std::uint8_t>& bg_;
  std::vector<std::int64_t>& vr_;
  const Options& opt_;
  const tiling::TileGrid& grid_;
  std::int64_t nx_;
  tiling::EdgeSnapshot<std::int64_t> snap_;
  std::atomic<std::int64_t> initially_{0}, total_{0}, overflow_reruns_{0};
};

// A group of CPU cores: omp-tiled's code on one tile with the group's threads; border waves by
// the window FIFO.
class CpuGroup final : public tiling::TileWorker {
 public:
  CpuGroup(Tiles& f, int threads) : f_(f), threads_(threads) {}

  bool begin(Phase phase, const Rect& r) override {
    Stats local;
    if (phase == Phase::tile) {
      tiled_propagate(f_.bg(), f_.nx(), r, kCpuMicroTile, threads_, f_.vr(), local);
    } else {
      Fifo q;
      const std::int64_t took = f_.pull(r, q);
      if (took > 0) local.total_queued += took + propagate_window(f_.nx(), r, f_.vr(), q);
    }
    f_.add(local);
    return false;
  }

 private:
  Tiles& f_;
  int threads_;
};

// The device buffers of one tile in flight.
struct EdtSlot {
  DeviceBuffer<unsigned char> input;  // the tile's input, window-local rows, the input's dtype
  DeviceBuffer<std::int64_t> sites;   // the tile's packed global sites, window-local rows
  DeviceBuffer<std::uint32_t> seeds;  // border round: window-local indices
  std::vector<std::uint32_t> seeds_host;
  Phase phase = Phase::tile;
};

// One GPU: a TilePropagator sized for the largest tile; slots, streams and copies from the engine.
class GpuWorker final : public tiling::GpuTileWorker<EdtSlot> {
 public:
  explicit GpuWorker(Tiles& f) : f_(f) {
    const std::int64_t tw = f.grid().tile_width(), th = f.grid().tile_height();
    const auto n = static_cast<std::size_t>(tw * th);
    prop_.setup(tw, th, iwpp::QueuePolicy::thread_queue, f.opt().queue_capacity);
    for (Slot& s : slots_) {
      s.input.allocate(n * dtype_size(f.input().dtype()));
      s.sites.allocate(n);
    }
  }

  bool begin(Phase phase, const Rect& r) override {
    const std::int64_t nx = f_.nx();
    if (phase == Phase::tile) {
      const HostImage& in = f_.input();
      Slot& s = start_upload();
      copier_.upload(s.input.get(), in.raw(), in.pinned(), nx, r, dtype_size(in.dtype()), copy_.get());
      s.phase = phase;
      finish_upload(s, r, r.pixels() * static_cast<std::int64_t>(dtype_size(in.dtype())));
      return true;
    }
    Fifo q;
    const std::int64_t took = f_.pull(r, q);
    if (took == 0) return false;
    Stats local;
    local.total_queued = took + propagate_window(nx, r, f_.vr(), q, r.pixels() / kGpuFifoDivisor);
    f_.add(local);
    if (q.empty()) return false;  // finished on the host
    ++ws_.border_reruns;
    // What the host FIFO left: the pixels whose site may still improve a neighbour.
    Slot& s = start_upload();
    s.seeds_host.clear();
    while (!q.empty()) {
      const std::int64_t p = q.pop();
      s.seeds_host.push_back(static_cast<std::uint32_t>((packed_y(p) - r.y0) * r.width() + packed_x(p) - r.x0));
    }
    s.seeds.ensure(s.seeds_host.size());
    copier_.upload(s.sites.get(), f_.vr(), false, nx, r, sizeof(std::int64_t), copy_.get());
    const std::size_t seed_bytes = s.seeds_host.size() * sizeof(std::uint32_t);
    REPIX_CUDA(cudaMemcpyAsync(s.seeds.get(), s.seeds_host.data(), seed_bytes, cudaMemcpyHostToDevice, copy_.get()));
    s.phase = phase;
    finish_upload(s, r, r.pixels() * static_cast<std::int64_t>(sizeof(std::int64_t)) + static_cast<std::int64_t>(seed_bytes));
    return true;
  }

  void complete(const Rect& r) override {
    Slot& s = slot_of(r);
    const Shape& sh = f_.input().shape();
    prop_.reset_stats();
    compute(s, [&](cudaStream_t st) {
      if (s.phase == Phase::tile)
        prop_.init_and_propagate(s.input.get(), f_.input().dtype(), r, sh.nx, sh.ny, s.sites.get(), st);
      else
        prop_.propagate_from(s.seeds.get(), static_cast<std::int64_t>(s.seeds_host.size()), r, s.sites.get(), st);
    });
    f_.add(prop_.stats());
    download(s, f_.vr(), false, sh.nx, sizeof(std::int64_t), s.sites.get());
  }

 private:
  Tiles& f_;
  TilePropagator prop_;
};

std::unique_ptr<tiling::TileWorker> Tiles::make_worker(const tiling::WorkerSpec& spec) {
  if (spec.device >= 0) return std::make_unique<GpuWorker>(*this);
  return std::make_unique<CpuGroup>(*this, spec.threads);
}

int thread_count(const Options& opt) { return opt.threads > 0 ? opt.threads : omp_get_max_threads(); }

// The input is checked.
Result run_checked(const HostImage& input, const Options& opt, tiling::EngineConfig cfg) {
  cfg.diagonal = true;  // sites travel to all 8 neighbours
  const Shape& sh = input.shape();
  const int threads = thread_count(opt);
  // Only CPU groups read the background mask (GPU workers upload the input itself).
  const std::vector<std::uint8_t> bg = cfg.cpu_groups > 0 ? background_mask(input, threads) : std::vector<std::uint8_t>();
  std::vector<std::int64_t> vr(static_cast<std::size_t>(sh.size()));
  const tiling::TileGrid grid(sh.nx, sh.ny, cfg.tile_width, cfg.tile_height);
  Tiles tiles(input, bg, vr, opt, grid);
  tiling::EngineResult er;
  {
    nvtx::Range r("propagate");
    er = tiling::run_tiles(grid, tiles, cfg);
  }
  Result res = result_from_packed(sh, vr, opt.want_sites, threads);
  tiles.fill(res.stats);
  res.stats.passes = 1 + er.border_rounds;
  res.stats.tiled = er.run;
  return res;
}

Result run_multi_device(const HostImage& input, const Options& opt) {
  nvtx::Range whole("edt/multi-device");
  check_input(input);  // bad input first, then missing workers
  const tiling::EngineConfig cfg = tiling::configure("edt", opt.gpus, opt.cpu_groups, opt.cpu_group_threads, opt.tile,
                                                 input.shape().nx, input.shape().ny);
  return run_checked(input, opt, cfg);
}

}  // namespace

Result run_multi_device_with(const HostImage& input, const Options& opt, tiling::EngineConfig cfg) {
  nvtx::Range whole("edt/multi-device");
  check_input(input);
  return run_checked(input, opt, std::move(cfg));
}

Variant multi_device_variant() {
  return {{"multi-device", true, "multi-device",
           "tiles dealt on demand to every GPU (queue propagation per tile) and to CPU groups (omp-tiled per tile), "
           "then border rounds until stable (section 4)",
           run_multi_device, {}},
          /*exact=*/false};
}

}  // namespace repix::edt
