// gpu-stream: the paper's out-of-core pipeline (section 4.4) on gpu-opt's kernels.
//
// The image is cut into chunks of whole slabs along the slowest axis. Chunk [s0, s1) travels with
// a one-slab halo on each side that exists in the image ([s0-1, s1+1) clipped); the kernels
// compute the contributions of [s0, s1) only, reading the halo slabs as neighbours, and treat
// buffer edges that are not halos as image borders. Options::streams slots, each with its own
// CUDA stream, pinned staging buffer and device buffer, cycle over the chunks: while the GPU
// copies and computes chunk c on one stream, the host reads chunk c+1 into the next slot.
// Pinned host images are uploaded straight from their own memory. All kernels add into one
// global accumulator with atomics; float32 overflow of its hash table is answered by a second,
// exact sort-based pass over the source. Device memory stays bounded by streams x chunk size.
// Float inputs are checked for NaN/inf on the GPU, chunk by chunk, as they arrive: an extra
// device-memory read is free in a pipeline bound by PCIe, and streamed sources are never whole
// in host memory for a host-side check.
//
// Workspace reuse: the engine, the slots' streams and buffers are kept (one set, process-wide)
// after a clean run and reused by the next call with the same dtype, shape and chunking. The
// allocations (cudaMalloc of the chunk buffers and the hash table, cudaHostAlloc of the staging
// buffers) took milliseconds per call, a sizeable part of a run that moves a 256 MiB image in
// 5 ms. A run that throws, or that needed the fallback, drops its workspace instead.
#include <algorithm>
#include <cstring>
#include <future>
#include <thread>
#include <tuple>
#include <vector>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/reuse_cache.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_timeline.hpp"

namespace repix::ecc {

namespace {

// Automatic chunk size: about 1/16 of the image, within [32 MiB, 128 MiB]. Small enough that
// the pipeline's tail (the last chunk's kernel after the last upload) stays a few percent of the
// run; large enough that each copy runs at full PCIe speed and launches stay negligible.
std::size_t auto_chunk_bytes(std::size_t image_bytes) {
  return std::clamp(image_bytes / 16, std::size_t(32) << 20, std::size_t(128) << 20);
}

struct Slot {
  CudaStream stream;
  CudaEvent uploaded{cudaEventDisableTiming};  // the H2D of this slot's last chunk is done
  CudaEvent done{cudaEventDisableTiming};      // this slot's last kernel is done (slot 0 waits)
  HostBuffer staging;
  DeviceBuffer<unsigned char> dev;
  bool used = false;
};

// Everything a run allocates, reusable by the next run of the same configuration.
struct Workspace {
  // The tuning is the engine's plan (the kernels' budgets, the work items' split): part of the key.
  using Key = std::tuple<DType, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, std::size_t, bool, OptTuning>;
  opt::Engine engine;
  std::vector<std::unique_ptr<Slot>> slot;
  opt::NonfiniteCheck nonfinite;  // float inputs
  CudaEvent ready{cudaEventDisableTiming};  // the accumulator reset is done
};

// The one cached workspace (process-wide; core/reuse_cache.hpp).
ReuseCache<Workspace::Key, Workspace>& workspace_cache() { return reuse_cache<Workspace::Key, Workspace>(); }

// Copies slabs [b0, b1) of a host image into dst with a few threads (pageable memcpy tops out
// far below PCIe bandwidth on one core).
void parallel_copy(const HostImage& img, std::int64_t b0, std::int64_t b1, void* dst,
                   std::size_t slab_bytes) {
  const std::size_t bytes = static_cast<std::size_t>(b1 - b0) * slab_bytes;
  const auto* src = static_cast<const unsigned char*>(img.raw()) + b0 * slab_bytes;
  auto* out = static_cast<unsigned char*>(dst);
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t parts = std::min<std::size_t>(std::min(8u, hw), std::max<std::size_t>(1, bytes >> 24));
  if (parts <= 1) {
    std::memcpy(out, src, bytes);
    return;
  }
  std::vector<std::future<void>> f;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t a = bytes * p / parts, e = bytes * (p + 1) / parts;
    f.push_back(std::async(std::launch::async, [=] { std::memcpy(out + a, src + a, e - a); }));
  }
  for (auto& x : f) x.get();
}

}  // namespace

