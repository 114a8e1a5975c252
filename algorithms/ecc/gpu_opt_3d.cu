// gpu-opt's 3D kernel: plane tiles of 128 columns by 8 rows staged in shared memory, marched
// along z (see NOTES-gpu-opt.md).
#include "core/image.hpp"
#include "ecc/gpu_opt_kernels.cuh"

namespace repix::ecc::opt::detail {
namespace {

// ---- 3D kernel --------------------------------------------------------------------------------
// Block-level work items: a 128 x 8 tile of columns times `chunk` planes (2.5D blocking). Plane
// z+1 of the tile (with a one-voxel halo) is staged in shared memory (two-plane ring, one
// barrier per plane); each thread keeps its 3 rows of planes z-1 and z in registers and reads
// its 3 rows of plane z+1 from shared memory. The next plane's global loads are in flight while
// the current plane is computed.

// A run of four elements and a halo element as loaded: converted to compute values (+inf outside
// the image) only when the plane is stored, so the loads stay in flight until then. float32
// elements land in registers preset to +inf, so a run outside costs no select; the integer kinds
// keep validity bits and select when converted (load4 and conv).
template <class T, bool kVec>
struct RunLoad {
  Raw4<T> raw;
  __device__ __forceinline__ void load(std::uintptr_t p, unsigned mask) {
    raw = load4<T, kVec>(reinterpret_cast<const T*>(p), mask);
  }
  __device__ __forceinline__ float4 values() const {
    return make_float4(conv(raw, 0), conv(raw, 1), conv(raw, 2), conv(raw, 3));
  }
};

template <bool kVec>
struct RunLoad<float, kVec> {
  float4 raw;
  __device__ __forceinline__ void load(std::uintptr_t p, unsigned mask) {
    if constexpr (kVec) {  // mask is 0 or 0xF (load4)
      raw = ldg4_or_inf(p, mask != 0);
    } else {
      raw = make_float4(ldg1_or_inf(p, mask & 1u), ldg1_or_inf(p + 4, mask & 2u), ldg1_or_inf(p + 8, mask & 4u),
                        ldg1_or_inf(p + 12, mask & 8u));
    }
  }
  __device__ __forceinline__ float4 values() const {
    return make_float4(canon(raw.x), canon(raw.y), canon(raw.z), canon(raw.w));
  }
};

template <class T>
struct HaloLoad {
  T raw;
  bool ok;
  __device__ __forceinline__ void load(std::uintptr_t p, bool inside) {
    ok = inside;
    raw = inside ? __ldg(reinterpret_cast<const T*>(p)) : T(0);
  }
  __device__ __forceinline__ float value() const { return ok ? to_compute(raw) : kInf; }
};

template <>
struct HaloLoad<float> {
  float raw;
  __device__ __forceinline__ void load(std::uintptr_t p, bool inside) { raw = ldg1_or_inf(p, inside); }
  __device__ __forceinline__ float value() const { return canon(raw); }
};

template <class T, bool kVec>
struct PlaneShare {         // this thread's part of one plane tile
  RunLoad<T, kVec> a, b;    // interior runs: tile row tid/32 and (tid < 64) row 8 + tid/32
  HaloLoad<T> halo;         // tid < 20: row tid/2, left (even) or right (odd) halo column
};

// This thread's plane loads of one work item, planes za-1, za, za+1, ... in order, one a call of
// next(): the addresses advance a plane at a time and a plane's validity is one 32-bit compare
// (plane r of the item, image plane za-1+r, is loaded when lo <= r <= hi), as the 2D kernel's rows
// (Rows2). Until this loader each plane's load cost 64-bit plane products and bounds tests, ~40
// SASS instructions a step of ~410 (before), most of them on the ALU pipe that binds the 3D
// kernel (ncu: math_pipe_throttle).
template <class T, bool kVec>
struct Planes3 {
  std::uintptr_t a = 0, b = 0, h = 0;  // bytes: the next plane's runs and halo element (wrap
                                       // harmlessly while outside the buffer: never dereferenced)
  std::uintptr_t stride = 0;           // bytes a plane
  unsigned ma = 0, mb = 0;             // run validity in x and y (0 or the run_mask)
  bool hok = false;                    // the halo element inside the image in x and y
  int r = 0, lo = 0, hi = 0;

