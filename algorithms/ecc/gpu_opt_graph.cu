// gpu-opt end to end as one CUDA graph (--graph-chunks K, OptTuning::graph_chunks, 1..16; 0: off,
// the default): for a pinned host image that fits in GPU memory, the upload in K copies into one
// whole-image device buffer, each chunk's NaN/inf check (float) and accumulation as soon as its
// rows and the next chunk's first row have arrived, and the finishing kernel, captured once per
// workspace and replayed with each call's host address.
//
// Why: the whole-image path issues its copy, check, kernel and finish one API call at a time
// (uint8 2048^2: 0.107 ms against the copy's 0.076 on the H100), and gpu-stream's chunks cost
// a few host calls each (its 2048^2 float32 run issued for ~100 us, the timeline said). A graph
// costs one launch a call. Measured on H100s (NOTES-gpu-opt.md, "Host work of a call"):
// one binary with the graph off / 1 / 4 / 8 chunks alternated, 2048^2 float32 0.400 / 0.371 /
// 0.384 / 0.389 ms, uint8 2048^2 0.115 / 0.106 / 0.117 / 0.133, uint8 128^3 0.078 / 0.074 / 0.081
// / 0.098, uint16 2048^2 and GRF 128^3 tied (more chunks lose: a dependent node's latency is more
// than the overlap of a small chunk's kernel wins back). Made the default up to 16 MiB in one
// chunk, the next call (another machine, against the tree without it) did not repeat it: float32
// 2048^2 0.387 -> 0.394, uint8 2048^2 0.115 -> 0.116, GRF 2048^2 0.452 -> 0.440, and the small
// images' fixed cost 16x16 float32 0.035 -> 0.029 but 256^2 float32 0.059 -> 0.064, 512^2 uint8
// 0.030 -> 0.036. So off by default; the timeline (--timeline) splits a call's tail.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/reuse_cache.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_timeline.hpp"

namespace repix::ecc {

namespace {

constexpr int kMaxGraphChunks = OptTuning::kMaxGraphChunks;  // a chunk a dynamic-schedule lane (Engine::accumulate)
constexpr int kSideStreams = 4;  // chunk i's kernels on side stream i % 4 (captured as branches)

struct GraphWorkspace {
  // The chunks and the engine's tuning shape the captured graph (its copies, its kernels' grids):
  // both are part of the key, so a call never replays another tuning's graph.
  using Key = std::tuple<DType, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, OptTuning>;
  opt::Engine engine;
  DeviceBuffer<unsigned char> d_in;
  CudaStream stream;
  CudaStream side[kSideStreams];
  std::vector<std::unique_ptr<CudaEvent>> copied, done;  // capture-time fork and join points
  CudaEvent uploaded;  // recorded by the graph after the last copy (timeline)
  opt::NonfiniteCheck nonfinite;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> copy_node;       // chunk order
  std::vector<std::size_t> copy_at, copy_bytes;  // byte offset and size of each chunk's copy
  std::size_t captured_readback = 0;             // Engine::readback_bytes() the capture saw

