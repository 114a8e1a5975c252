// `gpu-opt`: a tile-level wavefront. The image is cut into 32x32 tiles; one warp owns a tile at a
// time and holds it in registers (lane = column, 32 rows of J and of the mask), with a one-pixel
// halo read from the neighbouring tiles. The warp makes the tile locally stable:
//   - horizontal passes solve each row exactly in one go: the row recurrence
//     J(x) <- max(J(x), min(J(x-1), I(x))) composes clamp functions v -> max(a, min(v, b)), which
//     are closed under composition, so a 5-step shuffle scan gives the whole row (both directions);
//   - vertical passes walk the rows in registers, taking the row above (below) and, with
//     8-connectivity, its two diagonals through shuffles;
//   - sweeps (right, left, down, up) repeat until one changes nothing: then every pixel satisfies
//     J(p) >= min(J(q), I(p)) for all its neighbours q, halo included.
// A tile whose border pixels changed schedules the neighbours that can see them (4 sides; with
// 8-connectivity also the diagonal tiles of changed corners) for the next round, each at most once
// per round (a per-tile round stamp). Rounds are launches of persistent blocks whose warps take
// tiles from the round's list through an atomic cursor (dynamic balance, no static split); the
// host checks for an empty list only every few rounds (1, 2, 4, ... up to 32 launches between
// checks). Round 0 takes every tile, so no raster passes or seed detection are needed.
// Stats: the queued elements are tiles (initially_queued = all of them), passes are the rounds that
// had work, and overflow_reruns is always 0 (a round's list holds each tile at most once).
//
// Correctness: every update is J(p) <- max(J(p), min(J(q), I(p))) for a neighbour q, so J never
// exceeds the reconstruction. When the list is empty, take any tile's last processing: it ended
// locally stable for the halo it read, and any later (or concurrent) change of that halo would
// have scheduled it again, so the halo it read is final; hence the whole image is stable, i.e. the
// reconstruction. Halo reads race with the neighbour's write-back in the same round; any value read
// is a valid lower bound and the neighbour reschedules this tile anyway. Terminates: a tile is
// scheduled only after a strict increase of some pixel, and values are bounded by the mask.
#include "reconstruct/gpu_common.cuh"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct::gpu {
namespace {

constexpr int kTile = 32;  // tile edge; one lane per column
constexpr int kOptWarps = 4;
constexpr int kOptThreads = kOptWarps * 32;
constexpr int kMaxBatch = 32;  // round launches between two host checks
constexpr unsigned kFull = 0xffffffffu;

struct TileCtl {
  unsigned count;   // tiles in the round's list
  unsigned cursor;  // next list entry to take
};

struct OptArgs {
  std::int64_t nx = 1, ny = 1;
  unsigned tiles_x = 1, tiles_y = 1;
  const std::uint32_t* list_in = nullptr;
  std::uint32_t* list_out = nullptr;
  TileCtl* ctl = nullptr;  // [3], indexed by round % 3
  int* stamp = nullptr;    // per tile: the last round it was scheduled for
  int round = 0;
  unsigned long long* scheduled = nullptr;  // tiles scheduled after round 0
  unsigned* rounds_done = nullptr;          // rounds that had work
};

// Schedules tile (tx + dx, ty + dy) for round a.round + 1 when `hit` and it exists.
__device__ __forceinline__ void schedule(const OptArgs& a, TileCtl* out_ctl, unsigned tx, unsigned ty,
                                         int dx, int dy, bool hit) {
  const long long nxt = static_cast<long long>(tx) + dx, nyt = static_cast<long long>(ty) + dy;
  if (!hit || nxt < 0 || nyt < 0 || nxt >= a.tiles_x || nyt >= a.tiles_y) return;
  const unsigned nt = static_cast<unsigned>(nyt) * a.tiles_x + static_cast<unsigned>(nxt);
  // Exactly one scheduler per (tile, round) sees an older stamp, so a list never holds a tile
  // twice and never exceeds the tile count.
  if (atomicExch(&a.stamp[nt], a.round + 1) != a.round + 1) {
    a.list_out[atomicAdd(&out_ctl->count, 1u)] = nt;
    atomicAdd(a.scheduled, 1ull);
  }
}

// Raises row r of the tile to nv where that is higher; records the change.
__device__ __forceinline__ void raise_row(std::uint32_t (&Jr)[kTile], int r, std::uint32_t nv, std::uint32_t& chg,
                                      bool& sc) {
  if (nv > Jr[r]) {
    Jr[r] = nv;
    chg |= 1u << r;
    sc = true;
  }
}

// Every row at once, rightwards (kRight) or leftwards: row r as an inclusive scan over the lanes of
// the clamp functions v -> max(J, min(v, I)), applied to the halo pixel before the row (held by
// lane r of `halo`). Combining segment P (before) with segment C (after) gives
// A = max(A_C, min(A_P, B_C)), B = min(B_P, B_C).
template <bool kRight>
__device__ __forceinline__ void row_pass(std::uint32_t (&Jr)[kTile], const std::uint32_t (&Ir)[kTile],
                                         std::uint32_t halo, unsigned lane, std::uint32_t& chg, bool& sc) {
#pragma unroll
  for (int r = 0; r < kTile; ++r) {
    std::uint32_t A = Jr[r], B = Ir[r];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const std::uint32_t pa = kRight ? __shfl_up_sync(kFull, A, d) : __shfl_down_sync(kFull, A, d);
      const std::uint32_t pb = kRight ? __shfl_up_sync(kFull, B, d) : __shfl_down_sync(kFull, B, d);
      if (kRight ? lane >= unsigned(d) : lane + d < 32u) {
        A = max(A, min(pa, B));
        B = min(pb, B);
      }
    }
    raise_row(Jr, r, max(A, min(__shfl_sync(kFull, halo, r), B)), chg, sc);
  }
}

