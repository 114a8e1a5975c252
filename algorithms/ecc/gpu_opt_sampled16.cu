// `gpu-opt-sampled16` (ablation step `sampled-choice`, issue 43): gpu-opt with its 2D uint16 kernel
// chosen on the GPU before each pass from a sample of the image's values: 64 scattered runs of 128
// values, and from 512 distinct values among them gpu-opt-bins16's kernel (16-bit counters for all
// 65536 values in one block's shared memory), below that gpu-opt's own (its block hash in front of
// the global bins). gpu-opt-hash-bins16 tried to be both at once in one kernel and lost on natural
// images (its row loop carries both paths); here each image runs one of the two kernels as they
// are, at the price of the sample's launch and of the other kernel's blocks returning at once
// (Geom::gate). Images under 2^22 voxels, 3D uint16, uint8 and float32 run gpu-opt's kernels.
// gpu_opt_core.cuh's sampled16 says why these numbers; NOTES-gpu-opt.md.
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

Variant gpu_opt_sampled16_variant() {
  return make_opt_step_variant("gpu-opt-sampled16", "sampled-choice",
                               "gpu-opt, its 2D uint16 kernel chosen per pass on the GPU from a sample of the values: "
                               "gpu-opt-bins16's 16-bit shared bins from 512 distinct sampled values, else gpu-opt's",
                               opt::kModeSampled16);
}

}  // namespace repix::ecc
