// The plan of the edt queue ladder (gpu-queue-atomic / -scan / -tq): Algorithm 6 as one
// TilePropagator whose window is the whole image, then the distances from the sites.
//   propagate  init (sites, contour seeds) + queue episodes until one completes without
//              overflow (gpu_tile.cu, queue.cuh);
//   distance   float32 distance_from_sq of each pixel's site, exactly as seq computes it, so the
//              distances are bit-identical wherever the two agree on the site's distance.
// Stats: initially_queued = contour pixels, total_queued = every element queued, passes = queue
// rounds (the longest block's, summed over episodes), overflow_reruns = re-seeded episodes.
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_queue_core.hpp"
#include "edt/gpu_tile.hpp"
#include "edt/variants.hpp"

namespace repix::edt {
namespace {

class QueuePlan final : public DevicePlan {
 public:
  explicit QueuePlan(iwpp::QueuePolicy policy) : policy_(policy) {}

  void setup(const InputDesc& in, const Options& opt, cudaStream_t) override {
    const DType dtype = in.dtype;
    const Shape& shape = in.shape;
    ready_ = computed_ = false;
    if (shape.size() <= 0 || shape.ndim != 2) throw Error("edt: the queue variants need a non-empty 2D image, got " + shape.str());
    if (shape.nx > kMaxSide || shape.ny > kMaxSide) throw Error("edt: image " + shape.str() + " has a side over 2^30 pixels");
    if (shape.size() > queue_core::kMaxWindowPixels)
      throw Error("edt: image " + shape.str() + " has more than 2^32-1 pixels (the queue variants index pixels with 32 bits)");
    sites_.reset();  // the previous shape's workspace first
    distance_.reset();
    linear_sites_.reset();
    dtype_ = dtype;
    shape_ = shape;
    want_sites_ = opt.want_sites;
    const auto n = static_cast<std::size_t>(shape.size());
    tile_.setup(shape.nx, shape.ny, policy_, opt.queue_capacity);
    sites_.allocate(n);
    distance_.allocate(n);
    if (want_sites_) linear_sites_.allocate(n);
    ready_ = true;
  }

  void compute(const DeviceInputs& in, cudaStream_t stream) override {
    if (!ready_) throw Error("internal: edt plan compute() before setup()");
    const void* d_input = in.at(0);
    computed_ = false;
    const Window all{0, 0, shape_.nx, shape_.ny};
    tile_.reset_stats();
    {
      nvtx::Range r("propagate", shape_.size());
      tile_.init_and_propagate(d_input, dtype_, all, shape_.nx, shape_.ny, sites_.get(), stream);
    }
    {
      nvtx::Range r("distance", shape_.size());
      distances_from_sites(sites_.get(), all, shape_.nx, distance_.get(), want_sites_ ? linear_sites_.get() : nullptr,
                           stream);
    }
    computed_ = true;
  }

  Result result(cudaStream_t stream) override {
    if (!computed_) throw Error("internal: edt plan result() before compute()");
    Result r = download_result(shape_, distance_.get(), want_sites_ ? linear_sites_.get() : nullptr, stream);
    r.stats = tile_.stats();
    return r;
  }
  std::vector<DeviceOutput> device_outputs() const override {
    if (!computed_) throw Error("internal: edt plan device_outputs() before compute()");
    return device_outputs_of(shape_, distance_.get(), want_sites_ ? linear_sites_.get() : nullptr);
  }

 private:
  iwpp::QueuePolicy policy_;
  DType dtype_ = DType::u8;
  Shape shape_;
  bool want_sites_ = true, ready_ = false, computed_ = false;
  TilePropagator tile_;
  DeviceBuffer<std::int64_t> sites_, linear_sites_;
  DeviceBuffer<float> distance_;
};

}  // namespace

Variant make_queue_variant(iwpp::QueuePolicy policy, const std::string& id, const std::string& step,
                           const std::string& description) {
  const std::string nvtx_name = "edt/" + id;
  return {{id, true, step, description,
           [policy, nvtx_name](const HostImage& in, const Options& o) {
             return run_gpu_variant(nvtx_name.c_str(), QueuePlan(policy), in, o);
           },
           [policy] { return std::unique_ptr<DevicePlan>(new QueuePlan(policy)); }},
          /*exact=*/false};
}

}  // namespace repix::edt
