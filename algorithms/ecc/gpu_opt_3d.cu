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

template <class T, bool kVec, bool kEmit, int kMode>
__device__ __forceinline__ void step3(float (&Pm)[3][6], float (&P0)[3][6], float (&Pp)[3][6],
                                      float* planes, PlaneShare<T>& pend, const Lane3<T>& L,
                                      const Geom& g, std::int64_t z, std::int64_t zb,
                                      std::int64_t tx0, std::int64_t ty0, int warp, int lane,
                                      EmitOut& out, ThreadAcc<T, kMode>& ta,
                                      BlockAcc<T, kMode>& ba, const GlobalAcc& acc) {
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
  consume<T, kEmit, kMode, kVec>(s, kBias3, P0[1], valid, ((z - g.s0) * g.ny + y) * g.nx + x0, out, ta, ba,
                    acc);
}

// kMinBlocks: the register budget (__launch_bounds__'s minimum resident blocks per SM). 2 (the
// default) gives up to 128 registers (124-127 used, sm_90, nvcc 13.0) and 16 warps an SM; 3 caps
// them at 80, with spills, for 24 warps to hide the plane loads and the barrier a plane. The 2D
// kernel gained 1.26-1.32x from that trade (ecc2d_kernel); for 3D it is not yet measured:
// REPIX_ECC_OPT_3D_BLOCKS=3 selects it.
template <class T, bool kVec, bool kEmit, int kMinBlocks = 2, int kMode = kModeOpt>
__global__ void __launch_bounds__(kThreads, kMinBlocks) ecc3d_kernel(const T* __restrict__ buf, Geom g,
                                                                     GlobalAcc acc, EmitOut out) {
  __shared__ BlockAcc<T, kMode> ba;
  __shared__ __align__(16) float planes[2 * kPlaneFloats];
  if constexpr (!kEmit) ba.init();
  ThreadAcc<T, kMode> ta(ba);
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
      step3<T, kVec, kEmit, kMode>(P0, P1, P2, planes, pend, L, g, z, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
      step3<T, kVec, kEmit, kMode>(P1, P2, P0, planes, pend, L, g, z + 1, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
      step3<T, kVec, kEmit, kMode>(P2, P0, P1, planes, pend, L, g, z + 2, zb, tx0, ty0, warp, lane, out, ta, ba, acc);
    }
  }
  if constexpr (!kEmit) {
    __syncthreads();
    ba.flush(acc);
  }
}

}  // namespace

KernelFn pick_kernel_3d(DType dt, bool vec, bool emit, int mode) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return pick_instantiation<T, 2, 3>(vec, emit, ecc3d_min_blocks(), mode, [](auto v, auto e, auto blocks, auto m) {
      return reinterpret_cast<KernelFn>(&ecc3d_kernel<T, decltype(v)::value, decltype(e)::value, decltype(blocks)::value,
                                                   decltype(m)::value>);
    });
  });
}

}  // namespace repix::ecc::opt::detail
