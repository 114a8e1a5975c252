// Shared pieces of the GPU ladder variants (gpu-naive, gpu-register, gpu-shared-hist,
// gpu-cached), the part that plain C++ can see:
//
//  * __host__ __device__ helpers (float -> order-preserving key, rank search, tile
//    decomposition, the per-voxel introduction rules the kernels use), so that the CPU tests
//    check exactly the code the kernels run;
//  * LadderPlan, the DevicePlan base class of the ladder variants: binning, accumulators,
//    result download; each variant only supplies launch();
//  * make_ladder_variant<Plan>() and the ladder variants' factory functions.
//
// Device-only pieces (atomics, the block histogram, launch helpers) are in gpu_common.cuh.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/float_bits.hpp"  // and core/hd.hpp: REPIX_HD, REPIX_UNROLL
#include "core/gpu.hpp"
#include "core/image.hpp"
#include "ecc/cell_rules.hpp"
#include "ecc/ecc.hpp"

namespace repix::ecc::gpu {

// ---- float binning keys -------------------------------------------------------------------------

REPIX_HD std::uint32_t float_order_key(float f) {
  std::uint32_t u = float_bits(f);
  if (u == 0x80000000u) u = 0u;  // -0 -> +0 (on the bits: no flush-to-zero can interfere)
  return ordered_key(u);
}

// Inverse of float_order_key (gives +0 for the key of either zero).
REPIX_HD float float_from_order_key(std::uint32_t k) {
  return float_from_bits(unordered_key(k));
}

// Index of the first element >= key in the ascending array keys[0, m) (m when none).
REPIX_HD std::int64_t lower_bound_key(const std::uint32_t* keys, std::int64_t m,
                                      std::uint32_t key) {
  std::int64_t lo = 0, len = m;
  while (len > 0) {
    const std::int64_t half = len >> 1;
    if (keys[lo + half] < key) {
      lo += half + 1;
      len -= half + 1;
    } else {
      len = half;
    }
  }
  return lo;
}

// ---- geometry and tiles -------------------------------------------------------------------------

// Image extents and strides (x fastest). 64-bit throughout: shapes of 1024^3 and more exceed
// 2^31 voxels.
struct Geometry {
  std::int64_t nx = 1, ny = 1, nz = 1;
  std::int64_t sy = 1, sz = 1;  // strides of y and z (x stride is 1)
  static Geometry of(const Shape& s) {
    Geometry g;
    g.nx = s.nx;
    g.ny = s.ny;
    g.nz = s.nz;
    g.sy = s.nx;
    g.sz = s.nx * s.ny;
    return g;
  }
  REPIX_HD std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return x + sy * y + sz * z;
  }
};

// The image cut into tiles of bx*by*bz voxels, one tile per thread block (the paper's
// "rectangular patches"); tiles are numbered x fastest. A 1D grid walks the tiles, so no grid
// dimension limit applies whatever the shape (gridDim.y/z are capped at 65535).
struct TileGrid {
  int bx = 32, by = 8, bz = 1;
  std::int64_t tx = 1, ty = 1, tz = 1;  // tiles along each axis
  std::int64_t total = 1;

  static TileGrid make(const Shape& s, int bx, int by, int bz) {
    TileGrid t;
    t.bx = bx;
    t.by = by;
    t.bz = bz;
    t.tx = (s.nx + bx - 1) / bx;
    t.ty = (s.ny + by - 1) / by;
    t.tz = (s.nz + bz - 1) / bz;
    t.total = t.tx * t.ty * t.tz;
    return t;
  }
  // The voxel handled by thread (ix, iy, iz) of the block working on tile t.
  REPIX_HD void voxel(std::int64_t t, int ix, int iy, int iz, std::int64_t& x, std::int64_t& y,
                      std::int64_t& z) const {
    const std::int64_t r = t / tx;
    x = (t - r * tx) * bx + ix;
    y = (r % ty) * by + iy;
    z = (r / ty) * bz + iz;
  }
};

// The block shape of all ladder kernels: 256 threads, 32 along x (one warp per row: coalesced
// loads), 8 rows in 2D; 4 rows x 2 slices in 3D (a squarer tile re-reads fewer halo voxels).
TileGrid ladder_tiles(const Shape& s);

// Rules: 2 for 1D and 2D images, 3 for 3D images (also when nz == 1; the curve is the same).
inline int rule_dims(const Shape& s) { return s.ndim == 3 ? 3 : 2; }

