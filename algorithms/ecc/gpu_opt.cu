// gpu-opt: one pass over the input, no sort of the data, no rank image, no padded copy.
//
// Each thread owns a run of 4 voxels along x (one 16-byte load of float32) and marches along the
// slowest axis, keeping the rows it needs in registers; the per-voxel rule is the byte-sliced
// word logic of gpu_opt_core.cuh. VCEC is accumulated per block in shared memory (uint8: direct
// bins; uint16/float32: an open-addressing hash keyed by the value's bits), merged at block end
// into a global accumulator (uint8/uint16: direct bins; float32: a global hash table whose
// overflow is detected and answered by an exact sort-based path). See NOTES-gpu-opt.md.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "ecc/gpu_opt.cuh"
#include "core/gpu/block_hash.cuh"
#include "ecc/gpu_opt_core.cuh"

namespace repix::ecc {
namespace opt {
namespace {

constexpr int kRun = 4;                    // voxels per thread along x
constexpr int kSegX = 32 * kRun;           // columns per warp (and per 3D tile)
constexpr int kWarps = 8;                  // warps per block
constexpr int kThreads = kWarps * 32;
constexpr int kLog2Smem = 12;              // block hash table: 4096 slots
constexpr int kSmemProbes = 16;
constexpr int kGlobalProbes = 64;
constexpr int kTileRows = kWarps + 2;      // 3D plane tile: rows y0-1 .. y0+8
constexpr int kRowStride = 136;            // [3] = x0-1, [4..131] = x0..x0+127, [132] = x0+128
constexpr int kPlaneFloats = kTileRows * kRowStride;
constexpr float kInf = __builtin_huge_valf();

struct GlobalAcc {
  std::uint32_t* keys = nullptr;           // float: hash table keys (kEmptyKey = free)
  unsigned long long* vcec = nullptr;      // float: per slot; integers: per value
  std::uint32_t* present = nullptr;        // integers: per value
  std::uint32_t* list = nullptr;           // float: occupied slots in insertion order
  std::uint32_t* counters = nullptr;       // [0] list length, [1] overflow flag
  int log2cap = 1;
};

struct EmitOut {
  std::uint32_t* keys = nullptr;           // ordered keys (float) or values (integers)
  int* changes = nullptr;
};

struct Geom {
  std::int64_t nx = 1, ny = 1, nz = 1;     // 2D: nz = 1, slabs are rows
  std::int64_t b0 = 0;                     // image slab of the buffer's first slab
  std::int64_t s0 = 0, s1 = 0;             // slabs to compute
  std::int64_t items_x = 1, items_y = 1, items_s = 1;
  std::int64_t chunk = 1;                  // slabs per work item
};

// ---- accumulation ---------------------------------------------------------------------------

__device__ __noinline__ void global_add_hash(const GlobalAcc& g, std::uint32_t key,
                                                long long v) {
  const std::uint32_t mask = (1u << g.log2cap) - 1u;
  std::uint32_t h = hash_slot(key, g.log2cap);
#pragma unroll 1
  for (int p = 0; p < kGlobalProbes; ++p) {
    const std::uint32_t prev = atomicCAS(&g.keys[h], kEmptyKey, key);
    if (prev == kEmptyKey) g.list[atomicAdd(&g.counters[0], 1u)] = h;
    if (prev == kEmptyKey || prev == key) {
      if (v != 0) atomicAdd(&g.vcec[h], static_cast<unsigned long long>(v));
      return;
    }
    h = (h + 1u) & mask;
  }
  atomicOr(&g.counters[1], 1u);
}

__device__ __forceinline__ void global_add_direct(const GlobalAcc& g, std::uint32_t key,
                                                  long long v) {
  if (v != 0) atomicAdd(&g.vcec[key], static_cast<unsigned long long>(v));
  atomicOr(&g.present[key], 1u);
}

template <class T>
__device__ __noinline__ void global_add(const GlobalAcc& g, std::uint32_t key, long long v) {
  if constexpr (sizeof(T) == 4) global_add_hash(g, key, v);
  else global_add_direct(g, key, v);
}

// Block-private accumulator in shared memory. uint8: direct bins; others: the shared-memory hash
// table of core/gpu (a key it cannot place goes to the global accumulator).
template <class T, bool kHash = (sizeof(T) > 1)>
struct BlockAcc;

template <class T>
struct BlockAcc<T, true> : ::repix::gpu::BlockHash<kLog2Smem, kSmemProbes> {
  __device__ void flush(const GlobalAcc& g) {
    ::repix::gpu::BlockHash<kLog2Smem, kSmemProbes>::flush(
        [&](std::uint32_t key, int sum) { global_add<T>(g, key, sum); });
  }
};

template <class T>
struct BlockAcc<T, false> {
  int vcec[256];
  unsigned present[256];
  __device__ void init() {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
      vcec[i] = 0;
      present[i] = 0;
    }
  }
  __device__ void flush(const GlobalAcc& g) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
      if (present[i]) atomicOr(&g.present[i], 1u);
      if (vcec[i]) atomicAdd(&g.vcec[i], static_cast<unsigned long long>(static_cast<long long>(vcec[i])));
    }
  }
};

// Per-thread front end: merges runs of equal keys, caches the last key's slot.
template <class T>
struct ThreadAcc {
  std::uint32_t pkey = kEmptyKey;  // pending run
  int psum = 0;
  std::uint32_t ckey = kEmptyKey;  // cached lookup
  int cslot = -1;

  __device__ __forceinline__ void flush(BlockAcc<T>& b, const GlobalAcc& g) {
    if (pkey == kEmptyKey) return;
    if constexpr (sizeof(T) == 1) {
      if (pkey != ckey) {
        atomicOr(&b.present[pkey], 1u);
        ckey = pkey;
      }
      if (psum != 0) atomicAdd(&b.vcec[pkey], psum);
    } else {
      if (pkey != ckey) {
        cslot = b.find(pkey);
        ckey = pkey;
      }
      if (cslot >= 0) {
        if (psum != 0) b.add(cslot, psum);
      } else {
        global_add<T>(g, pkey, psum);
      }
    }
    pkey = kEmptyKey;
    psum = 0;
  }
  __device__ __forceinline__ void add(BlockAcc<T>& b, const GlobalAcc& g, std::uint32_t key,
                                      int change) {
    if (key != pkey) {
      flush(b, g);
      pkey = key;
    }
    psum += change;
  }
};

