// Registration of gpu-opt (beyond the paper: one pass, byte-sliced rule, hashed accumulation)
// and gpu-stream (the paper's section 4.4 out-of-core pipeline on gpu-opt's kernels).
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_variants.hpp"

namespace repix::ecc {

void append_opt_variants(std::vector<Variant>& v) {
  v.push_back({"gpu-opt", true, "beyond-paper",
               "one pass, 4 voxels/thread, byte-sliced win words, block hash + global hash (exact sort fallback)",
               run_gpu_opt, make_gpu_opt_plan, {}});
  v.push_back({"gpu-stream", true, "streaming",
               "out-of-core: slab chunks with halos through pinned buffers on several streams, gpu-opt kernels",
               run_gpu_stream, {}, run_gpu_stream_source});
}

}  // namespace repix::ecc