  __device__ __forceinline__ Planes3(const T* buf, const Geom& g, std::int64_t tx0, std::int64_t ty0,
                                     std::int64_t za, std::int64_t zb) {
    const int t = threadIdx.x;
    const std::int64_t x = tx0 + (t & 31) * kRun;
    const std::int64_t ya = ty0 - 1 + (t >> 5), yb = ty0 - 1 + kWarps + (t >> 5);
    const std::int64_t yh = ty0 - 1 + (t >> 1), xh = (t & 1) ? tx0 + kSegX : tx0 - 1;
    const bool oka = ya >= 0 && ya < g.ny, okb = t < 64 && yb >= 0 && yb < g.ny;
    hok = t < 2 * kTileRows && yh >= 0 && yh < g.ny && xh >= 0 && xh < g.nx;
    ma = oka ? run_mask(x, g.nx) : 0u;
    mb = okb ? run_mask(x, g.nx) : 0u;
    stride = static_cast<std::uintptr_t>(g.ny * g.nx) * sizeof(T);
    const std::uintptr_t plane0 = reinterpret_cast<std::uintptr_t>(buf) + (za - 1 - g.b0) * stride;
    a = plane0 + static_cast<std::uintptr_t>(oka ? ya * g.nx + x : 0) * sizeof(T);
    b = plane0 + static_cast<std::uintptr_t>(okb ? yb * g.nx + x : 0) * sizeof(T);
    h = plane0 + static_cast<std::uintptr_t>(hok ? yh * g.nx + xh : 0) * sizeof(T);
    lo = za - 1 < 0 ? 1 : 0;
    hi = static_cast<int>(min(zb, g.nz - 1) - (za - 1));
  }

  __device__ __forceinline__ PlaneShare<T, kVec> next() {
    const bool ok = static_cast<unsigned>(r - lo) <= static_cast<unsigned>(hi - lo);
    PlaneShare<T, kVec> p;
    p.a.load(a, ok ? ma : 0u);
    p.b.load(b, ok ? mb : 0u);
    p.halo.load(h, ok && hok);
    a += stride;
    b += stride;
    h += stride;
    ++r;
    return p;
  }
};

template <class T, bool kVec>
__device__ __forceinline__ void store_plane(float* P, const PlaneShare<T, kVec>& p) {
  const int t = threadIdx.x;
  *reinterpret_cast<float4*>(P + (t >> 5) * kRowStride + 4 + (t & 31) * kRun) = p.a.values();
  if (t < 64) *reinterpret_cast<float4*>(P + (kWarps + (t >> 5)) * kRowStride + 4 + (t & 31) * kRun) = p.b.values();
  if (t < 2 * kTileRows) P[(t >> 1) * kRowStride + ((t & 1) ? 4 + kSegX : 3)] = p.halo.value();
}

// This thread's rows y-1, y, y+1 (tile rows warp, warp+1, warp+2) of a staged plane; `P` points
// at the plane's row `warp`, column x0-1 - 3 (so P[4] is the run's first voxel). The voxels left
// and right of the run are two scalar loads (lane 0's and lane 31's are the tile's halo columns),
// where a shuffle of the neighbour lanes' runs and a select for the edge lanes took 4 more
// instructions a row (2 of them on the ALU pipe).
__device__ __forceinline__ void read_rows(float (&R)[3][6], const float* P) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    const float* row = P + k * kRowStride;
    const float4 v = *reinterpret_cast<const float4*>(row + 4);
    R[k][0] = row[3];
    R[k][1] = v.x; R[k][2] = v.y; R[k][3] = v.z; R[k][4] = v.w;
    R[k][5] = row[8];
  }
}