// Adds the 4 voxels of a run (change bytes `s`, compute values c[1..4]).
template <class T, bool kEmit>
__device__ __forceinline__ void consume(std::uint32_t s, int bias, const float (&c)[6],
                                        unsigned valid, std::int64_t out_index, EmitOut& out,
                                        ThreadAcc<T>& ta, BlockAcc<T>& ba, const GlobalAcc& g) {
#pragma unroll
  for (int i = 0; i < kRun; ++i) {
    if (!((valid >> i) & 1u)) continue;
    const std::uint32_t key = key_of_compute<T>(c[i + 1]);
    const int change = byte_of(s, i) - bias;
    if constexpr (kEmit) {
      out.keys[out_index + i] = sizeof(T) == 4 ? ordered_key(key) : key;
      out.changes[out_index + i] = change;
    } else {
      ta.add(ba, g, key, change);
    }
  }
  if constexpr (!kEmit) ta.flush(ba, g);
}

// ---- loads ------------------------------------------------------------------------------------

// A run of 4 raw elements plus validity bits (invalid = outside the image: +inf once converted).
template <class T>
struct Raw4 {
  T v[4];
  unsigned valid = 0;
};

// Loads the run at `p` (4 elements); `mask` has bit i set when element i is inside the image.
template <class T, bool kVec>
__device__ __forceinline__ Raw4<T> load4(const T* p, unsigned mask) {
  Raw4<T> r;
  r.valid = mask;
  if constexpr (kVec) {
    // nx % 4 == 0 and 16-byte-aligned rows: a run is wholly inside (0xF) or wholly outside.
    if (mask) {
      if constexpr (sizeof(T) == 4) {
        const float4 t = __ldg(reinterpret_cast<const float4*>(p));
        r.v[0] = t.x; r.v[1] = t.y; r.v[2] = t.z; r.v[3] = t.w;
      } else if constexpr (sizeof(T) == 2) {
        const uint2 t = __ldg(reinterpret_cast<const uint2*>(p));
        r.v[0] = static_cast<T>(t.x & 0xFFFFu); r.v[1] = static_cast<T>(t.x >> 16);
        r.v[2] = static_cast<T>(t.y & 0xFFFFu); r.v[3] = static_cast<T>(t.y >> 16);
      } else {
        const unsigned t = __ldg(reinterpret_cast<const unsigned*>(p));
        r.v[0] = static_cast<T>(t & 0xFFu); r.v[1] = static_cast<T>((t >> 8) & 0xFFu);
        r.v[2] = static_cast<T>((t >> 16) & 0xFFu); r.v[3] = static_cast<T>(t >> 24);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) r.v[i] = T(0);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) r.v[i] = ((mask >> i) & 1u) ? __ldg(p + i) : T(0);
  }
  return r;
}

// Validity bits of the run starting at column x0.
__device__ __forceinline__ unsigned run_mask(std::int64_t x0, std::int64_t nx) {
  const std::int64_t left = nx - x0;
  return left >= 4 ? 0xFu : left <= 0 ? 0u : ((1u << left) - 1u);
}

template <class T>
__device__ __forceinline__ float load1(const T* p, bool ok) {
  return ok ? to_compute(__ldg(p)) : kInf;
}

template <class T>
__device__ __forceinline__ float conv(const Raw4<T>& r, int i) {
  return ((r.valid >> i) & 1u) ? to_compute(r.v[i]) : kInf;
}

// Row of 6 compute values (x0-1 .. x0+4) from this lane's 4 values; halos from the neighbour
// lanes, the warp's edge lanes take theirs from `left`/`right` (valid in lane 0 / lane 31).
__device__ __forceinline__ void assemble(float (&row)[6], float a, float b, float c, float d,
                                         float left, float right, int lane) {
  row[1] = a; row[2] = b; row[3] = c; row[4] = d;
  const float l = __shfl_up_sync(0xFFFFFFFFu, d, 1);
  const float r = __shfl_down_sync(0xFFFFFFFFu, a, 1);
  row[0] = lane == 0 ? left : l;
  row[5] = lane == 31 ? right : r;
}

// ---- 2D kernel --------------------------------------------------------------------------------
// Warp-level work items: a 128-column segment times `chunk` rows. Each thread keeps rows y-1, y,
// y+1 in registers and has the next three rows' loads in flight.

template <class T>
struct Row2 {
  Raw4<T> run;
  float left = kInf, right = kInf;  // lane 0 / lane 31 only
};

// Per-item constants of a lane's loads: column base pointer and validity along x.
template <class T>
struct Lane2 {
  const T* base;       // buf + x0 (row offsets are added per row)
  unsigned xmask;      // run validity
  bool lok, rok;       // halo columns x0-1 / x0+4 inside the image
};

template <class T, bool kVec>
__device__ __forceinline__ Row2<T> load_row2(const Lane2<T>& L, const Geom& g, std::int64_t y,
                                             std::int64_t ylim, int lane) {
  const bool ok = y >= 0 && y < g.ny && y <= ylim;
  const T* p = L.base + (ok ? (y - g.b0) * g.nx : 0);
  Row2<T> r;
  r.run = load4<T, kVec>(p, ok ? L.xmask : 0u);
  if (lane == 0) r.left = load1(p - 1, ok && L.lok);
  if (lane == 31) r.right = load1(p + 4, ok && L.rok);
  return r;
}

template <class T>
__device__ __forceinline__ void assemble2(float (&row)[6], const Row2<T>& r, int lane) {
  assemble(row, conv(r.run, 0), conv(r.run, 1), conv(r.run, 2), conv(r.run, 3), r.left, r.right,
           lane);
}

template <class T, bool kEmit>
__device__ __forceinline__ void step2(const float (&up)[6], const float (&mid)[6],
                                      const float (&dn)[6], std::int64_t y, std::int64_t yb,
                                      std::int64_t x0, const Geom& g, EmitOut& out,
                                      ThreadAcc<T>& ta, BlockAcc<T>& ba, const GlobalAcc& acc) {
  if (y >= yb) return;
  const std::uint32_t s = change4_2d(up, mid, dn);
  unsigned valid = 0;
#pragma unroll
  for (int i = 0; i < kRun; ++i) valid |= static_cast<unsigned>(x0 + i < g.nx) << i;
  consume<T, kEmit>(s, kBias2, mid, valid, (y - g.s0) * g.nx + x0, out, ta, ba, acc);
}

