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
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

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