// Every column at once, downwards (kDown) or upwards: each lane walks its column in registers,
// starting from the halo row before it (`start`); with 8-connectivity the diagonals of the
// previous row come through shuffles, and at the tile's left/right edges from the halo columns
// (lane r of hl / hr holds row r; corner_l / corner_r are the corners of the starting halo row).
template <bool kDown, int Conn>
__device__ __forceinline__ void column_pass(std::uint32_t (&Jr)[kTile], const std::uint32_t (&Ir)[kTile],
                                            std::uint32_t start, std::uint32_t corner_l, std::uint32_t corner_r,
                                            std::uint32_t hl, std::uint32_t hr, unsigned lane,
                                            std::uint32_t& chg, bool& sc) {
  std::uint32_t prev = start;
#pragma unroll
  for (int i = 0; i < kTile; ++i) {
    const int r = kDown ? i : kTile - 1 - i;
    std::uint32_t n = prev;
    if (Conn == 8) {
      const int rp = kDown ? r - 1 : r + 1;  // the previous row (a halo row when i == 0)
      const std::uint32_t le = i == 0 ? corner_l : __shfl_sync(kFull, hl, rp);
      const std::uint32_t re = i == 0 ? corner_r : __shfl_sync(kFull, hr, rp);
      std::uint32_t dl = __shfl_up_sync(kFull, prev, 1), dr = __shfl_down_sync(kFull, prev, 1);
      if (lane == 0) dl = le;
      if (lane == 31) dr = re;
      n = max(n, max(dl, dr));
    }
    raise_row(Jr, r, min(n, Ir[r]), chg, sc);
    prev = Jr[r];
  }
}

template <class T, class S, int Conn>
__device__ __forceinline__ void process_tile(S* J, const T* __restrict__ I, const OptArgs& a,
                                             TileCtl* out_ctl, std::uint32_t t) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned tx = t % a.tiles_x, ty = t / a.tiles_x;
  const std::int64_t nx = a.nx, ny = a.ny;
  const std::int64_t x0 = std::int64_t(tx) * kTile, y0 = std::int64_t(ty) * kTile;
  const std::int64_t x = x0 + lane;
  const bool xin = x < nx;
  const std::int64_t xl = x0 - 1, xr = x0 + kTile, yt = y0 - 1, yb = y0 + kTile;

  // J loads go through L2 (__ldcg): tiles next to this one are written during the round.
  // Pixels outside the image get J = I = 0 (the smallest key): they never change and never raise
  // anything.
  std::uint32_t Jr[kTile], Ir[kTile];