// kMinBlocks: the register budget (__launch_bounds__'s minimum resident blocks per SM). 2 gives
// 95 registers and no spills; 3 caps them at 80 with ~50 bytes of spills but 50 % more warps to
// hide the load latency (the kernel is latency-bound). Measured on the H100 (d721389, kernel
// scope, 8192^2): 3 is 1.26-1.32x faster on float32 uniform/GRF and uint8 (0.456 -> 0.363 ms,
// 0.837 -> 0.649 ms, 0.378 -> 0.287 ms), so it is the default; REPIX_ECC_OPT_2D_BLOCKS=2 keeps the
// other instantiation for the ablation.
template <class T, bool kVec, bool kEmit, int kMinBlocks = 3>
__global__ void __launch_bounds__(kThreads, kMinBlocks) ecc2d_kernel(const T* __restrict__ buf, Geom g,
                                                                     GlobalAcc acc, EmitOut out) {
  __shared__ BlockAcc<T> ba;
  if constexpr (!kEmit) {
    ba.init();
    __syncthreads();
  }
  ThreadAcc<T> ta;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t nitems = g.items_x * g.items_s;
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp; item < nitems;
       item += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    const std::int64_t ix = item % g.items_x, is = item / g.items_x;
    const std::int64_t x0 = ix * kSegX + lane * kRun;
    const std::int64_t ya = g.s0 + is * g.chunk, yb = min(ya + g.chunk, g.s1);
    Lane2<T> L;
    L.base = buf + x0;
    L.xmask = run_mask(x0, g.nx);
    L.lok = x0 >= 1 && x0 - 1 < g.nx;
    L.rok = x0 + 4 < g.nx;
    float A[6], B[6], C[6];
    {
      const Row2<T> r0 = load_row2<T, kVec>(L, g, ya - 1, yb, lane);
      const Row2<T> r1 = load_row2<T, kVec>(L, g, ya, yb, lane);
      const Row2<T> r2 = load_row2<T, kVec>(L, g, ya + 1, yb, lane);
      assemble2(A, r0, lane);
      assemble2(B, r1, lane);
      assemble2(C, r2, lane);
    }
    Row2<T> q0 = load_row2<T, kVec>(L, g, ya + 2, yb, lane);
    Row2<T> q1 = load_row2<T, kVec>(L, g, ya + 3, yb, lane);
    Row2<T> q2 = load_row2<T, kVec>(L, g, ya + 4, yb, lane);
    for (std::int64_t y = ya; y < yb; y += 3) {
      const Row2<T> n0 = load_row2<T, kVec>(L, g, y + 5, yb, lane);
      const Row2<T> n1 = load_row2<T, kVec>(L, g, y + 6, yb, lane);
      const Row2<T> n2 = load_row2<T, kVec>(L, g, y + 7, yb, lane);
      step2<T, kEmit>(A, B, C, y, yb, x0, g, out, ta, ba, acc);
      assemble2(A, q0, lane);
      step2<T, kEmit>(B, C, A, y + 1, yb, x0, g, out, ta, ba, acc);
      assemble2(B, q1, lane);
      step2<T, kEmit>(C, A, B, y + 2, yb, x0, g, out, ta, ba, acc);
      assemble2(C, q2, lane);
      q0 = n0;
      q1 = n1;
      q2 = n2;
    }
  }
  if constexpr (!kEmit) {
    __syncthreads();
    ba.flush(acc);
  }
}

// ---- 3D kernel --------------------------------------------------------------------------------
// Block-level work items: a 128 x 8 tile of columns times `chunk` planes (2.5D blocking). Plane
// z+1 of the tile (with a one-voxel halo) is staged in shared memory (two-plane ring, one
// barrier per plane); each thread keeps its 3 rows of planes z-1 and z in registers and reads
// its 3 rows of plane z+1 from shared memory. The next plane's global loads are in flight while
// the current plane is computed.

template <class T>
struct PlaneShare {       // this thread's part of one plane tile
  Raw4<T> a, b;           // interior runs: tile row tid/32 and (tid < 64) row 8 + tid/32
  float halo = kInf;      // tid < 20: row tid/2, left (even) or right (odd) halo column
};

// Per-item constants of this thread's plane loads (pointers without the plane offset).
template <class T>
struct Lane3 {
  const T* pa;
  const T* pb;
  const T* ph;
  unsigned ma = 0, mb = 0;  // run validity (x and y)
  bool hok = false;         // halo element inside the image
};

template <class T>
__device__ __forceinline__ Lane3<T> lane3(const T* buf, const Geom& g, std::int64_t tx0,
                                          std::int64_t ty0) {
  const int t = threadIdx.x;
  Lane3<T> L;
  const std::int64_t x = tx0 + (t & 31) * kRun;
  const std::int64_t ya = ty0 - 1 + (t >> 5), yb = ty0 - 1 + kWarps + (t >> 5);
  const std::int64_t yh = ty0 - 1 + (t >> 1), xh = (t & 1) ? tx0 + kSegX : tx0 - 1;
  const bool oka = ya >= 0 && ya < g.ny, okb = t < 64 && yb >= 0 && yb < g.ny;
  const bool okh = t < 2 * kTileRows && yh >= 0 && yh < g.ny && xh >= 0 && xh < g.nx;
  L.pa = buf + (oka ? ya * g.nx + x : 0);
  L.pb = buf + (okb ? yb * g.nx + x : 0);
  L.ph = buf + (okh ? yh * g.nx + xh : 0);
  L.ma = oka ? run_mask(x, g.nx) : 0u;
  L.mb = okb ? run_mask(x, g.nx) : 0u;
  L.hok = okh;
  return L;
}

template <class T, bool kVec>
__device__ __forceinline__ PlaneShare<T> load_plane(const Lane3<T>& L, const Geom& g,
                                                    std::int64_t z, std::int64_t zlim) {
  const bool zok = z >= 0 && z < g.nz && z <= zlim;
  const std::int64_t off = zok ? (z - g.b0) * g.ny * g.nx : 0;
  PlaneShare<T> p;
  p.a = load4<T, kVec>(L.pa + off, zok ? L.ma : 0u);
  p.b = load4<T, kVec>(L.pb + off, zok ? L.mb : 0u);
  p.halo = load1(L.ph + off, zok && L.hok);
  return p;
}