// ---- per-voxel introduction rules ---------------------------------------------------------------
// Every rule below gives, for voxel p with value c, the same answer as cell_rules.hpp's
// neighbour_wins_3d + voxel_change (checked exhaustively by the CPU tests). `before` is whether
// neighbour (dx, dy, dz) comes earlier in linear order (x fastest, then y, then z): then p must
// be strictly smaller to win, otherwise smaller or equal.

REPIX_HD constexpr bool comes_before(int dx, int dy, int dz) {
  return dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)));
}

// wins[dz+1][dy+1][dx+1] as in cell_rules.hpp, with plain bounds-checked loads through `at`;
// in 2D only the dz = 0 plane is evaluated (the other planes are set and never read).
template <int Dims, class T, class At>
REPIX_HD void neighbour_wins(T c, At at, const Geometry& g, std::int64_t x, std::int64_t y,
                             std::int64_t z, bool wins[3][3][3]) {
  static_assert(Dims == 2 || Dims == 3, "2D or 3D rules");
  REPIX_UNROLL
  for (int dz = -1; dz <= 1; ++dz)
    REPIX_UNROLL
    for (int dy = -1; dy <= 1; ++dy)
      REPIX_UNROLL
      for (int dx = -1; dx <= 1; ++dx) {
        bool w = true;
        if (Dims == 3 || dz == 0) {
          const std::int64_t qx = x + dx, qy = y + dy, qz = z + dz;
          if ((dx | dy | dz) != 0 && qx >= 0 && qx < g.nx && qy >= 0 && qy < g.ny && qz >= 0 &&
              qz < g.nz) {
            const T v = at(qx, qy, qz);
            w = comes_before(dx, dy, dz) ? (c < v) : (c <= v);
          }
        }
        wins[dz + 1][dy + 1][dx + 1] = w;
      }
}

// Calls emit(+1 or -1) once per cell of p that p introduces: (-1)^dim(cell). The loop of
// Algorithm 1 (lines 5-7), cell by cell, for gpu-naive's one-atomic-per-cell update.
template <int Dims, class Emit>
REPIX_HD void for_each_introduced_cell(const bool wins[3][3][3], Emit&& emit) {
  constexpr int zr = Dims == 3 ? 1 : 0;
  REPIX_UNROLL
  for (int sz = -zr; sz <= zr; ++sz)
    REPIX_UNROLL
    for (int sy = -1; sy <= 1; ++sy)
      REPIX_UNROLL
      for (int sx = -1; sx <= 1; ++sx) {
        // The cell spans p along axes with s = 0 and lies on p's face s along the others; the
        // voxels containing it are p + o with o_a in {0, s_a}.
        bool introduced = true;
        REPIX_UNROLL
        for (int oz = 0; oz <= 1; ++oz)
          REPIX_UNROLL
          for (int oy = 0; oy <= 1; ++oy)
            REPIX_UNROLL
            for (int ox = 0; ox <= 1; ++ox) {
              if ((ox && !sx) || (oy && !sy) || (oz && !sz) || !(ox | oy | oz)) continue;
              introduced = introduced && wins[oz * sz + 1][oy * sy + 1][ox * sx + 1];
            }
        const int dim = (sx == 0) + (sy == 0) + (Dims == 3 ? (sz == 0) : 0);
        if (introduced) emit((dim & 1) ? -1 : 1);
      }
}

// The voxel's whole change (the same cells as above, summed): gpu-register's register sum.
template <int Dims>
REPIX_HD int introduced_change(const bool wins[3][3][3]) {
  int change = 0;
  for_each_introduced_cell<Dims>(wins, [&](int sign) { change += sign; });
  return change;
}

// Neighbour access for gpu-cached: no bounds-checking branches. A neighbour outside the image
// is replaced by the voxel itself (always a legal address, and one already in the cache) and
// its comparison is overridden by `!inside` -- select instructions, no divergence, no padded
// copy of the image. kReadOnlyCache = false gives plain loads, for images staged in shared
// memory (the batched small-image kernel): __ldg is for global memory only.
template <class T, bool kReadOnlyCache = true>
struct PredicatedNeighbours {
  const T* p;                       // the voxel itself
  std::int64_t sy, sz;              // strides of y and z
  bool xm, xp, ym, yp, zm, zp;      // whether the neighbour on that side exists

  REPIX_HD PredicatedNeighbours(const T* centre, const Geometry& g, std::int64_t x,
                                std::int64_t y, std::int64_t z)
      : p(centre), sy(g.sy), sz(g.sz), xm(x > 0), xp(x < g.nx - 1), ym(y > 0),
        yp(y < g.ny - 1), zm(z > 0), zp(z < g.nz - 1) {}

