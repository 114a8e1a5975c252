#include "ecc/batch.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "ecc/gpu_batch_small.cuh"
#include "ecc/gpu_opt.cuh"

namespace repix::ecc {

namespace {

class Path {
 public:
  virtual ~Path() = default;
  virtual std::vector<Curve> run(const void* d_images, std::int64_t n) = 0;
  virtual int streams() const = 0;
  virtual void set_round_images_for_tests(std::int64_t) {}
};

// ---- small-kernel ------------------------------------------------------------------------------

// Results per round: bounds the device and pinned read-back buffers (two of each) while keeping
// a round's copy long enough to hide the next round's kernel behind it.
constexpr std::size_t kRoundBytes = std::size_t(16) << 20;
// ... and at most this many images, so that batches of tiny images still pipeline.
constexpr std::int64_t kMaxRoundImages = 4096;

class SmallKernelPath final : public Path {
 public:
  SmallKernelPath(DType dtype, const Shape& shape) : launcher_(dtype, shape) {}

  int streams() const override { return 2; }
  void set_round_images_for_tests(std::int64_t images) override { round_images_for_tests_ = images; }

  std::vector<Curve> run(const void* d_images, std::int64_t n) override {
    nvtx::Range range("ecc/batch-small-kernel", n);
    std::vector<Curve> out(static_cast<std::size_t>(n));
    if (n == 0) return out;
    const std::size_t slot_bytes = launcher_.slot_words() * sizeof(std::uint32_t);
    std::int64_t per = std::min<std::int64_t>(
        {n, kMaxRoundImages, std::max<std::int64_t>(1, static_cast<std::int64_t>(kRoundBytes / slot_bytes))});
    if (round_images_for_tests_ > 0) per = std::min(per, round_images_for_tests_);
    const std::size_t counts = small_batch::Launcher::counts_bytes(per);
    const std::size_t bytes = counts + static_cast<std::size_t>(per) * slot_bytes;
    for (Buffers& b : buf_) {
      if (b.dev.size() < bytes) {
        b.dev.allocate(bytes);
        // The read-back copies the counts of a full round and whole slots, which a last, partial
        // round and images with fewer values than voxels leave partly unwritten: initialised once,
        // they hold stale results at worst, never indeterminate bytes.
        REPIX_CUDA(cudaMemsetAsync(b.dev.get(), 0, bytes, b.stream.get()));
      }
      if (b.host.bytes() < bytes) b.host = HostBuffer(bytes, /*pinned=*/true);
    }
    const auto* images = static_cast<const unsigned char*>(d_images);
    const std::size_t image_bytes = launcher_.image_bytes();
    const std::int64_t rounds = (n + per - 1) / per;
    // Round r: one launch into device buffer r % 2, then one copy of its counts and of the slots
    // it used into the matching pinned buffer, both on stream r % 2.
    auto enqueue = [&](std::int64_t r) {
      Buffers& b = buf_[r % 2];
      const std::int64_t first = r * per, m = std::min(per, n - first);
      launcher_.launch(images + static_cast<std::size_t>(first) * image_bytes, m, launcher_.layout(b.dev.get(), per),
                       b.stream.get());
      REPIX_CUDA(cudaMemcpyAsync(b.host.data(), b.dev.get(), counts + static_cast<std::size_t>(m) * slot_bytes,
                                 cudaMemcpyDeviceToHost, b.stream.get()));
    };
    enqueue(0);
    for (std::int64_t r = 0; r < rounds; ++r) {
      // The buffer of round r + 1 was last read by round r - 1's split, which has finished.
      if (r + 1 < rounds) enqueue(r + 1);
      Buffers& b = buf_[r % 2];
      b.stream.sync();
      const std::int64_t first = r * per;
      split(b.host.data(), per, std::min(per, n - first), out.data() + first);
    }
    return out;
  }

 private:
  struct Buffers {
    CudaStream stream;
    DeviceBuffer<unsigned char> dev;
    HostBuffer host;
  };

  // Curves of the first m images of a read-back laid out for `per` images. Parallel over the
  // images: building the curves (allocation, first touch) costs more than their copy.
  void split(const void* host, std::int64_t per, std::int64_t m, Curve* out) const {
    const small_batch::Output o = launcher_.layout(const_cast<void*>(host), per);
    const std::size_t n = static_cast<std::size_t>(launcher_.elements()), words = launcher_.slot_words();
    std::atomic<bool> bad{false};
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      const std::size_t count = o.counts[i];
      if (count > n) {
        bad = true;
        continue;
      }
      const std::uint32_t* values = o.slots + static_cast<std::size_t>(i) * words;
      const auto* ecc = reinterpret_cast<const std::int32_t*>(values + n);
      Curve& c = out[i];
      c.values.resize(count);
      std::memcpy(c.values.data(), values, count * sizeof(float));
      c.ecc.assign(ecc, ecc + count);
    }
    if (bad) throw Error("internal: the batched small-image ECC kernel reported more values than voxels");
  }