template <class T>
__device__ __forceinline__ void store_plane(float* P, const PlaneShare<T>& p) {
  const int t = threadIdx.x;
  {
    float4 v = make_float4(conv(p.a, 0), conv(p.a, 1), conv(p.a, 2), conv(p.a, 3));
    *reinterpret_cast<float4*>(P + (t >> 5) * kRowStride + 4 + (t & 31) * kRun) = v;
  }
  if (t < 64) {
    float4 v = make_float4(conv(p.b, 0), conv(p.b, 1), conv(p.b, 2), conv(p.b, 3));
    *reinterpret_cast<float4*>(P + (kWarps + (t >> 5)) * kRowStride + 4 + (t & 31) * kRun) = v;
  }
  if (t < 2 * kTileRows) P[(t >> 1) * kRowStride + ((t & 1) ? 4 + kSegX : 3)] = p.halo;
}

// This thread's rows y-1, y, y+1 (tile rows warp, warp+1, warp+2) of a staged plane.
__device__ __forceinline__ void read_rows(float (&R)[3][6], const float* P, int warp, int lane) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    const float* row = P + (warp + k) * kRowStride;
    const float4 v = *reinterpret_cast<const float4*>(row + 4 + lane * kRun);
    float left = kInf, right = kInf;
    if (lane == 0) left = row[3];
    if (lane == 31) right = row[4 + kSegX];
    assemble(R[k], v.x, v.y, v.z, v.w, left, right, lane);
  }
}

template <class T, bool kVec, bool kEmit>
__device__ __forceinline__ void step3(float (&Pm)[3][6], float (&P0)[3][6], float (&Pp)[3][6],
                                      float* planes, PlaneShare<T>& pend, const Lane3<T>& L,
                                      const Geom& g, std::int64_t z, std::int64_t zb,
                                      std::int64_t tx0, std::int64_t ty0, int warp, int lane,
                                      EmitOut& out, ThreadAcc<T>& ta, BlockAcc<T>& ba,
                                      const GlobalAcc& acc) {
  if (z >= zb) return;  // block-uniform
  // Plane z+1 (loaded during the previous step) into its ring slot; plane z+2's loads issued.
  store_plane(planes + ((z + 1) & 1) * kPlaneFloats, pend);
  pend = load_plane<T, kVec>(L, g, z + 2, zb);
  __syncthreads();
  read_rows(Pp, planes + ((z + 1) & 1) * kPlaneFloats, warp, lane);
  const std::uint32_t s = change4_3d(Pm, P0, Pp);
  const std::int64_t y = ty0 + warp, x0 = tx0 + lane * kRun;
  unsigned valid = 0;
  if (y < g.ny) {
#pragma unroll
    for (int i = 0; i < kRun; ++i) valid |= static_cast<unsigned>(x0 + i < g.nx) << i;
  }
  consume<T, kEmit>(s, kBias3, P0[1], valid, ((z - g.s0) * g.ny + y) * g.nx + x0, out, ta, ba,
                    acc);
}

template <class T, bool kVec, bool kEmit>
__global__ void __launch_bounds__(kThreads, 2) ecc3d_kernel(const T* __restrict__ buf, Geom g,
                                                            GlobalAcc acc, EmitOut out) {
  __shared__ BlockAcc<T> ba;
  __shared__ __align__(16) float planes[2 * kPlaneFloats];
  if constexpr (!kEmit) ba.init();
  ThreadAcc<T> ta;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t tiles = g.items_x * g.items_y, nitems = tiles * g.items_s;
  for (std::int64_t item = blockIdx.x; item < nitems; item += gridDim.x) {
    const std::int64_t it = item % tiles, is = item / tiles;
    const std::int64_t tx0 = (it % g.items_x) * kSegX, ty0 = (it / g.items_x) * kWarps;
    const std::int64_t za = g.s0 + is * g.chunk, zb = min(za + g.chunk, g.s1);
    float P0[3][6], P1[3][6], P2[3][6];
    __syncthreads();  // previous item's reads of the ring (and the table init) are done
    const Lane3<T> L = lane3(buf, g, tx0, ty0);
    store_plane(planes + ((za - 1) & 1) * kPlaneFloats, load_plane<T, kVec>(L, g, za - 1, zb));
    store_plane(planes + (za & 1) * kPlaneFloats, load_plane<T, kVec>(L, g, za, zb));
    PlaneShare<T> pend = load_plane<T, kVec>(L, g, za + 1, zb);
    __syncthreads();
    read_rows(P0, planes + ((za - 1) & 1) * kPlaneFloats, warp, lane);
    read_rows(P1, planes + (za & 1) * kPlaneFloats, warp, lane);
    __syncthreads();  // the first step overwrites plane za-1's slot
    for (std::int64_t z = za; z < zb; z += 3) {
      step3<T, kVec, kEmit>(P0, P1, P2, planes, pend, L, g, z, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
      step3<T, kVec, kEmit>(P1, P2, P0, planes, pend, L, g, z + 1, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
      step3<T, kVec, kEmit>(P2, P0, P1, planes, pend, L, g, z + 2, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
    }
  }
  if constexpr (!kEmit) {
    __syncthreads();
    ba.flush(acc);
  }
}

// ---- finishing (float) -------------------------------------------------------------------------

// Copies the occupied slots (in insertion order) out of the global table and clears them, so the
// table is empty again for the next compute() without a full memset.
__global__ void gather_kernel(GlobalAcc acc, std::uint32_t* out_keys, long long* out_vcec) {
  const std::uint32_t n = acc.counters[0];
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const std::uint32_t slot = acc.list[i];
    out_keys[i] = acc.keys[slot];
    out_vcec[i] = static_cast<long long>(acc.vcec[slot]);
    acc.keys[slot] = kEmptyKey;
    acc.vcec[slot] = 0;
  }
}

__global__ void fill_keys_kernel(std::uint32_t* keys, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    keys[i] = kEmptyKey;
}

// ---- launch plumbing -----------------------------------------------------------------------------

using KernelFn = void (*)(const void*, Geom, GlobalAcc, EmitOut);

// The 2D kernel's register budget (see ecc2d_kernel): 3 unless REPIX_ECC_OPT_2D_BLOCKS=2.
int ecc2d_min_blocks() {
  static const int v = [] {
    const char* e = std::getenv("REPIX_ECC_OPT_2D_BLOCKS");
    return e && std::string(e) == "2" ? 2 : 3;
  }();
  return v;
}

template <class T, int kDims, bool kVec, bool kEmit>
KernelFn kernel_ptr() {
  if constexpr (kDims == 2)
    return ecc2d_min_blocks() == 3 ? reinterpret_cast<KernelFn>(&ecc2d_kernel<T, kVec, kEmit, 3>)
                                   : reinterpret_cast<KernelFn>(&ecc2d_kernel<T, kVec, kEmit, 2>);
  else return reinterpret_cast<KernelFn>(&ecc3d_kernel<T, kVec, kEmit>);
}

template <class T, int kDims>
KernelFn pick_kernel(bool vec, bool emit) {
  if (vec) return emit ? kernel_ptr<T, kDims, true, true>() : kernel_ptr<T, kDims, true, false>();
  return emit ? kernel_ptr<T, kDims, false, true>() : kernel_ptr<T, kDims, false, false>();
}

KernelFn pick_kernel(DType dt, int dims, bool vec, bool emit) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return dims == 2 ? pick_kernel<T, 2>(vec, emit) : pick_kernel<T, 3>(vec, emit);
  });
}