#pragma unroll
  for (int r = 0; r < kTile; ++r) {
    const std::int64_t y = y0 + r;
    const bool in = xin && y < ny;
    const std::int64_t p = y * nx + x;
    Jr[r] = in ? static_cast<std::uint32_t>(__ldcg(J + p)) : 0u;
    Ir[r] = in ? to_key(I[p]) : 0u;
  }
  // Halo: ht/hb the rows above/below (lane = column), hl/hr the columns left/right (lane = row),
  // and the four corners (8-connectivity).
  std::uint32_t ht = 0, hb = 0, hl = 0, hr = 0, c_tl = 0, c_tr = 0, c_bl = 0, c_br = 0;
  if (xin && yt >= 0) ht = __ldcg(J + yt * nx + x);
  if (xin && yb < ny) hb = __ldcg(J + yb * nx + x);
  {
    const std::int64_t yr = y0 + lane;
    if (yr < ny) {
      if (xl >= 0) hl = __ldcg(J + yr * nx + xl);
      if (xr < nx) hr = __ldcg(J + yr * nx + xr);
    }
  }
  if (Conn == 8) {
    if (yt >= 0 && xl >= 0) c_tl = __ldcg(J + yt * nx + xl);
    if (yt >= 0 && xr < nx) c_tr = __ldcg(J + yt * nx + xr);
    if (yb < ny && xl >= 0) c_bl = __ldcg(J + yb * nx + xl);
    if (yb < ny && xr < nx) c_br = __ldcg(J + yb * nx + xr);
  }

  std::uint32_t chg = 0;  // bit r: row r of this column changed
  bool again = true;
  while (again) {
    bool sc = false;
    row_pass<true>(Jr, Ir, hl, lane, chg, sc);
    row_pass<false>(Jr, Ir, hr, lane, chg, sc);
    column_pass<true, Conn>(Jr, Ir, ht, c_tl, c_tr, hl, hr, lane, chg, sc);
    column_pass<false, Conn>(Jr, Ir, hb, c_bl, c_br, hl, hr, lane, chg, sc);
    again = __any_sync(kFull, sc);
  }

  // Write back what changed (only pixels inside the image can have changed).
#pragma unroll
  for (int r = 0; r < kTile; ++r)
    if ((chg >> r) & 1u) J[(y0 + r) * nx + x] = static_cast<S>(Jr[r]);

  // Schedule the neighbours that see a changed border pixel. Row 31 / lane 31 are the bottom /
  // right borders of a full tile; a partial tile has no neighbour on those sides.
  const bool top = __any_sync(kFull, chg & 1u);
  const bool bottom = __any_sync(kFull, (chg >> (kTile - 1)) & 1u);
  const std::uint32_t c0 = __shfl_sync(kFull, chg, 0), c31 = __shfl_sync(kFull, chg, 31);
  switch (lane) {
    case 0: schedule(a, out_ctl, tx, ty, 0, -1, top); break;
    case 1: schedule(a, out_ctl, tx, ty, 0, 1, bottom); break;
    case 2: schedule(a, out_ctl, tx, ty, -1, 0, c0 != 0); break;
    case 3: schedule(a, out_ctl, tx, ty, 1, 0, c31 != 0); break;
    case 4: if (Conn == 8) schedule(a, out_ctl, tx, ty, -1, -1, c0 & 1u); break;
    case 5: if (Conn == 8) schedule(a, out_ctl, tx, ty, 1, -1, c31 & 1u); break;
    case 6: if (Conn == 8) schedule(a, out_ctl, tx, ty, -1, 1, (c0 >> (kTile - 1)) & 1u); break;
    case 7: if (Conn == 8) schedule(a, out_ctl, tx, ty, 1, 1, (c31 >> (kTile - 1)) & 1u); break;
    default: break;
  }
  __syncwarp();
}

template <class T, class S, int Conn>
__global__ void __launch_bounds__(kOptThreads) tile_round_kernel(S* J, const T* __restrict__ I, OptArgs a) {
  TileCtl* in_ctl = a.ctl + a.round % 3;
  TileCtl* out_ctl = a.ctl + (a.round + 1) % 3;
  const unsigned n_in = in_ctl->count;  // final: written by earlier launches only
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    // The slot of round + 2 was the input of round - 1 (finished); round + 1 appends to it.
    TileCtl* z = a.ctl + (a.round + 2) % 3;
    z->count = 0;
    z->cursor = 0;
    if (n_in > 0) atomicAdd(a.rounds_done, 1u);
  }
  const unsigned lane = threadIdx.x & 31u;
  for (;;) {
    unsigned w = 0;
    if (lane == 0) w = atomicAdd(&in_ctl->cursor, 1u);
    w = __shfl_sync(kFull, w, 0);
    if (w >= n_in) break;
    process_tile<T, S, Conn>(J, I, a, out_ctl, a.list_in[w]);
  }
}

// Round 0: every tile, in raster order; fresh counters.
__global__ void opt_start_kernel(std::uint32_t* list, unsigned ntiles, TileCtl* ctl) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < ntiles; i += gridDim.x * blockDim.x) list[i] = i;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ctl[0] = {ntiles, 0u};
    ctl[1] = {0u, 0u};
    ctl[2] = {0u, 0u};
  }
}