  small_batch::Launcher launcher_;
  Buffers buf_[2];
  std::int64_t round_images_for_tests_ = 0;
};

// ---- per-image ---------------------------------------------------------------------------------

class PerImagePath final : public Path {
 public:
  PerImagePath(DType dtype, const Shape& shape, int streams)
      : image_bytes_(static_cast<std::size_t>(shape.size()) * dtype_size(dtype)) {
    for (int i = 0; i < std::max(1, streams); ++i) {
      streams_.push_back(std::make_unique<CudaStream>());
      plans_.push_back(std::make_unique<OptPlan>());
      plans_.back()->setup({dtype, shape}, {}, streams_.back()->get());
    }
  }

  int streams() const override { return static_cast<int>(plans_.size()); }

  std::vector<Curve> run(const void* d_images, std::int64_t n) override {
    nvtx::Range range("ecc/batch-per-image", n);
    const auto* base = static_cast<const unsigned char*>(d_images);
    const std::int64_t k = static_cast<std::int64_t>(plans_.size());
    // Image i goes to plan i % k. Each plan always has its next image queued behind the one being
    // collected, so the GPU works on up to k images while the host waits for the oldest.
    auto queue = [&](std::int64_t i) {
      plans_[i % k]->compute_queued(base + static_cast<std::size_t>(i) * image_bytes_, streams_[i % k]->get());
    };
    std::vector<Curve> out(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < std::min(k, n); ++i) queue(i);
    for (std::int64_t i = 0; i < n; ++i) {
      out[i] = plans_[i % k]->collect(streams_[i % k]->get());
      if (i + k < n) queue(i + k);
    }
    return out;
  }

 private:
  std::size_t image_bytes_;
  std::vector<std::unique_ptr<CudaStream>> streams_;
  std::vector<std::unique_ptr<OptPlan>> plans_;
};

}  // namespace

std::string batch_path_name(BatchPath path) {
  switch (path) {
    case BatchPath::small_kernel: return "small-kernel";
    case BatchPath::per_image: return "per-image";
    case BatchPath::automatic: break;
  }
  return "auto";
}

BatchPath parse_batch_path(const std::string& name) {
  for (BatchPath p : {BatchPath::automatic, BatchPath::small_kernel, BatchPath::per_image})
    if (name == batch_path_name(p)) return p;
  throw Error("unknown batch path '" + name + "' (choose auto, small-kernel or per-image)");
}

struct BatchRunner::Impl {
  BatchPath path = BatchPath::automatic;
  std::unique_ptr<Path> runner;
};

bool BatchRunner::small_kernel_fits(const Shape& shape) { return small_batch::Launcher::fits(shape); }

BatchRunner::BatchRunner(DType dtype, const Shape& shape, int streams, BatchPath path)
    : impl_(std::make_unique<Impl>()) {
  if (!gpu_available()) throw Error("batch ECC needs a GPU: " + gpu_unavailable_reason());
  if (path == BatchPath::automatic) path = small_kernel_fits(shape) ? BatchPath::small_kernel : BatchPath::per_image;
  if (path == BatchPath::small_kernel && !small_kernel_fits(shape))
    throw Error("batch path small-kernel takes images of at most " +
                std::to_string(small_batch::Launcher::max_elements()) + " elements, not " + shape.str());
  impl_->path = path;
  if (path == BatchPath::small_kernel)
    impl_->runner = std::make_unique<SmallKernelPath>(dtype, shape);
  else
    impl_->runner = std::make_unique<PerImagePath>(dtype, shape, streams);
}

BatchRunner::~BatchRunner() = default;

BatchPath BatchRunner::path() const { return impl_->path; }
int BatchRunner::streams() const { return impl_->runner->streams(); }
void BatchRunner::set_round_images_for_tests(std::int64_t images) { impl_->runner->set_round_images_for_tests(images); }

std::vector<Curve> BatchRunner::run(const void* d_images, std::int64_t n) {
  if (n < 0) throw Error("batch ECC: negative image count " + std::to_string(n));
  return impl_->runner->run(d_images, n);
}

}  // namespace repix::ecc