std::size_t next_pow2(std::size_t v) {
  std::size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
int log2_exact(std::size_t p) {
  int l = 0;
  while ((std::size_t(1) << l) < p) ++l;
  return l;
}

constexpr std::size_t kMaxGlobalSlots = std::size_t(1) << 21;
constexpr std::int64_t kFallbackVoxels = std::int64_t(1) << 23;

std::size_t auto_global_slots(const Shape& sh, bool /*streaming*/) {
  // An image of n voxels has at most n distinct values (streamed or not): 2n slots never
  // overflow; larger images get 2^21 slots and may take the fallback.
  return std::min(kMaxGlobalSlots, next_pow2(std::max<std::size_t>(1024, 2 * static_cast<std::size_t>(sh.size()))));
}

std::int64_t fallback_voxels(const Shape& sh) {
  return std::min<std::int64_t>(sh.size(), std::max<std::int64_t>(kFallbackVoxels, slab_elems(sh)));
}

template <class T>
void* raw(DeviceBuffer<T>& b) { return static_cast<void*>(b.get()); }

// (value, VCEC) pairs read back by finish_queued() before the count of distinct values is known:
// 48 KiB, a 128^3 GRF image's ~1000 values with room to spare.
constexpr std::size_t kQueuedPairs = 4096;

// The curve of the float path's gathered pairs (keys are float bits, in table order).
Curve curve_from_pairs(const std::uint32_t* k, const long long* v, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ordered_key(k[a]) < ordered_key(k[b]);
  });
  Curve c;
  std::int64_t acc = 0;
  c.values.reserve(n);
  c.ecc.reserve(n);
  for (std::size_t i : order) {
    acc += v[i];
    c.values.push_back(float_from_bits(k[i]));
    c.ecc.push_back(acc);
  }
  return c;
}

// The curve of the integer path's direct bins (VCEC and occurrence per value).
Curve curve_from_direct_bins(const unsigned long long* v, const std::uint32_t* p, std::size_t nb) {
  std::vector<float> values(nb);
  std::vector<std::int64_t> vc(nb), pr(nb);
  for (std::size_t i = 0; i < nb; ++i) {
    values[i] = static_cast<float>(i);
    vc[i] = static_cast<std::int64_t>(v[i]);
    pr[i] = p[i] ? 1 : 0;
  }
  return curve_from_bins(values, vc, pr);
}

}  // namespace

struct Engine::Impl {
  DType dtype = DType::f32;
  Shape shape;
  int dims = 2;
  bool streaming = false;
  bool ready = false;
  std::size_t cap_override = 0;
  int sms = 1;
  int blocks_per_sm = 1;   // accumulate kernel
  int emit_blocks_per_sm = 1;
  KernelFn kern = nullptr, emit_kern = nullptr;

  // Global accumulator.
  std::size_t slots = 0;   // float hash capacity
  DeviceBuffer<std::uint32_t> keys, present, list, counters;
  DeviceBuffer<unsigned long long> vcec;
  DeviceBuffer<std::uint32_t> out_keys;
  DeviceBuffer<long long> out_vcec;
  HostBuffer pinned;       // counters read-back
  std::uint32_t n_distinct = 0;

  // finish_queued() / collect(): pinned read-back of the counters and the first queued_pairs
  // pairs (float), or of the bins (integers). Allocated on first use (only batches use it).
  HostBuffer queued;
  std::size_t queued_pairs = kQueuedPairs;  // grows to what an image of the batch needed
  std::size_t queued_spec = 0;              // pairs the pending read-back copies
  bool queued_pending = false;

  // Fallback.
  std::int64_t fb_cap = 0;
  DeviceBuffer<std::uint32_t> fb_k0, fb_k1;
  DeviceBuffer<int> fb_v0, fb_v1;
  DeviceBuffer<unsigned char> fb_temp;
  DeviceBuffer<long long> fb_nruns;
  std::size_t fb_temp_bytes = 0;
  std::vector<std::uint32_t> fb_keys;   // merged on the host, ascending ordered keys
  std::vector<std::int64_t> fb_vcec;

  std::size_t nbins() const { return dtype == DType::u8 ? 256 : 65536; }
  bool hashed_global() const { return dtype == DType::f32; }

  GlobalAcc acc() const {
    GlobalAcc g;
    g.keys = keys.get();
    g.vcec = vcec.get();
    g.present = present.get();
    g.list = list.get();
    g.counters = counters.get();
    g.log2cap = hashed_global() ? log2_exact(slots) : 1;
    return g;
  }

  void alloc_table() {
    if (hashed_global()) {
      slots = cap_override ? std::max<std::size_t>(2, next_pow2(cap_override)) : auto_global_slots(shape, streaming);
      keys.allocate(slots);
      vcec.allocate(slots);
      list.allocate(slots);
      out_keys.allocate(slots);
      out_vcec.allocate(slots);
      fill_keys_kernel<<<256, 256>>>(keys.get(), slots);
      REPIX_CUDA_LAUNCH();
      REPIX_CUDA(cudaMemset(vcec.get(), 0, vcec.bytes()));
      REPIX_CUDA(cudaMemset(counters.get(), 0, counters.bytes()));
      REPIX_CUDA(cudaDeviceSynchronize());
    }
  }

