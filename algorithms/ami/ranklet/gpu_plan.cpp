// What the GPU ranklet variants share: the plan's buffers and download, and the end-to-end run.
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"
#include "core/download.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "core/plan_end_to_end.hpp"

namespace repix::ami::ranklet {

void PlanBase::setup(const InputDesc& in, const Options& opt, cudaStream_t) {
  if (in.shape.ndim != 2 || in.dtype != DType::u8 || in.shape.size() <= 0)
    throw Error("the ranklet transform takes a non-empty 2-D uint8 image; got " + dtype_name(in.dtype) + " " +
                in.shape.str());
  check_windows(opt.windows);
  opt_ = opt;
  shape_ = in.shape;
  out_.allocate(static_cast<std::size_t>(shape_.size()) * kOrientations * opt.windows.size());
  start_ = std::make_unique<CudaEvent>();
  stop_ = std::make_unique<CudaEvent>();
  ready_ = true;
  computed_ = false;
}

void PlanBase::compute(const DeviceInputs& in, cudaStream_t stream) {
  if (!ready_) throw Error("internal: ranklet plan used before setup()");
  const auto* d_in = static_cast<const std::uint8_t*>(in.at(0));
  const std::size_t plane = static_cast<std::size_t>(shape_.size());
  start_->record(stream);
  for (std::size_t w = 0; w < opt_.windows.size(); ++w)
    launch(d_in, shape_.nx, shape_.ny, opt_.windows[w], out_.get() + w * kOrientations * plane, opt_, stream);
  stop_->record(stream);
  computed_ = true;
}

Result PlanBase::result(cudaStream_t stream) {
  if (!computed_) throw Error("internal: ranklet plan result() before compute()");
  Result r = make_result(shape_, opt_.windows);
  download(r.ranklet.raw(), out_.get(), out_.bytes(), stream);  // 3.2 GB at 8192^2: staged (download.hpp)
  r.stats = stats();
  return r;
}

std::vector<DeviceOutput> PlanBase::device_outputs() const {
  if (!computed_) throw Error("internal: ranklet plan device_outputs() before compute()");
  const std::vector<std::int64_t> leading{static_cast<std::int64_t>(opt_.windows.size()), kOrientations};
  return {image_output(out_.get(), "<f4", sizeof(float), shape_, leading)};
}

Stats PlanBase::stats() const {
  Stats s;
  if (computed_) s.kernel_ms = stop_->ms_since(*start_);
  return s;
}

Variant make_gpu_variant(std::string id, std::string step, std::string description,
                         std::function<std::unique_ptr<DevicePlan>()> make_plan) {
  Variant v;
  v.id = std::move(id);
  v.gpu = true;
  v.step = std::move(step);
  v.description = std::move(description);
  v.make_plan = make_plan;
  const std::string nvtx_name = "ami/ranklet/" + v.id;
  v.run = [nvtx_name, make_plan](const HostImage& img, const Options& opt) {
    nvtx::Range range(nvtx_name.c_str());
    check_input(img);
    check_windows(opt.windows);
    require_gpu();
    std::unique_ptr<DevicePlan> plan = make_plan();
    return plan_end_to_end(*plan, img, opt);
  };
  return v;
}

}  // namespace repix::ami::ranklet
