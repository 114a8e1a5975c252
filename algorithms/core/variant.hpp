// The variant model every family shares. A family (algorithms/<family>/<family>.hpp) adds only its
// types: its Options, its Result (the host output, with its Stats), its Stats (what a run counts
// of itself) and the signature of its end-to-end run. Each variant is one file named after its id
// and one registration line with its metadata (register.cpp); the harness reaches every family's
// variants through the same shape (harness/family_of.hpp).
//
//   run        host inputs in, host result out: what `repix run` and the end-to-end scope time.
//   make_plan  GPU variants: a DevicePlan, the device-resident form the kernel scope times:
//              setup() allocates everything for inputs of one type and shape (not timed),
//              compute() runs on device-resident inputs asynchronously on a stream, result()
//              brings the last compute()'s output to the host, stats() says what it counted;
//              device_outputs() says where that output lies on the device, for a caller that
//              keeps it there (the Python module's CuPy path).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"

namespace repix {

// The element type and shape of a call's input images (every input of one call shares them:
// reconstruct's marker and mask, for one).
struct InputDesc {
  DType dtype = DType::u8;
  Shape shape;
};

// Device-resident inputs of one call, in the family's input order (ecc: {image}; reconstruct:
// {marker, mask}).
using DeviceInputs = std::vector<const void*>;

// One output of a plan's last compute() in its device buffers: its element type as NumPy spells
// it ("<f4", "<i8"), its shape in NumPy's order (slowest first), its bytes.
struct DeviceOutput {
  const void* data = nullptr;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;
};
// An image-shaped output of `dtype` ("<f4") with `element_bytes` bytes an element; `leading`
// dimensions go before the image's own (ranklet's windows and orientations).
inline DeviceOutput image_output(const void* data, std::string dtype, std::size_t element_bytes, const Shape& s,
                                 std::vector<std::int64_t> leading = {}) {
  std::vector<std::int64_t> shape = std::move(leading);
  if (s.ndim == 3) shape.push_back(s.nz);
  if (s.ndim >= 2) shape.push_back(s.ny);
  shape.push_back(s.nx);
  std::size_t count = 1;
  for (const std::int64_t d : shape) count *= static_cast<std::size_t>(d);
  return {data, std::move(dtype), std::move(shape), count * element_bytes};
}
// The same for an output of the input's own element type (reconstruct, area opening).
inline DeviceOutput image_output(const void* data, DType dtype, const Shape& s) {
  return image_output(data, dtype == DType::u8 ? "|u1" : dtype == DType::u16 ? "<u2" : "<f4", dtype_size(dtype), s);
}

template <class Options, class Result, class Stats>
class DevicePlan {
 public:
  using options_type = Options;
  using result_type = Result;
  using stats_type = Stats;
  virtual ~DevicePlan() = default;
  // Allocates all workspace compute() needs for inputs like `in`. Not timed.
  virtual void setup(const InputDesc& in, const Options& opt, cudaStream_t stream) = 0;
  // Device-resident inputs in, the output in the plan's device buffers; asynchronous on `stream`
  // (a plan may synchronise it for convergence checks).
  virtual void compute(const DeviceInputs& in, cudaStream_t stream) = 0;
  // The output of the last compute(), copied to the host; synchronises `stream`.
  virtual Result result(cudaStream_t stream) = 0;
  // What the last compute() counted of itself (phase times, fallbacks), without copying its
  // output; valid once `stream` has been synchronised after it.
  virtual Stats stats() const { return {}; }
  // The outputs of the last compute() where they lie on the device, in the order of the family's
  // run outputs (those the plan was set up to make: edt's sites only when asked for); valid until
  // the next compute() on this plan, once `stream` reaches them. Empty: the output is finished
  // on the host (the ECC's curve, the AMI features: a few numbers made from device histograms),
  // and result() is the only way to it.
  virtual std::vector<DeviceOutput> device_outputs() const { return {}; }
};

// The metadata of a registration line, and the variant's entry points.
template <class RunSignature, class Plan>
struct Variant {
  std::string id;           // stable, lowercase: seq, omp, gpu-naive, gpu-opt, ...; the file's name
  bool gpu = false;         // runs on the GPU (needs one)
  std::string step;         // the ablation step it represents
  std::string description;  // one line
  std::function<RunSignature> run;
  std::function<std::unique_ptr<Plan>()> make_plan;  // GPU variants with a kernel scope; else empty
};

}  // namespace repix