  // Launch geometry for slabs [s0, s1).
  Geom geom(std::int64_t b0, std::int64_t s0, std::int64_t s1, int bps, std::int64_t& grid) const {
    Geom g;
    g.nx = shape.nx;
    g.ny = dims == 3 ? shape.ny : shape.ny;
    g.nz = dims == 3 ? shape.nz : 1;
    g.b0 = b0;
    g.s0 = s0;
    g.s1 = s1;
    const std::int64_t slabs = s1 - s0;
    const std::int64_t slots_b = static_cast<std::int64_t>(bps) * sms;
    g.items_x = (shape.nx + kSegX - 1) / kSegX;
    if (dims == 2) {
      g.items_y = 1;
      const std::int64_t warp_slots = slots_b * kWarps;
      // ~2 items per warp slot, at least 24 rows per item (warm-up rows are 2 per item).
      std::int64_t chunk = (g.items_x * slabs + 2 * warp_slots - 1) / (2 * warp_slots);
      chunk = std::max<std::int64_t>(chunk, 24);
      chunk = (chunk + 2) / 3 * 3;
      g.chunk = std::max<std::int64_t>(1, std::min(chunk, slabs));
      g.items_s = (slabs + g.chunk - 1) / g.chunk;
      const std::int64_t items = g.items_x * g.items_s;
      grid = std::min<std::int64_t>((items + kWarps - 1) / kWarps, slots_b);
    } else {
      g.items_y = (shape.ny + kWarps - 1) / kWarps;
      const std::int64_t tiles = g.items_x * g.items_y;
      std::int64_t chunk = (tiles * slabs + slots_b - 1) / slots_b;  // ~1 item per block slot
      chunk = std::max<std::int64_t>(chunk, 16);
      chunk = (chunk + 2) / 3 * 3;
      g.chunk = std::max<std::int64_t>(1, std::min(chunk, slabs));
      g.items_s = (slabs + g.chunk - 1) / g.chunk;
      grid = std::min<std::int64_t>(tiles * g.items_s, slots_b);
    }
    // Block-private int32 sums stay far from overflow: at most 2^26 voxels per block.
    const std::int64_t voxels = slabs * slab_elems(shape);
    grid = std::max<std::int64_t>(grid, (voxels >> 26) + 1);
    grid = std::max<std::int64_t>(1, std::min<std::int64_t>(grid, dims == 2 ? (g.items_x * g.items_s + kWarps - 1) / kWarps : g.items_x * g.items_y * g.items_s));
    return g;
  }

  bool vec_ok(const void* buf) const {
    return shape.nx % 4 == 0 && (reinterpret_cast<std::uintptr_t>(buf) % 16) == 0;
  }
};

Engine::Engine() : impl_(new Impl) {}
Engine::~Engine() = default;

void Engine::setup(DType dtype, const Shape& shape, bool streaming) {
  Impl& m = *impl_;
  if (!gpu_available()) throw Error("this variant needs a GPU: " + gpu_unavailable_reason());
  m.dtype = dtype;
  m.shape = shape;
  m.dims = shape.ndim == 3 ? 3 : 2;
  m.streaming = streaming;
  m.queued_pairs = kQueuedPairs;
  m.queued_pending = false;
  int dev = 0;
  REPIX_CUDA(cudaGetDevice(&dev));
  REPIX_CUDA(cudaDeviceGetAttribute(&m.sms, cudaDevAttrMultiProcessorCount, dev));
  // Occupancy of the vectorised variant (the scalar one uses the same resources within a few
  // registers); the grid never exceeds what is resident at once.
  m.kern = pick_kernel(dtype, m.dims, true, false);
  m.emit_kern = pick_kernel(dtype, m.dims, true, true);
  REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&m.blocks_per_sm, reinterpret_cast<const void*>(m.kern), kThreads, 0));
  REPIX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&m.emit_blocks_per_sm, reinterpret_cast<const void*>(m.emit_kern), kThreads, 0));
  m.blocks_per_sm = std::max(1, m.blocks_per_sm);
  m.emit_blocks_per_sm = std::max(1, m.emit_blocks_per_sm);

  m.counters.allocate(2);
  REPIX_CUDA(cudaMemset(m.counters.get(), 0, m.counters.bytes()));
  if (m.pinned.bytes() == 0) m.pinned = HostBuffer(2 * sizeof(std::uint32_t), true);
  if (m.hashed_global()) {
    m.present.reset();
    m.alloc_table();
    m.fb_cap = fallback_voxels(shape);
    m.fb_k0.allocate(m.fb_cap);
    m.fb_k1.allocate(m.fb_cap);
    m.fb_v0.allocate(m.fb_cap);
    m.fb_v1.allocate(m.fb_cap);
    m.fb_nruns.allocate(1);
    cub::DoubleBuffer<std::uint32_t> dk(m.fb_k0.get(), m.fb_k1.get());
    cub::DoubleBuffer<int> dv(m.fb_v0.get(), m.fb_v1.get());
    std::size_t sort_bytes = 0, reduce_bytes = 0;
    REPIX_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, dk, dv, m.fb_cap));
    REPIX_CUDA(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, m.fb_k0.get(), m.fb_k1.get(),
                                              m.fb_v0.get(), m.fb_v1.get(), m.fb_nruns.get(),
                                              ::cuda::std::plus<int>(), m.fb_cap));
    m.fb_temp_bytes = std::max(sort_bytes, reduce_bytes);
    m.fb_temp.allocate(std::max<std::size_t>(m.fb_temp_bytes, 16));
  } else {
    m.keys.reset();
    m.list.reset();
    m.vcec.allocate(m.nbins());
    m.present.allocate(m.nbins());
    REPIX_CUDA(cudaMemset(m.vcec.get(), 0, m.vcec.bytes()));
    REPIX_CUDA(cudaMemset(m.present.get(), 0, m.present.bytes()));
  }
  // The memsets above ran on the legacy default stream, which the plan's non-blocking streams
  // do not wait for (cudaMemset returns before it is done).
  REPIX_CUDA(cudaDeviceSynchronize());
  m.ready = true;
}

void Engine::set_global_capacity(std::size_t slots) {
  impl_->cap_override = slots;
  if (impl_->ready) impl_->alloc_table();
}

void Engine::reset(cudaStream_t s) {
  Impl& m = *impl_;
  m.n_distinct = 0;
  REPIX_CUDA(cudaMemsetAsync(m.counters.get(), 0, m.counters.bytes(), s));
  if (!m.hashed_global()) {
    REPIX_CUDA(cudaMemsetAsync(m.vcec.get(), 0, m.vcec.bytes(), s));
    REPIX_CUDA(cudaMemsetAsync(m.present.get(), 0, m.present.bytes(), s));
  }
  // Float: the table is empty already (cleared by finish()'s gather).
}