  ~GraphWorkspace() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  void drop_graph() {
    if (exec) REPIX_CUDA(cudaGraphExecDestroy(exec));
    if (graph) REPIX_CUDA(cudaGraphDestroy(graph));
    exec = nullptr;
    graph = nullptr;
    copy_node.clear();
  }
};

// The graph of one call: copies chained on `stream`; chunk i's check and accumulation on a side
// stream once copy min(i + 1, K - 1) is done (its rows and the row after them have arrived: copies
// land in order); the finish on `stream` after every chunk. Captured from the engine's own calls,
// so the kernels are exactly those of the other paths.
void capture(GraphWorkspace& ws, const HostImage& img, int chunks) {
  const bool is_float = img.dtype() == DType::f32;
  const std::int64_t slabs = slab_count(img.shape()), per_slab = slab_elems(img.shape());
  const std::size_t slab_bytes = static_cast<std::size_t>(per_slab) * dtype_size(img.dtype());
  cudaStream_t s = ws.stream.get();
  ws.drop_graph();
  ws.engine.reset(s);             // outside the capture: nothing to do after a finished pass
  ws.engine.prepare_readback(s);  // an allocation, if any, outside the capture too
  if (is_float) ws.nonfinite.readback_along();  // its first call looks up a device address
  REPIX_CUDA(cudaStreamSynchronize(s));
  ws.copy_at.assign(static_cast<std::size_t>(chunks), 0);
  ws.copy_bytes.assign(static_cast<std::size_t>(chunks), 0);
  ws.copy_node.assign(static_cast<std::size_t>(chunks), nullptr);
  while (static_cast<int>(ws.copied.size()) < chunks) {
    ws.copied.push_back(std::make_unique<CudaEvent>(cudaEventDisableTiming));
    ws.done.push_back(std::make_unique<CudaEvent>(cudaEventDisableTiming));
  }
  auto first_slab = [&](int i) { return slabs * i / chunks; };
  REPIX_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < chunks; ++i) {
      const std::size_t at = static_cast<std::size_t>(first_slab(i)) * slab_bytes;
      const std::size_t bytes = static_cast<std::size_t>(first_slab(i + 1) - first_slab(i)) * slab_bytes;
      REPIX_CUDA(cudaMemcpyAsync(ws.d_in.get() + at, static_cast<const unsigned char*>(img.raw()) + at, bytes,
                                 cudaMemcpyHostToDevice, s));
      // The node just captured: the one the stream's next node would depend on.
      cudaStreamCaptureStatus status{};
      const cudaGraphNode_t* deps = nullptr;
      std::size_t ndeps = 0;
      REPIX_CUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr, &ndeps));
      if (status != cudaStreamCaptureStatusActive || ndeps != 1) throw Error("internal: ecc graph capture lost its copy node");
      ws.copy_node[static_cast<std::size_t>(i)] = deps[0];
      ws.copy_at[static_cast<std::size_t>(i)] = at;
      ws.copy_bytes[static_cast<std::size_t>(i)] = bytes;
      ws.copied[static_cast<std::size_t>(i)]->record(s);
    }
    REPIX_CUDA(cudaEventRecordWithFlags(ws.uploaded.get(), s, cudaEventRecordExternal));
    for (int i = 0; i < chunks; ++i) {
      cudaStream_t t = ws.side[i % kSideStreams].get();
      REPIX_CUDA(cudaStreamWaitEvent(t, ws.copied[static_cast<std::size_t>(std::min(i + 1, chunks - 1))]->get(), 0));
      const std::int64_t s0 = first_slab(i), s1 = first_slab(i + 1);
      if (is_float)
        ws.nonfinite.check(reinterpret_cast<const float*>(ws.d_in.get()) + s0 * per_slab, (s1 - s0) * per_slab,
                           s0 * per_slab, t);
      ws.engine.accumulate(ws.d_in.get(), 0, s0, s1, t, i);
      ws.done[static_cast<std::size_t>(i)]->record(t);
      REPIX_CUDA(cudaStreamWaitEvent(s, ws.done[static_cast<std::size_t>(i)]->get(), 0));
    }
    ws.engine.finish_queued(s, is_float ? ws.nonfinite.readback_along() : opt::CopyAlong{});
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(s, &broken);  // the stream leaves capture mode whatever failed
    if (broken) cudaGraphDestroy(broken);
    throw;
  }
  REPIX_CUDA(cudaStreamEndCapture(s, &ws.graph));
  REPIX_CUDA(cudaGraphInstantiate(&ws.exec, ws.graph, 0));
  ws.captured_readback = ws.engine.readback_bytes();
}

}  // namespace

Curve run_gpu_opt_graph(const HostImage& img, const Options& options) {
  nvtx::Range range("ecc/gpu-opt-graph");
  TimelineRecorder timeline(options.timeline);
  opt::check_tuning(options.tuning);
  if (img.size() <= 0) throw Error("empty image");
  if (!img.pinned()) throw Error("internal: ecc graph path for a pageable image");
  require_gpu();
  const Shape& sh = img.shape();
  const int chunks = static_cast<int>(
      std::clamp<std::int64_t>(options.tuning.graph_chunks, 1, std::min<std::int64_t>(kMaxGraphChunks, slab_count(sh))));
  const GraphWorkspace::Key key{img.dtype(), sh.ndim, sh.nx, sh.ny, sh.nz, chunks, options.tuning};
  auto& cache = reuse_cache<GraphWorkspace::Key, GraphWorkspace>();
  std::unique_ptr<GraphWorkspace> ws = cache.take_or_make(key, [&] {
    nvtx::Range r("init");
    auto w = std::make_unique<GraphWorkspace>();
    w->d_in.allocate(img.bytes());
    w->engine.setup(img.dtype(), sh, false, options.tuning);
    w->nonfinite.reset(w->stream.get());
    return w;
  });
  cudaStream_t s = ws->stream.get();
  const bool is_float = img.dtype() == DType::f32;
  if (!ws->exec || ws->captured_readback != ws->engine.readback_bytes()) {
    nvtx::Range r("capture");
    capture(*ws, img, chunks);  // the engine's calls in it left its host state as a finish_queued()
  } else {
    for (std::size_t i = 0; i < ws->copy_node.size(); ++i)
      REPIX_CUDA(cudaGraphExecMemcpyNodeSetParams1D(ws->exec, ws->copy_node[i], ws->d_in.get() + ws->copy_at[i],
                                                    static_cast<const unsigned char*>(img.raw()) + ws->copy_at[i],
                                                    ws->copy_bytes[i], cudaMemcpyHostToDevice));
    ws->engine.finish_replayed();
  }
  timeline.start(s);
  timeline.uploaded_by(ws->uploaded);
  REPIX_CUDA(cudaGraphLaunch(ws->exec, s));
  timeline.finished_then_wait(s);
  if (is_float) {  // a NaN/inf input is reported before anything is made of its accumulation
    REPIX_CUDA(cudaStreamSynchronize(s));
    ws->nonfinite.throw_if_found(sh);
  }
  Curve c;
  if (!ws->engine.collect(s, c)) {  // the float table overflowed: the exact path, workspace dropped
    ws->engine.fallback_begin();
    ws->engine.fallback_add(ws->d_in.get(), 0, 0, slab_count(sh), s);
    return ws->engine.fallback_curve();
  }
  const double work_us = ws->engine.collect_work_us();
  cache.put(key, std::move(ws));
  timeline.returned(chunks, work_us);
  return c;
}

}  // namespace repix::ecc