Curve run_gpu_stream_ex(SlabSource& src, const Options& opt, const HostImage* whole,
                        std::size_t global_capacity_for_tests, StreamStats* stats, const char* nvtx_name,
                        std::int64_t own_first, std::int64_t own_last) {
  nvtx::Range range(nvtx_name);
  TimelineRecorder timeline(opt.timeline);
  require_gpu();
  const DType dt = src.dtype();
  const Shape sh = src.shape();
  if (sh.size() <= 0) throw Error("empty image");
  const std::int64_t slabs = slab_count(sh);
  if (own_last < 0) own_last = slabs;
  if (own_first < 0 || own_first >= own_last || own_last > slabs)
    throw Error("internal: gpu-stream slabs [" + std::to_string(own_first) + ", " + std::to_string(own_last) +
                ") of " + std::to_string(slabs));
  const std::int64_t own = own_last - own_first;  // the slabs whose contributions are counted
  const std::size_t slab_bytes = static_cast<std::size_t>(slab_elems(sh)) * dtype_size(dt);
  const std::size_t chunk_bytes =
      opt.chunk_bytes ? opt.chunk_bytes : auto_chunk_bytes(static_cast<std::size_t>(own) * slab_bytes);
  const std::int64_t per_chunk = std::max<std::int64_t>(
      1, std::min<std::int64_t>(own, static_cast<std::int64_t>(chunk_bytes / slab_bytes)));
  const std::int64_t chunks = (own + per_chunk - 1) / per_chunk;
  const int nslots = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(std::max(1, opt.streams), chunks)));
  const bool direct = whole && whole->pinned();
  const std::size_t buf_bytes = static_cast<std::size_t>(std::min(slabs, per_chunk + 2)) * slab_bytes;

  const Workspace::Key key{dt, sh.ndim, sh.nx, sh.ny, sh.nz, nslots, buf_bytes, direct, opt.tuning};
  // Tests that shrink the hash table get a private workspace that is never cached.
  std::unique_ptr<Workspace> ws = global_capacity_for_tests ? nullptr : workspace_cache().take(key);
  {
    nvtx::Range r("init");
    if (!ws) {
      ws = std::make_unique<Workspace>();
      ws->engine.setup(dt, sh, true, opt.tuning);
      if (global_capacity_for_tests) ws->engine.set_global_capacity(global_capacity_for_tests);
      for (int k = 0; k < nslots; ++k) {
        ws->slot.push_back(std::make_unique<Slot>());
        if (!direct) ws->slot[k]->staging = HostBuffer(buf_bytes, true);
        ws->slot[k]->dev.allocate(buf_bytes);
      }
      // Once: a run that finds a NaN/inf throws, and its workspace is not kept.
      ws->nonfinite.reset(ws->slot[0]->stream.get());
    }
    for (auto& sl : ws->slot) sl->used = false;
    cudaStream_t s0 = ws->slot[0]->stream.get();
    ws->engine.reset(s0);  // nothing to do after a finished run
    ws->ready.record(s0);
    // The other streams wait for the resets on the GPU; the host goes on reading chunks.
    for (int k = 1; k < nslots; ++k) REPIX_CUDA(cudaStreamWaitEvent(ws->slot[k]->stream.get(), ws->ready.get(), 0));
  }
  opt::Engine& engine = ws->engine;
  std::vector<std::unique_ptr<Slot>>& slot = ws->slot;
  if (stats) {
    stats->chunks = chunks;
    stats->slabs_per_chunk = per_chunk;
    stats->direct_from_pinned = direct;
  }

  // Brings chunk c's buffer slabs [b0, b1) into slot k's device buffer (asynchronously).
  auto upload = [&](std::int64_t b0, std::int64_t b1, Slot& s) {
    const std::size_t bytes = static_cast<std::size_t>(b1 - b0) * slab_bytes;
    // A generator that makes its slabs on the GPU writes them into the slot's buffer on the
    // slot's stream (after that buffer's last kernel): no host work, no PCIe.
    if (opt.generate_on_device && !whole && src.read_on_device(b0, b1, s.dev.get(), s.stream.get())) {
      s.uploaded.record(s.stream.get());
      return;
    }
    const void* host = nullptr;
    if (direct) {
      host = static_cast<const unsigned char*>(whole->raw()) + b0 * slab_bytes;
    } else {
      // The staging buffer is free once its previous upload has completed.
      if (s.used) REPIX_CUDA(cudaEventSynchronize(s.uploaded.get()));
      nvtx::Range r("read", static_cast<std::int64_t>(bytes));
      if (whole) parallel_copy(*whole, b0, b1, s.staging.data(), slab_bytes);
      else src.read(b0, b1, s.staging.data());
      host = s.staging.data();
    }
    REPIX_CUDA(cudaMemcpyAsync(s.dev.get(), host, bytes, cudaMemcpyHostToDevice, s.stream.get()));
    s.uploaded.record(s.stream.get());
    s.used = true;
  };

  const std::int64_t per_slab = slab_elems(sh);
  timeline.start(slot[0]->stream.get());  // chunk 0's upload is slot 0's
  for (std::int64_t c = 0; c < chunks; ++c) {
    Slot& s = *slot[static_cast<std::size_t>(c % nslots)];
    const std::int64_t s0 = own_first + c * per_chunk, s1 = std::min(own_last, s0 + per_chunk);
    const std::int64_t b0 = std::max<std::int64_t>(0, s0 - 1), b1 = std::min(slabs, s1 + 1);
    upload(b0, b1, s);
    if (c == chunks - 1) timeline.uploaded(s.stream.get());
    if (dt == DType::f32) {  // each slab is checked once, as one of its own chunk's slabs
      ws->nonfinite.check(reinterpret_cast<const float*>(s.dev.get()) + (s0 - b0) * per_slab, (s1 - s0) * per_slab,
                          s0 * per_slab, s.stream.get());
    }
    engine.accumulate(s.dev.get(), b0, s0, s1, s.stream.get(), static_cast<int>(c % nslots));  // a lane a stream
  }
  // Slot 0's stream waits on the GPU for the others' last kernels (no host synchronisation
  // here), then queues the finishing kernel, which writes the curve's raw material and the first
  // non-finite position into pinned memory: the one host wait is collect()'s. Earlier, float
  // inputs waited twice here (finish(), then curve()'s copies into pageable vectors), where the
  // whole-image path (OptPlan::collect) waited once.
  cudaStream_t s0 = slot[0]->stream.get();
  for (int k = 1; k < nslots; ++k) {
    ws->slot[k]->done.record(ws->slot[k]->stream.get());
    REPIX_CUDA(cudaStreamWaitEvent(s0, ws->slot[k]->done.get(), 0));
  }
  timeline.kernels(s0);
  engine.finish_queued(s0, dt == DType::f32 ? ws->nonfinite.readback_along() : opt::CopyAlong{});
  timeline.finished_then_wait(s0);
  Curve c;
  const bool complete = engine.collect(s0, c);
  // A NaN/inf input is reported before anything is made of its (meaningless) accumulation, the
  // overflow fallback included.
  if (dt == DType::f32) ws->nonfinite.throw_if_found(sh);
  if (complete) {
    const double work_us = engine.collect_work_us();
    if (!global_capacity_for_tests) workspace_cache().put(key, std::move(ws));
    timeline.returned(chunks, work_us);
    return c;
  }

  // The global float hash table overflowed: exact sort-based pass, chunk by chunk.
  if (stats) stats->used_fallback = true;
  nvtx::Range r("fallback");
  engine.fallback_begin();
  for (std::int64_t c = 0; c < chunks; ++c) {
    Slot& s = *slot[0];
    const std::int64_t a = own_first + c * per_chunk, e = std::min(own_last, a + per_chunk);
    const std::int64_t b0 = std::max<std::int64_t>(0, a - 1), b1 = std::min(slabs, e + 1);
    upload(b0, b1, s);
    engine.fallback_add(s.dev.get(), b0, a, e, s.stream.get());
  }
  return engine.fallback_curve();
}

Curve run_gpu_stream(const HostImage& img, const Options& opt) {
  ImageSlabSource src(img);  // NaN/inf are caught on the GPU as the chunks arrive
  return run_gpu_stream_ex(src, opt, &img, 0, nullptr);
}

Curve run_gpu_stream_source(SlabSource& src, const Options& opt) {
  return run_gpu_stream_ex(src, opt, nullptr, 0, nullptr);
}

Curve run_gpu_stream_slabs(SlabSource& src, const Options& opt, std::int64_t first, std::int64_t last) {
  return run_gpu_stream_ex(src, opt, nullptr, 0, nullptr, "ecc/gpu-stream", first, last);
}

bool fits_on_device(DType dtype, const Shape& shape) {
  if (!gpu_available()) return false;
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  const std::size_t image = static_cast<std::size_t>(shape.size()) * dtype_size(dtype);
  const std::size_t need = image + opt::Engine::workspace_bytes(dtype, shape, false);
  const std::size_t margin = std::max<std::size_t>(std::size_t(256) << 20, free_b / 20);
  return need + margin <= free_b;
}

}  // namespace repix::ecc