static void launch(KernelFn k, std::int64_t grid, cudaStream_t s, const void* buf, const Geom& g,
                   const GlobalAcc& acc, const EmitOut& out) {
  void* args[] = {const_cast<void**>(&buf), const_cast<Geom*>(&g), const_cast<GlobalAcc*>(&acc),
                  const_cast<EmitOut*>(&out)};
  REPIX_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(static_cast<unsigned>(grid)),
                              dim3(kThreads), args, 0, s));
}

void Engine::accumulate(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                        cudaStream_t s) {
  Impl& m = *impl_;
  if (s1 <= s0) return;
  std::int64_t grid = 1;
  const Geom g = m.geom(b0, s0, s1, m.blocks_per_sm, grid);
  const KernelFn k = pick_kernel(m.dtype, m.dims, m.vec_ok(buf), false);
  launch(k, grid, s, buf, g, m.acc(), EmitOut{});
}

bool Engine::finish(cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.hashed_global()) return false;
  gather_kernel<<<std::max(1, m.sms * 2), 256, 0, s>>>(m.acc(), m.out_keys.get(), m.out_vcec.get());
  REPIX_CUDA_LAUNCH();
  auto* host = static_cast<std::uint32_t*>(m.pinned.data());
  REPIX_CUDA(cudaMemcpyAsync(host, m.counters.get(), 2 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaMemsetAsync(m.counters.get(), 0, m.counters.bytes(), s));
  REPIX_CUDA(cudaStreamSynchronize(s));
  m.n_distinct = host[0];
  return host[1] != 0;
}

