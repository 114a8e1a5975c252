// The ami pipeline on the device (variants.hpp: make_gpu_plan): the image goes up once, the
// ranklet planes stay on the device (12 planes of 256 MB at 8192^2 with four windows), each is
// quantised there into one uint8 label buffer, and the auto-mi plan counts that buffer; only the
// per-lag NMIs come back, plane by plane.
#include <algorithm>
#include <memory>

#include "ami/ami.hpp"
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"
#include "ami/variants.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"

namespace repix::ami {

namespace {

// Q - 1 of every value of one plane (label_of: the host's quantise_plane computes the same).
__global__ void quantise_kernel(const float* plane, std::int64_t n, int r, std::uint8_t* labels) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    labels[i] = label_of(plane[i], r);
}

class GpuPipelinePlan final : public DevicePlan {
 public:
  GpuPipelinePlan(const ranklet::Variant& rv, const auto_mi::Variant& av) : rv_(rv), av_(av) {}

  void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) override {
    if (in.dtype != DType::u8 || in.shape.ndim != 2 || in.shape.size() == 0)
      throw Error("ami: the GPU pipeline takes a non-empty 2-D uint8 image");
    ranklet::check_windows(opt.windows);
    opt_ = opt;
    shape_ = in.shape;
    std::unique_ptr<ranklet::DevicePlan> rp = rv_.make_plan();
    auto* base = dynamic_cast<ranklet::PlanBase*>(rp.get());
    if (!base) throw Error("internal: ranklet variant '" + rv_.id + "' has no device planes for the ami pipeline");
    rp.release();
    ranklet_.reset(base);
    ranklet::Options ro;
    ro.windows = opt.windows;
    ranklet_->setup(in, ro, stream);
    auto_mi_ = av_.make_plan();
    auto_mi::Options ao;
    ao.flush_level = opt.flush_level;
    auto_mi_->setup({DType::u8, in.shape}, ao, stream);
    labels_.allocate(static_cast<std::size_t>(in.shape.size()));
    start_ = std::make_unique<CudaEvent>();
    ranklet_done_ = std::make_unique<CudaEvent>();
    stop_ = std::make_unique<CudaEvent>();
  }

  void compute(const DeviceInputs& in, cudaStream_t stream) override {
    if (!ranklet_) throw Error("internal: ami GPU plan computed before setup");
    const std::int64_t n = shape_.size();
    result_ = Result{};
    result_.windows = opt_.windows;
    result_.features.resize(opt_.windows.size() * kFeaturesPerWindow);
    start_->record(stream);
    {
      nvtx::Range r("ranklet");
      ranklet_->compute(in, stream);
    }
    ranklet_done_->record(stream);
    const int threads = 256;
    const int blocks = static_cast<int>(std::min<std::int64_t>((n + threads - 1) / threads, 4096));
    for (std::size_t w = 0; w < opt_.windows.size(); ++w)
      for (int o = 0; o < kOrientations; ++o) {
        nvtx::Range r("quantise+auto-mi");
        const float* plane = ranklet_->device_output() + (3 * static_cast<std::int64_t>(w) + o) * n;
        quantise_kernel<<<blocks, threads, 0, stream>>>(plane, n, opt_.windows[w], labels_.get());
        REPIX_CUDA_LAUNCH();
        auto_mi_->compute({labels_.get()}, stream);
        const auto_mi::Features f = auto_mi_->result(stream);  // synchronises; a few KB of NMIs
        result_.features[feature_index(w, o, 0)] = f.horizontal;
        result_.features[feature_index(w, o, 1)] = f.vertical;
        result_.stats.pairs += f.stats.pairs;
      }
    stop_->record(stream);
    REPIX_CUDA(cudaStreamSynchronize(stream));
    result_.stats.ranklet_ms = ranklet_done_->ms_since(*start_);
    result_.stats.auto_mi_ms = stop_->ms_since(*ranklet_done_);
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: ami GPU plan read before compute");
    REPIX_CUDA(cudaStreamSynchronize(stream));
    return result_;
  }
  Stats stats() const override { return result_.stats; }

 private:
  const ranklet::Variant& rv_;
  const auto_mi::Variant& av_;
  Options opt_;
  Shape shape_;
  std::unique_ptr<ranklet::PlanBase> ranklet_;
  std::unique_ptr<auto_mi::DevicePlan> auto_mi_;
  DeviceBuffer<std::uint8_t> labels_;
  std::unique_ptr<CudaEvent> start_, ranklet_done_, stop_;
  Result result_;
  bool computed_ = false;
};

}  // namespace

std::unique_ptr<DevicePlan> make_gpu_plan(const ranklet::Variant& rv, const auto_mi::Variant& av) {
  return std::make_unique<GpuPipelinePlan>(rv, av);
}

Result run_gpu_plan(const ranklet::Variant& rv, const auto_mi::Variant& av, const HostImage& input, const Options& opt,
                    const char* nvtx_name) {
  nvtx::Range range(nvtx_name);
  require_gpu();
  GpuPipelinePlan plan(rv, av);
  return plan_end_to_end(plan, input, opt);
}

}  // namespace repix::ami