  // Whether p (value c) wins against neighbour (dx, dy, dz). Called with constants only, after
  // inlining and unrolling, so every test below folds away.
  REPIX_HD bool wins(T c, int dx, int dy, int dz) const {
    const bool in = (dx < 0 ? xm : dx > 0 ? xp : true) & (dy < 0 ? ym : dy > 0 ? yp : true) &
                    (dz < 0 ? zm : dz > 0 ? zp : true);
    const std::int64_t off = dx + sy * dy + sz * dz;
    const T* q = p + (in ? off : std::int64_t(0));
    T v;
    if constexpr (kReadOnlyCache) v = load_readonly(q);
    else v = *q;
    const bool w = comes_before(dx, dy, dz) ? (c < v) : (c <= v);
    return (!in) | w;
  }
};

// The paper's Algorithm 2 (lines 17-30): the 4-neighbours decide an edge and two vertices each,
// so their truth values are kept in registers; the diagonal neighbours are used once.
// Updates add truth values (no branches).
template <class T, class N>
REPIX_HD int cached_change_2d(T c, const N& nb) {
  const bool l = nb.wins(c, -1, 0, 0), r = nb.wins(c, 1, 0, 0);
  const bool t = nb.wins(c, 0, -1, 0), b = nb.wins(c, 0, 1, 0);
  int change = 1;                                   // the square
  change -= int(l) + int(r) + int(t) + int(b);      // its 4 edges
  change += int(l & t & nb.wins(c, -1, -1, 0));     // its 4 vertices
  change += int(r & t & nb.wins(c, 1, -1, 0));
  change += int(l & b & nb.wins(c, -1, 1, 0));
  change += int(r & b & nb.wins(c, 1, 1, 0));
  return change;
}

// The same generalised to 3D: the 6 face-neighbours decide a face, 4 edges and 4 vertices each
// (kept in registers); the 12 edge-neighbours an edge and 2 vertices each (kept in registers);
// the 8 corner neighbours one vertex each (loaded and used once). Index 0 is the - side, 1 the
// + side. The loops have constant trip counts and are unrolled.
template <class T, class N>
REPIX_HD int cached_change_3d(T c, const N& nb) {
  const bool fx[2] = {nb.wins(c, -1, 0, 0), nb.wins(c, 1, 0, 0)};
  const bool fy[2] = {nb.wins(c, 0, -1, 0), nb.wins(c, 0, 1, 0)};
  const bool fz[2] = {nb.wins(c, 0, 0, -1), nb.wins(c, 0, 0, 1)};
  int change = -1;  // the cube
  change += int(fx[0]) + int(fx[1]) + int(fy[0]) + int(fy[1]) + int(fz[0]) + int(fz[1]);  // faces
  bool exy[2][2], exz[2][2], eyz[2][2];  // [first axis side][second axis side]
  REPIX_UNROLL
  for (int i = 0; i < 2; ++i) {
    REPIX_UNROLL
    for (int j = 0; j < 2; ++j) {
      const int si = 2 * i - 1, sj = 2 * j - 1;
      exy[i][j] = nb.wins(c, si, sj, 0);
      exz[i][j] = nb.wins(c, si, 0, sj);
      eyz[i][j] = nb.wins(c, 0, si, sj);
      change -= int(fx[i] & fy[j] & exy[i][j]);  // edge along z
      change -= int(fx[i] & fz[j] & exz[i][j]);  // edge along y
      change -= int(fy[i] & fz[j] & eyz[i][j]);  // edge along x
    }
  }
  REPIX_UNROLL
  for (int i = 0; i < 2; ++i) {
    REPIX_UNROLL
    for (int j = 0; j < 2; ++j) {
      REPIX_UNROLL
      for (int k = 0; k < 2; ++k) {
        const bool shared = fx[i] & fy[j] & fz[k] & exy[i][j] & exz[i][k] & eyz[j][k];
        change += int(shared & nb.wins(c, 2 * i - 1, 2 * j - 1, 2 * k - 1));  // vertex
      }
    }
  }
  return change;
}

template <int Dims, class T, class N>
REPIX_HD int cached_change(T c, const N& nb) {
  if constexpr (Dims == 3)
    return cached_change_3d(c, nb);
  else
    return cached_change_2d(c, nb);
}

// ---- shared-memory histogram window -------------------------------------------------------------

// gpu-shared-hist / gpu-cached keep bins [0, window) in shared memory (int32 per bin: vcec, and
// the count for integer images). Both windows are 16 KiB per block, so 8 blocks of 256 threads
// (a full SM) fit in shared memory with room left for L1. uint8 needs only 256 bins.
constexpr int kSmemBinsWithCount = 2048;  // uint8 / uint16: vcec + count
constexpr int kSmemBinsVcecOnly = 4096;   // float ranks: vcec only (every rank is present)