Curve Engine::curve(cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.hashed_global()) {
    const std::size_t nb = m.nbins();
    std::vector<unsigned long long> v(nb);
    std::vector<std::uint32_t> p(nb);
    REPIX_CUDA(cudaMemcpyAsync(v.data(), m.vcec.get(), nb * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemcpyAsync(p.data(), m.present.get(), nb * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    return curve_from_direct_bins(v.data(), p.data(), nb);
  }
  const std::size_t n = m.n_distinct;
  std::vector<std::uint32_t> k(n);
  std::vector<long long> v(n);
  if (n) {
    REPIX_CUDA(cudaMemcpyAsync(k.data(), m.out_keys.get(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemcpyAsync(v.data(), m.out_vcec.get(), n * sizeof(long long), cudaMemcpyDeviceToHost, s));
  }
  REPIX_CUDA(cudaStreamSynchronize(s));
  return curve_from_pairs(k.data(), v.data(), n);
}

void Engine::finish_queued(cudaStream_t s) {
  Impl& m = *impl_;
  if (m.queued_pending) throw Error("internal: ecc gpu-opt finish_queued() twice without collect()");
  if (m.hashed_global()) {
    // Counters, then queued_spec keys, then queued_spec VCECs (8-aligned: queued_spec is even).
    m.queued_spec = std::min(m.queued_pairs, m.slots);
    const std::size_t bytes = 2 * sizeof(std::uint32_t) + m.queued_spec * (sizeof(std::uint32_t) + sizeof(long long));
    if (m.queued.bytes() < bytes) m.queued = HostBuffer(bytes, true);
    auto* base = static_cast<unsigned char*>(m.queued.data());
    gather_kernel<<<std::max(1, m.sms * 2), 256, 0, s>>>(m.acc(), m.out_keys.get(), m.out_vcec.get());
    REPIX_CUDA_LAUNCH();
    REPIX_CUDA(cudaMemcpyAsync(base, m.counters.get(), 2 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemcpyAsync(base + 8, m.out_keys.get(), m.queued_spec * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemcpyAsync(base + 8 + m.queued_spec * sizeof(std::uint32_t), m.out_vcec.get(),
                               m.queued_spec * sizeof(long long), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemsetAsync(m.counters.get(), 0, m.counters.bytes(), s));
  } else {
    // VCEC per value, then the occurrence flags.
    const std::size_t nb = m.nbins(), bytes = nb * (sizeof(unsigned long long) + sizeof(std::uint32_t));
    if (m.queued.bytes() < bytes) m.queued = HostBuffer(bytes, true);
    auto* base = static_cast<unsigned char*>(m.queued.data());
    REPIX_CUDA(cudaMemcpyAsync(base, m.vcec.get(), nb * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaMemcpyAsync(base + nb * sizeof(unsigned long long), m.present.get(), nb * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost, s));
  }
  m.queued_pending = true;
}

bool Engine::collect(cudaStream_t s, Curve& out) {
  Impl& m = *impl_;
  if (!m.queued_pending) throw Error("internal: ecc gpu-opt collect() without finish_queued()");
  m.queued_pending = false;
  REPIX_CUDA(cudaStreamSynchronize(s));
  const auto* base = static_cast<const unsigned char*>(m.queued.data());
  if (!m.hashed_global()) {
    const std::size_t nb = m.nbins();
    out = curve_from_direct_bins(reinterpret_cast<const unsigned long long*>(base),
                                 reinterpret_cast<const std::uint32_t*>(base + nb * sizeof(unsigned long long)), nb);
    return true;
  }
  const auto* counters = reinterpret_cast<const std::uint32_t*>(base);
  if (counters[1] != 0) return false;
  const std::size_t n = counters[0], spec = m.queued_spec;
  const auto* keys = reinterpret_cast<const std::uint32_t*>(base + 8);
  const auto* vcec = reinterpret_cast<const long long*>(base + 8 + spec * sizeof(std::uint32_t));
  if (n <= spec) {
    out = curve_from_pairs(keys, vcec, n);
    return true;
  }
  // More distinct values than were read back: the rest from the gathered arrays (untouched
  // until the next pass), and later images read back this many up front.
  std::vector<std::uint32_t> k(keys, keys + spec);
  std::vector<long long> v(vcec, vcec + spec);
  k.resize(n);
  v.resize(n);
  REPIX_CUDA(cudaMemcpyAsync(k.data() + spec, m.out_keys.get() + spec, (n - spec) * sizeof(std::uint32_t),
                             cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaMemcpyAsync(v.data() + spec, m.out_vcec.get() + spec, (n - spec) * sizeof(long long),
                             cudaMemcpyDeviceToHost, s));
  REPIX_CUDA(cudaStreamSynchronize(s));
  out = curve_from_pairs(k.data(), v.data(), n);
  m.queued_pairs = std::min(m.slots, next_pow2(n));
  return true;
}

void Engine::fallback_begin() {
  impl_->fb_keys.clear();
  impl_->fb_vcec.clear();
}

void Engine::fallback_add(const void* buf, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                          cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.hashed_global()) throw Error("internal: ecc gpu-opt fallback is for float32 only");
  nvtx::Range range("fallback");
  const std::int64_t per_slab = slab_elems(m.shape);
  const std::int64_t step = std::max<std::int64_t>(1, m.fb_cap / per_slab);
  const bool vec = m.vec_ok(buf);
  const KernelFn k = pick_kernel(m.dtype, m.dims, vec, true);
  for (std::int64_t c0 = s0; c0 < s1; c0 += step) {
    const std::int64_t c1 = std::min(s1, c0 + step);
    const std::int64_t n = (c1 - c0) * per_slab;
    std::int64_t grid = 1;
    const Geom g = m.geom(b0, c0, c1, m.emit_blocks_per_sm, grid);
    EmitOut out;
    out.keys = m.fb_k0.get();
    out.changes = m.fb_v0.get();
    launch(k, grid, s, buf, g, m.acc(), out);
    cub::DoubleBuffer<std::uint32_t> dk(m.fb_k0.get(), m.fb_k1.get());
    cub::DoubleBuffer<int> dv(m.fb_v0.get(), m.fb_v1.get());
    std::size_t bytes = m.fb_temp_bytes;
    REPIX_CUDA(cub::DeviceRadixSort::SortPairs(m.fb_temp.get(), bytes, dk, dv, n, 0, 32, s));
    std::uint32_t* uk = dk.Current() == m.fb_k0.get() ? m.fb_k1.get() : m.fb_k0.get();
    int* uv = dv.Current() == m.fb_v0.get() ? m.fb_v1.get() : m.fb_v0.get();
    bytes = m.fb_temp_bytes;
    REPIX_CUDA(cub::DeviceReduce::ReduceByKey(m.fb_temp.get(), bytes, dk.Current(), uk,
                                              dv.Current(), uv, m.fb_nruns.get(),
                                              ::cuda::std::plus<int>(), n, s));
    long long runs = 0;
    REPIX_CUDA(cudaMemcpyAsync(&runs, m.fb_nruns.get(), sizeof(long long), cudaMemcpyDeviceToHost, s));
    REPIX_CUDA(cudaStreamSynchronize(s));
    std::vector<std::uint32_t> ck(static_cast<std::size_t>(runs));
    std::vector<int> cv(static_cast<std::size_t>(runs));
    if (runs) {
      REPIX_CUDA(cudaMemcpyAsync(ck.data(), uk, runs * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
      REPIX_CUDA(cudaMemcpyAsync(cv.data(), uv, runs * sizeof(int), cudaMemcpyDeviceToHost, s));
      REPIX_CUDA(cudaStreamSynchronize(s));
    }
    // Merge two ascending key lists.
    std::vector<std::uint32_t> mk;
    std::vector<std::int64_t> mv;
    mk.reserve(m.fb_keys.size() + ck.size());
    mv.reserve(m.fb_keys.size() + ck.size());
    std::size_t a = 0, b = 0;
    while (a < m.fb_keys.size() || b < ck.size()) {
      if (b == ck.size() || (a < m.fb_keys.size() && m.fb_keys[a] < ck[b])) {
        mk.push_back(m.fb_keys[a]);
        mv.push_back(m.fb_vcec[a++]);
      } else if (a == m.fb_keys.size() || ck[b] < m.fb_keys[a]) {
        mk.push_back(ck[b]);
        mv.push_back(cv[b++]);
      } else {
        mk.push_back(ck[b]);
        mv.push_back(m.fb_vcec[a++] + cv[b++]);
      }
    }
    m.fb_keys.swap(mk);
    m.fb_vcec.swap(mv);
  }
}

Curve Engine::fallback_curve() const {
  const Impl& m = *impl_;
  Curve c;
  std::int64_t acc = 0;
  c.values.reserve(m.fb_keys.size());
  c.ecc.reserve(m.fb_keys.size());
  for (std::size_t i = 0; i < m.fb_keys.size(); ++i) {
    acc += m.fb_vcec[i];
    c.values.push_back(float_from_bits(unordered_key(m.fb_keys[i])));
    c.ecc.push_back(acc);
  }
  return c;
}

std::size_t Engine::workspace_bytes(DType dtype, const Shape& shape, bool streaming) {
  if (dtype != DType::f32) return 65536 * 12 + 64;
  const std::size_t slots = auto_global_slots(shape, streaming);
  const std::size_t fb = static_cast<std::size_t>(fallback_voxels(shape));
  // table: keys, vcec, list, out keys, out vcec; fallback: 2 x (key + value) + CUB temp (~1x).
  return slots * (4 + 8 + 4 + 4 + 8) + fb * 16 + fb * 8 + (16 << 20);
}

}  // namespace opt

// ---- OptPlan ---------------------------------------------------------------------------------------

void OptPlan::setup(const InputDesc& in, const Options&, cudaStream_t) {
  shape_ = in.shape;
  engine_.setup(in.dtype, in.shape, false);
}

void OptPlan::accumulate_all(const void* d_input, cudaStream_t stream) {
  used_fallback_ = false;
  engine_.reset(stream);
  engine_.accumulate(d_input, 0, 0, slab_count(shape_), stream);
}

void OptPlan::compute(const DeviceInputs& in, cudaStream_t stream) {
  const void* d_input = in.at(0);
  accumulate_all(d_input, stream);
  if (engine_.finish(stream)) {
    used_fallback_ = true;
    engine_.fallback_begin();
    engine_.fallback_add(d_input, 0, 0, slab_count(shape_), stream);
  }
}

void OptPlan::compute_queued(const void* d_input, cudaStream_t stream) {
  accumulate_all(d_input, stream);
  queued_input_ = d_input;
  engine_.finish_queued(stream);
}

Curve OptPlan::collect(cudaStream_t stream) {
  Curve c;
  if (engine_.collect(stream, c)) return c;
  used_fallback_ = true;
  engine_.fallback_begin();
  engine_.fallback_add(queued_input_, 0, 0, slab_count(shape_), stream);
  return engine_.fallback_curve();
}

Curve OptPlan::result(cudaStream_t stream) {
  if (used_fallback_) return engine_.fallback_curve();
  return engine_.curve(stream);
}

std::unique_ptr<DevicePlan> make_gpu_opt_plan() { return std::make_unique<OptPlan>(); }

Curve run_gpu_opt(const HostImage& img, const Options&) {
  OptPlan plan;
  return run_plan_end_to_end(plan, img, "ecc/gpu-opt");
}

}  // namespace repix::ecc