// What a thread's steps of one work item share, in 32-bit where it fits (a step's integer work is
// on the ALU pipe with the rule's).
struct Item3 {
  int steps = 0;            // planes za .. zb-1
  int parity = 0;           // za & 1: plane q sits in ring slot q & 1
  int rows_at = 0;          // floats from a slot to this thread's row y-1, column x0-1 - 3 (read_rows)
  unsigned valid = 0;       // this thread's voxels inside the image (bits 0-3), the same every plane
  std::int64_t out_index = 0;    // emitting kernels: the output index of this thread's first voxel in plane za
  std::int64_t plane_elems = 0;  // and the elements of a plane (its step)
};

// A thread walks its run along z, so the comparisons of row y of plane z with row y of plane z+1
// are those of the next step with its plane below: gpu-opt carries their signs (change4_3d_carried:
// 2 FADD and 2 PRMT instead of 12 and 9 for that row; the other rows of plane z-1 are other warps'
// rows y); gpu-opt-fresh-rows, the step before it, makes them afresh (change4_3d). kCarriesWords in
// gpu_opt_kernels.cuh.

template <class T, bool kVec, bool kEmit, int kMode>
__device__ __forceinline__ void step3(float (&Pm)[3][6], float (&P0)[3][6], float (&Pp)[3][6], DownSigns& carry,
                                      float* planes, PlaneShare<T, kVec>& pend, Planes3<T, kVec>& L,
                                      const Item3& it, int k, EmitOut& out, ThreadAcc<T, kMode>& ta,
                                      BlockAcc<T, kMode>& ba, const GlobalAcc& acc) {
  if (k >= it.steps) return;  // block-uniform
  // Plane za+k+1 (loaded during the previous step) into its ring slot; the next plane's loads issued.
  float* slot = planes + ((k + 1 + it.parity) & 1) * kPlaneFloats;
  store_plane(slot, pend);
  pend = L.next();
  __syncthreads();
  read_rows(Pp, slot + it.rows_at);
  std::uint32_t s;
  if constexpr (kCarriesWords<kMode>) s = change4_3d_carried(carry, Pm, P0, Pp, carry);
  else s = change4_3d(Pm, P0, Pp);
  consume<T, kEmit, kMode, kVec>(s, kBias3, P0[1], it.valid, it.out_index + k * it.plane_elems, out, ta, ba, acc);
}