template <class T>
class OptImpl final : public TypedPlan<T> {
  using S = Key<T>;

 public:
  void setup(const Geom& g, const Options&, cudaStream_t) override {
    g_ = g;
    tiles_x_ = static_cast<unsigned>((g.nx + kTile - 1) / kTile);
    tiles_y_ = static_cast<unsigned>((g.ny + kTile - 1) / kTile);
    ntiles_ = tiles_x_ * tiles_y_;  // <= pixels < 2^32
    J_.allocate(static_cast<std::size_t>(g.n()));
    lists_.allocate(2 * static_cast<std::size_t>(ntiles_));
    stamp_.allocate(ntiles_);
    ctl_.allocate(3);
    scheduled_.allocate(1);
    rounds_done_.allocate(1);
    int per_sm = 0;
    if (g.conn == 8)
      REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tile_round_kernel<T, S, 8>, kOptThreads, 0));
    else
      REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tile_round_kernel<T, S, 4>, kOptThreads, 0));
    blocks_ = std::max(1, device_sm_count() * std::max(1, per_sm));
  }

  void compute(const T* marker, const T* mask, T* out, Stats& st, cudaStream_t s) override {
    const dim3 grid = grid2d(g_), block(kBlockX, kBlockY);
    {
      nvtx::Range r("init");
      init_kernel<T, S><<<grid, block, 0, s>>>(marker, mask, J_.get(), g_);
      REPIX_CUDA_LAUNCH();
      REPIX_CUDA(cudaMemsetAsync(stamp_.get(), 0, stamp_.bytes(), s));
      REPIX_CUDA(cudaMemsetAsync(scheduled_.get(), 0, scheduled_.bytes(), s));
      REPIX_CUDA(cudaMemsetAsync(rounds_done_.get(), 0, rounds_done_.bytes(), s));
      opt_start_kernel<<<std::min(1024u, (ntiles_ + 255) / 256), 256, 0, s>>>(lists_.get(), ntiles_, ctl_.get());
      REPIX_CUDA_LAUNCH();
    }
    {
      nvtx::Range r("propagate");
      OptArgs a;
      a.nx = g_.nx;
      a.ny = g_.ny;
      a.tiles_x = tiles_x_;
      a.tiles_y = tiles_y_;
      a.ctl = ctl_.get();
      a.stamp = stamp_.get();
      a.scheduled = scheduled_.get();
      a.rounds_done = rounds_done_.get();
      int round = 0;
      for (int batch = 1;; batch = std::min(2 * batch, kMaxBatch)) {
        for (int k = 0; k < batch; ++k, ++round) {
          a.round = round;
          a.list_in = lists_.get() + static_cast<std::size_t>(round % 2) * ntiles_;
          a.list_out = lists_.get() + static_cast<std::size_t>((round + 1) % 2) * ntiles_;
          if (g_.conn == 8)
            tile_round_kernel<T, S, 8><<<blocks_, kOptThreads, 0, s>>>(J_.get(), mask, a);
          else
            tile_round_kernel<T, S, 4><<<blocks_, kOptThreads, 0, s>>>(J_.get(), mask, a);
          REPIX_CUDA_LAUNCH();
        }
        if (read_device(&(ctl_.get() + round % 3)->count, s) == 0) break;  // next round's list
      }
      st.passes = read_device(rounds_done_.get(), s);
      st.initially_queued = ntiles_;
      st.total_queued = ntiles_ + static_cast<std::int64_t>(read_device(scheduled_.get(), s));
      st.overflow_reruns = 0;  // a round's list holds each tile at most once: it cannot overflow
    }
    finalize_kernel<T, S><<<grid, block, 0, s>>>(J_.get(), out, g_);
    REPIX_CUDA_LAUNCH();
  }

 private:
  Geom g_;
  unsigned tiles_x_ = 1, tiles_y_ = 1, ntiles_ = 1;
  int blocks_ = 1;
  DeviceBuffer<S> J_;
  DeviceBuffer<std::uint32_t> lists_;
  DeviceBuffer<int> stamp_;
  DeviceBuffer<TileCtl> ctl_;
  DeviceBuffer<unsigned long long> scheduled_;
  DeviceBuffer<unsigned> rounds_done_;
};

}  // namespace

Variant gpu_opt_variant() {
  return make_variant<OptImpl>("gpu-opt", "tile-wavefront",
                               "32x32 tiles stabilised in registers by warps (scan rows, walk columns); "
                               "only tiles whose halo changed are rescheduled");
}

}  // namespace repix::reconstruct::gpu