// ---- the plan ---------------------------------------------------------------------------------

// Element type the kernels see: the image itself for integer images, the rank image for floats.
enum class Elem { u8, u16, u32 };

// What LadderPlan hands to a variant's launch().
struct LadderLaunch {
  Elem elem = Elem::u8;
  const void* image = nullptr;      // device, elem-typed
  Shape shape;
  int dims = 2;                     // rule_dims(shape)
  Geometry geom;
  TileGrid tiles;                   // ladder_tiles(shape)
  long long* vcec = nullptr;        // [nbins], zeroed before launch()
  unsigned long long* count = nullptr;  // [nbins] occurrences, zeroed; nullptr for float ranks
  std::int64_t nbins = 0;           // bins allocated (for floats an upper bound on the distinct count)
  const std::int64_t* d_nbins = nullptr;  // floats: the distinct count, on the device; else nullptr
  int sm_count = 1;
};

// Sorted distinct keys and the rank image of a float image, entirely on the device (CUB radix
// sort + unique, then a binary search per voxel). Workspace: two uint32 images plus CUB's temp
// storage, all allocated in setup().
class FloatRanker {
 public:
  void setup(std::int64_t n, int sm_count);
  // Asynchronous on `stream`: keys, sort, unique, ranks. Afterwards ranks() holds each voxel's
  // rank among the distinct values, distinct_keys()[0, *d_count()) the distinct keys ascending.
  void run(const float* d_in, cudaStream_t stream);
  const std::uint32_t* ranks() const { return ranks_; }
  const std::uint32_t* distinct_keys() const { return distinct_; }
  const std::int64_t* d_count() const { return count_.get(); }

 private:
  std::int64_t n_ = 0;
  int sm_count_ = 1;
  DeviceBuffer<std::uint32_t> a_, b_;
  DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  DeviceBuffer<std::int64_t> count_;
  std::uint32_t* ranks_ = nullptr;
  std::uint32_t* distinct_ = nullptr;
};

// Base class of the ladder variants. setup() allocates everything (accumulators; for float
// images the ranking workspace), compute() bins (floats), zeroes the accumulators and calls the
// variant's launch(), result() downloads and builds the curve.
class LadderPlan : public DevicePlan {
 public:
  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override;
  void compute(const DeviceInputs& in, cudaStream_t stream) override;
  Curve result(cudaStream_t stream) override;

 protected:
  // Launches the variant's kernel(s) on `stream`; each launch checked with REPIX_CUDA_LAUNCH.
  virtual void launch(const LadderLaunch& args, cudaStream_t stream) = 0;

 private:
  bool ready_ = false, computed_ = false;
  DType dtype_ = DType::u8;
  Shape shape_;
  std::int64_t nbins_ = 0;
  int sm_count_ = 1;
  DeviceBuffer<long long> vcec_;
  DeviceBuffer<unsigned long long> count_;
  FloatRanker ranker_;
};

// A Variant whose plans `make` builds: end to end a plan per call through run_plan_end_to_end
// under the NVTX range "ecc/<id>", and make_plan for kernel-scope timing. (The ladder, and the
// ablation steps after gpu-opt: make_opt_step_variant.)
inline Variant make_plan_variant(std::string id, std::string step, std::string description,
                                 std::function<std::unique_ptr<DevicePlan>()> make) {
  Variant v;
  v.id = std::move(id);
  v.gpu = true;
  v.step = std::move(step);
  v.description = std::move(description);
  const std::string nvtx_name = "ecc/" + v.id;
  v.run = [nvtx_name, make](const HostImage& img, const Options& opt) {
    const std::unique_ptr<DevicePlan> plan = make();
    return run_plan_end_to_end(*plan, img, nvtx_name, opt);
  };
  v.make_plan = std::move(make);
  return v;
}

// A Variant for plan type Plan (default-constructible LadderPlan subclass).
template <class Plan>
Variant make_ladder_variant(std::string id, std::string step, std::string description) {
  return make_plan_variant(std::move(id), std::move(step), std::move(description),
                           []() -> std::unique_ptr<DevicePlan> { return std::make_unique<Plan>(); });
}

// The ladder variants, one file each (registered in register.cpp).
Variant gpu_naive_variant();        // gpu_naive.cu
Variant gpu_register_variant();     // gpu_register.cu
Variant gpu_shared_hist_variant();  // gpu_shared_hist.cu
Variant gpu_cached_variant();       // gpu_cached.cu

}  // namespace repix::ecc::gpu