// kMinBlocks: the register budget (__launch_bounds__'s minimum resident blocks per SM). 2 (the
// default) gives up to 128 registers (122 used, sm_90, nvcc 13.0) and 16 warps an SM; 3 caps them
// at 80, with spills, for 24 warps. The 2D kernel gained 1.26-1.32x from that trade (ecc2d_kernel);
// the 3D kernel lost: 1.42x slower on float32 uniform 512^3, 1.32x on GRF (H100, kernel
// scope: 0.954 against 0.672 ms, 1.13 against 0.853; NOTES-gpu-opt.md). --blocks-3d 3
// (OptTuning) selects it, for the ablation.
template <class T, bool kVec, bool kEmit, int kMinBlocks = 2, int kMode = kModeOpt>
__global__ void __launch_bounds__(kThreads, kMinBlocks) ecc3d_kernel(const T* __restrict__ buf, Geom g,
                                                                     GlobalAcc acc, EmitOut out) {
  __shared__ BlockAcc<T, kMode> ba;
  __shared__ __align__(16) float planes[2 * kPlaneFloats];
  if constexpr (!kEmit) {
    ba.init();
    // A cluster's bins are zeroed in every block before any block's first RED; the others are
    // ready at the item loop's first barrier.
    if constexpr (block_kind<T, kMode> == BlockKind::cluster_bins) block_acc_barrier<T, kMode>();
  }
  ThreadAcc<T, kMode> ta(ba);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __shared__ std::uint32_t next_ticket;
  const std::int64_t tiles = g.items_x * g.items_y, nitems = tiles * (g.head_bands + g.items_s), stride = gridDim.x;
  std::int64_t item = blockIdx.x;
  for (std::int64_t taken = 1; item < nitems; ++taken) {
    const bool took = wants_ticket(g, taken);  // block-uniform
    std::uint32_t ticket = 0;
    if (took && threadIdx.x == 0) ticket = atomicAdd(g.queue, 1u);
    const ItemSpan span = item_span(g, item, tiles);
    const std::int64_t tx0 = (span.in_band % g.items_x) * kSegX, ty0 = (span.in_band / g.items_x) * kWarps;
    const std::int64_t za = span.first, zb = span.last;
    Item3 it3;
    it3.steps = static_cast<int>(zb - za);
    it3.parity = static_cast<int>(za & 1);
    it3.rows_at = warp * kRowStride + lane * kRun;
    const std::int64_t y = ty0 + warp, x0 = tx0 + lane * kRun;
    it3.valid = y < g.ny ? run_mask(x0, g.nx) : 0u;
    it3.out_index = ((za - g.s0) * g.ny + y) * g.nx + x0;
    it3.plane_elems = g.ny * g.nx;
    float P0[3][6], P1[3][6], P2[3][6];
    // The item's first three planes' loads are issued before the barrier, which guards the ring,
    // not the loads (they read global memory only): behind it they waited, at every item start,
    // for the block's slowest warp to end the previous item. Measured on an H100 against
    // the previous order in the same call: 512^3 float32
    // uniform 0.4795 -> 0.4733 ms, GRF 0.6344 -> 0.6234; the row loop's SASS 1012 -> 994.
    Planes3<T, kVec> L(buf, g, tx0, ty0, za, zb);
    const PlaneShare<T, kVec> below = L.next();  // plane za-1
    const PlaneShare<T, kVec> at = L.next();     // plane za
    PlaneShare<T, kVec> pend = L.next();         // plane za+1
    float* const first = planes + ((za - 1) & 1) * kPlaneFloats;  // plane za-1's slot
    float* const second = planes + (za & 1) * kPlaneFloats;
    __syncthreads();  // previous item's reads of the ring (and the table init) are done
    store_plane(first, below);
    store_plane(second, at);
    __syncthreads();
    read_rows(P0, first + it3.rows_at);
    read_rows(P1, second + it3.rows_at);
    __syncthreads();  // the first step overwrites plane za-1's slot
    // The signs of row y of plane za-1 against plane za's, which the first step takes as its own.
    DownSigns carry{};
    if constexpr (kCarriesWords<kMode>) carry = down_signs(P0[1], P1[1]);
    for (int k = 0; k < it3.steps; k += 3) {
      step3<T, kVec, kEmit, kMode>(P0, P1, P2, carry, planes, pend, L, it3, k, out, ta, ba, acc);
      step3<T, kVec, kEmit, kMode>(P1, P2, P0, carry, planes, pend, L, it3, k + 1, out, ta, ba, acc);
      step3<T, kVec, kEmit, kMode>(P2, P0, P1, carry, planes, pend, L, it3, k + 2, out, ta, ba, acc);
    }
    if (took) {  // thread 0's ticket to the block; read before anyone reaches the next item's barrier
      if (threadIdx.x == 0) next_ticket = ticket;
      __syncthreads();
      ticket = next_ticket;
    }
    item = item_after(g, item, stride, took, ticket, nitems);
  }
  if constexpr (!kEmit) {
    block_acc_barrier<T, kMode>();
    ba.flush(acc);
    release_queue(g);
  }
}

}  // namespace

KernelFn pick_kernel_3d(DType dt, bool vec, bool emit, int mode, int blocks) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The 16-bit shared bins are 2D only (the 3D kernel's 8-warp tiles, and |change| <= 13 would
    // leave the counters little room: gpu_opt_kernels.cuh): in 3D gpu-opt-bins16 runs
    // gpu-opt-direct's uint16 kernel and gpu-opt-hash-bins16 gpu-opt's.
    return pick_instantiation<T, 2, 3, kModeBins16 | kModeHashBins16>(vec, emit, blocks, mode, [](auto v, auto e, auto blocks, auto m) {
      return reinterpret_cast<KernelFn>(&ecc3d_kernel<T, decltype(v)::value, decltype(e)::value, decltype(blocks)::value,
                                                   decltype(m)::value>);
    });
  });
}

}  // namespace repix::ecc::opt::detail
