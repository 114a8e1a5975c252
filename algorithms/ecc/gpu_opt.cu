// `gpu-opt`: one pass over the input, no sort of the data, no rank image, no padded copy.
//
// Each thread owns a run of 4 voxels along x (one 16-byte load of float32) and marches along the
// slowest axis, keeping the rows it needs in registers; the per-voxel rule is the byte-sliced
// word logic of gpu_opt_core.cuh. VCEC is accumulated per block in shared memory (uint8: direct
// bins; uint16/float32: an open-addressing hash keyed by the value's bits), merged at block end
// into a global accumulator (uint8/uint16: direct bins; float32: a global hash table whose
// overflow is detected and answered by an exact sort-based path). This file is the variant: its
// plan on top of the engine (gpu_opt_engine.cu) and kernels (gpu_opt_2d.cu, gpu_opt_3d.cu).
// See NOTES-gpu-opt.md.
#include <algorithm>
#include <tuple>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/reuse_cache.hpp"
#include "ecc/gpu_common.hpp"  // gpu::make_plan_variant
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_timeline.hpp"

namespace repix::ecc {

// ---- OptPlan ---------------------------------------------------------------------------------------

void OptPlan::setup(const InputDesc& in, const Options& opt, cudaStream_t) {
  shape_ = in.shape;
  dtype_ = in.dtype;
  pending_ = false;
  engine_.setup(in.dtype, in.shape, false, opt.tuning);
}

// compute() waits for nothing: it queues the pass and its read-back (compute_queued), and result()
// waits once (collect), running the exact fallback there when the float table overflowed. Before
// that, float compute() waited for an 8-byte overflow flag, a host round trip inside every
// kernel-scope sample (8192^2 uniform on the H100, same call: 0.179 against 0.174 ms without
// it). A compute() whose result() is never asked (the timed repetitions) leaves its read-back to be
// overwritten, in stream order, by the next one's. Integer images do the same since the finishing
// kernel (before it, their kernel-scope samples stopped at the pass and result() read the bins).
void OptPlan::compute(const DeviceInputs& in, cudaStream_t stream) {
  if (pending_) {
    // On another stream, the earlier read-back could land after this one's.
    if (pending_stream_ != stream) REPIX_CUDA(cudaStreamSynchronize(pending_stream_));
    engine_.drop_queued();
    pending_ = false;
  }
  compute_queued(in.at(0), stream);
  pending_ = true;
  pending_stream_ = stream;
}

void OptPlan::compute_queued(const void* d_input, cudaStream_t stream, opt::CopyAlong along) {
  used_fallback_ = false;
  engine_.reset(stream);
  engine_.accumulate(d_input, 0, 0, slab_count(shape_), stream);
  queued_input_ = d_input;
  engine_.finish_queued(stream, along);
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
  if (pending_) {
    pending_ = false;
    curve_ = collect(stream);
  }
  return curve_;  // result() asked again: the last one
}

std::unique_ptr<DevicePlan> make_gpu_opt_plan() { return std::make_unique<OptPlan>(); }

Variant make_opt_step_variant(std::string id, std::string step, std::string description, int mode) {
  // End to end like the paper's ladder steps (a plan per call): the steps compare kernels.
  return gpu::make_plan_variant(std::move(id), std::move(step), std::move(description),
                                [mode]() -> std::unique_ptr<DevicePlan> { return std::make_unique<OptPlan>(mode); });
}

// ---- end to end -----------------------------------------------------------------------------------
//
// This is what `repix run ecc` runs by default, so its cost per call is the user's. Measured on the
// H100 (NOTES-gpu-opt.md): a fresh OptPlan per call (cudaMalloc of the input and of the global
// table, cudaFree, stream creation) made 2048^2 float32 take 6.28 ms against a 0.076 ms kernel.
// Two changes:
// - Nothing is allocated per call: the workspace (plan, input buffer, stream; or gpu-stream's
//   slots) is cached per (dtype, shape) by core/reuse_cache.hpp and reused by the next call.
// - Images of two chunks or more go through gpu-stream's pipeline (the same engine and kernels,
//   not a second implementation): the upload of chunk c+1 overlaps the kernel of chunk c, so the
//   run costs about the upload plus the last chunk's kernel, and pageable images are copied into
//   pinned staging by several threads while earlier chunks are on the link. Float inputs are
//   checked for NaN/inf on the GPU as they arrive there (no host pass over the image).
// Small images take one pass over a whole uploaded image, and one host synchronisation
// (compute_queued + collect: the finishing kernel is queued behind the pass).

namespace {

struct InCoreWorkspace {
  // The tuning is the plan's engine's (the kernels' budgets, the work items' split): part of the key.
  using Key = std::tuple<DType, std::int64_t, std::int64_t, std::int64_t, std::int64_t, OptTuning>;
  CudaStream stream;
  DeviceBuffer<unsigned char> d_in;
  OptPlan plan;
  // Float: reset once, when the workspace is made (a workspace that found one is dropped with the
  // error).
  opt::NonfiniteCheck nonfinite;
};

Curve run_in_core(const HostImage& img, const Options& options) {
  nvtx::Range range("ecc/gpu-opt");
  TimelineRecorder timeline(options.timeline);
  if (img.size() <= 0) throw Error("empty image");  // float values are checked on the GPU below
  require_gpu();
  const Shape& sh = img.shape();
  const InCoreWorkspace::Key key{img.dtype(), sh.ndim, sh.nx, sh.ny, sh.nz, options.tuning};
  auto& cache = reuse_cache<InCoreWorkspace::Key, InCoreWorkspace>();
  std::unique_ptr<InCoreWorkspace> ws = cache.take_or_make(key, [&] {
    nvtx::Range r("init");
    auto w = std::make_unique<InCoreWorkspace>();
    w->d_in.allocate(img.bytes());
    w->plan.setup({img.dtype(), sh}, options, w->stream.get());
    w->nonfinite.reset(w->stream.get());
    return w;
  });
  cudaStream_t stream = ws->stream.get();
  const bool is_float = img.dtype() == DType::f32;
  {
    nvtx::Range r("h2d", static_cast<std::int64_t>(img.bytes()));
    timeline.start(stream);
    REPIX_CUDA(cudaMemcpyAsync(ws->d_in.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream));
    timeline.uploaded(stream);
  }
  {
    nvtx::Range r("kernel");
    opt::CopyAlong along;
    if (is_float) {
      ws->nonfinite.check(static_cast<const float*>(static_cast<const void*>(ws->d_in.get())), img.size(), 0, stream);
      along = ws->nonfinite.readback_along();
    }
    ws->plan.compute_queued(ws->d_in.get(), stream, along);  // the pass and its finishing kernel
  }
  nvtx::Range r("d2h");
  timeline.finished_then_wait(stream);
  if (is_float) {  // a NaN/inf input is reported before anything is made of its accumulation
    REPIX_CUDA(cudaStreamSynchronize(stream));
    ws->nonfinite.throw_if_found(sh);
  }
  Curve c = ws->plan.collect(stream);
  const double work_us = ws->plan.collect_work_us();
  // A run that needed the exact fallback keeps its sort buffers; drop them rather than hold them.
  if (!ws->plan.used_fallback()) cache.put(key, std::move(ws));
  timeline.returned(1, work_us);
  return c;
}

}  // namespace

std::size_t end_to_end_chunk_bytes(std::size_t image_bytes, std::int64_t slabs, std::size_t requested) {
  if (slabs < 2) return 0;  // gpu-stream's chunks are whole slabs: one slab is one chunk
  if (requested) return requested < image_bytes ? requested : 0;
  if (image_bytes < 2 * kMinEndToEndChunk) return 0;
  // About 8 chunks: the part of the run not hidden behind the link is the last chunk's kernel,
  // an eighth of the kernel's work; at least kMinEndToEndChunk; at most gpu-stream's largest chunk.
  return std::clamp(image_bytes / 8, kMinEndToEndChunk, std::size_t(128) << 20);
}

Curve run_gpu_opt(const HostImage& img, const Options& opt) {
  // The graph path (off unless --graph-chunks asks for it): pinned images whose whole buffer any
  // H100 or H200 holds with room to spare, unless --chunk-mib asked for gpu-stream's chunks.
  if (opt.tuning.graph_chunks > 0 && opt.chunk_bytes == 0 && img.pinned() && img.size() > 0 &&
      img.bytes() <= (std::size_t(1) << 30))
    return run_gpu_opt_graph(img, opt);
  const std::size_t chunk = end_to_end_chunk_bytes(img.bytes(), slab_count(img.shape()), opt.chunk_bytes);
  if (chunk == 0 || img.size() <= 0) return run_in_core(img, opt);
  Options o = opt;
  o.chunk_bytes = chunk;
  ImageSlabSource src(img);
  return run_gpu_stream_ex(src, o, &img, 0, nullptr, "ecc/gpu-opt");
}

}  // namespace repix::ecc
