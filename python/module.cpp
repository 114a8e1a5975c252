// repix._native: the families' run commands in memory (family::Family::run_in_memory, and
// run_on_device for CuPy arrays), for the functions of repix/__init__.py. Generic over the families: an input is checked by the same code
// as an .npy file's (datasets::array_dtype, array_shape), then read in place; the options go
// through the family's own option table, as a command line's do; the outputs come back as NumPy
// arrays over the family's own buffers (no copy). The GIL is released while a family computes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "harness/args.hpp"
#include "harness/env.hpp"
#include "harness/family.hpp"

namespace nb = nanobind;

namespace {

using repix::DType;
using repix::HostImage;
using repix::Shape;

// Hands a HostImage the caller's array as its storage: the variants read the NumPy array in place.
class Borrowed final : public repix::HostMemorySource {
 public:
  Borrowed(const void* data, std::size_t bytes) : data_(const_cast<void*>(data)), bytes_(bytes) {}
  void* allocate(std::size_t bytes) override { return bytes == bytes_ ? data_ : nullptr; }
  bool release(void* p, std::size_t) noexcept override { return p == data_; }

 private:
  void* data_;
  std::size_t bytes_;
};

using InputArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// The inputs of one call: the arrays read in place, kept alive (and their lenders) until the
// family is done with them.
struct Inputs {
  std::vector<InputArray> arrays;
  std::deque<Borrowed> lenders;
  std::vector<HostImage> images;
};

// `given` (anything numpy.asarray takes) as input `name`: refused as an .npy file of its type and
// shape would be, then made C-contiguous and aligned (a copy only where it is not) and borrowed.
void add_input(Inputs& in, const std::string& name, nb::handle given) {
  const nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(given);
  const DType dtype = repix::datasets::array_dtype(nb::cast<std::string>(a.attr("dtype").attr("str")), name);
  const Shape shape = repix::datasets::array_shape(nb::cast<std::vector<std::int64_t>>(a.attr("shape")), name);
  a = np.attr("require")(a, nb::arg("requirements") = "CA");
  const InputArray& array = in.arrays.emplace_back(nb::cast<InputArray>(a));
  const std::size_t bytes = static_cast<std::size_t>(shape.size()) * repix::dtype_size(dtype);
  Borrowed& lender = in.lenders.emplace_back(array.data(), bytes);
  const HostImage& img = in.images.emplace_back(dtype, shape, lender);
  if (img.raw() != array.data()) throw repix::Error("internal: input " + name + " was not read in place");
}

nb::dlpack::dtype dlpack_of(const std::string& descr) {
  if (descr == "|u1") return nb::dtype<std::uint8_t>();
  if (descr == "<u2") return nb::dtype<std::uint16_t>();
  if (descr == "<i4") return nb::dtype<std::int32_t>();
  if (descr == "<i8") return nb::dtype<std::int64_t>();
  if (descr == "<f4") return nb::dtype<float>();
  if (descr == "<f8") return nb::dtype<double>();
  throw repix::Error("internal: output type " + descr + " has no NumPy counterpart here");
}

// An output as a NumPy array over the family's buffer, which the array keeps alive.
nb::object to_numpy(const repix::family::Array& a) {
  auto* keep = new std::shared_ptr<const void>(a.owner);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
  std::vector<std::size_t> shape(a.shape.begin(), a.shape.end());
  nb::ndarray<nb::numpy> array(const_cast<void*>(a.data), shape.size(), shape.data(), owner, nullptr,
                               dlpack_of(a.dtype));
  return nb::cast(array);
}

// A run's options as the command line's parsed arguments (names without "--", values as text).
repix::cli::Args args_of(const std::map<std::string, std::string>& options) {
  repix::cli::Args args;
  for (const auto& [k, v] : options) args.options.emplace(k, v);
  return args;
}

// `repix run <family>` in memory: `inputs` (name, array) in the family's input order, `options`
// as the command line names them, values as text. Returns the outputs in the family's order.
nb::list run(const std::string& family, const std::vector<std::pair<std::string, nb::object>>& inputs,
             const std::map<std::string, std::string>& options) {
  const repix::family::Family& f = repix::family::find(family);
  Inputs in;
  for (const auto& [name, array] : inputs) add_input(in, name, array);
  const repix::cli::Args args = args_of(options);
  std::vector<repix::family::Array> out;
  {
    nb::gil_scoped_release computing;
    out = f.run_in_memory(std::move(in.images), args);
  }
  nb::list result;
  for (const auto& a : out) result.append(to_numpy(a));
  return result;
}

// The C++ side of the module's overhead benchmark: the same in-memory run as `run`, `reps` times
// back to back in C++ alone (the arrays checked and borrowed once, as a C++ caller holding
// HostImages would; the outputs dropped): the seconds of each call. What `run` takes beyond this
// is what the Python call adds.
std::vector<double> time_run(const std::string& family, const std::vector<std::pair<std::string, nb::object>>& inputs,
                             const std::map<std::string, std::string>& options, int reps) {
  const repix::family::Family& f = repix::family::find(family);
  Inputs in;
  for (const auto& [name, array] : inputs) add_input(in, name, array);
  const repix::cli::Args args = args_of(options);
  std::vector<double> seconds;
  nb::gil_scoped_release computing;
  for (int r = 0; r < reps; ++r) {
    std::vector<HostImage> images;
    for (std::size_t i = 0; i < in.images.size(); ++i)
      images.emplace_back(in.images[i].dtype(), in.images[i].shape(), in.lenders[i]);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<repix::family::Array> out = f.run_in_memory(std::move(images), args);
    out.clear();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return seconds;
}

// ---- the CuPy path: inputs in device memory, read in place ----------------------------------

// An input in device memory as Python describes it: (name, data pointer, NumPy dtype string,
// shape). repix/__init__.py makes it from a CuPy array (or anything CuPy takes in place: DLPack,
// __cuda_array_interface__), C-contiguous, on the current device.
using DeviceInputArg = std::tuple<std::string, std::uintptr_t, std::string, std::vector<std::int64_t>>;

std::vector<repix::family::DeviceImage> device_images(const std::vector<DeviceInputArg>& inputs) {
  std::vector<repix::family::DeviceImage> out;
  for (const auto& [name, data, descr, dims] : inputs) {
    repix::family::DeviceImage img;
    img.dtype = repix::datasets::array_dtype(descr, name);
    img.shape = repix::datasets::array_shape(dims, name);
    img.data = reinterpret_cast<const void*>(data);
    out.push_back(img);
  }
  return out;
}

// `repix run <family>` on device inputs, on the caller's stream (CuPy's current stream, as an
// integer). `allocate(dtype, shape)` makes an output array on the device and returns (array, its
// data pointer); every output comes back as one of those arrays (Family::run_on_device).
nb::list run_device(const std::string& family, const std::vector<DeviceInputArg>& inputs,
                    const std::map<std::string, std::string>& options, std::uintptr_t stream, nb::callable allocate) {
  const repix::family::Family& f = repix::family::find(family);
  const std::vector<repix::family::DeviceImage> images = device_images(inputs);
  const repix::cli::Args args = args_of(options);
  std::vector<nb::object> made;  // the arrays allocate() made, in the order of the device outputs
  repix::family::DeviceCall call;
  call.stream = reinterpret_cast<cudaStream_t>(stream);
  call.allocate = [&](const std::string& dtype, const std::vector<std::int64_t>& shape) {
    nb::gil_scoped_acquire python;
    nb::tuple got = nb::cast<nb::tuple>(allocate(dtype, shape));
    made.push_back(got[0]);
    return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(got[1]));
  };
  std::vector<repix::family::Array> out;
  {
    nb::gil_scoped_release computing;
    out = f.run_on_device(images, args, call);
  }
  if (made.size() != out.size()) throw repix::Error("internal: " + family + " made outputs off the device");
  nb::list result;
  for (const nb::object& a : made) result.append(a);
  return result;
}

// The C++ side of the overhead benchmark's CuPy rows: the device run `reps` times in C++ alone on
// the caller's stream, each call synchronised, its device outputs copied into buffers allocated
// once (as a C++ caller reusing its output arrays would): the seconds of each call.
std::vector<double> time_run_device(const std::string& family, const std::vector<DeviceInputArg>& inputs,
                                    const std::map<std::string, std::string>& options, std::uintptr_t stream, int reps) {
  const repix::family::Family& f = repix::family::find(family);
  const std::vector<repix::family::DeviceImage> images = device_images(inputs);
  const repix::cli::Args args = args_of(options);
  std::vector<repix::DeviceBuffer<unsigned char>> outputs;
  std::size_t next = 0;
  repix::family::DeviceCall call;
  call.stream = reinterpret_cast<cudaStream_t>(stream);
  call.allocate = [&](const std::string& dtype, const std::vector<std::int64_t>& shape) {
    repix::family::Array like;
    like.dtype = dtype;
    like.shape = shape;
    if (next == outputs.size()) outputs.emplace_back(repix::family::bytes_of(like));
    return static_cast<void*>(outputs.at(next++).get());
  };
  std::vector<double> seconds;
  nb::gil_scoped_release computing;
  for (int r = 0; r < reps; ++r) {
    next = 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<repix::family::Array> out = f.run_on_device(images, args, call);
    REPIX_CUDA(cudaStreamSynchronize(call.stream));
    out.clear();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return seconds;
}

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const auto& f : repix::family::all()) out.push_back(f->name());
  return out;
}

// The variants of `family` this machine can run (GPU variants only where a GPU is usable); with
// `device_arrays`, only those that read device arrays in place (GPU variants with a plan).
std::vector<std::string> variants(const std::string& family, bool device_arrays) {
  std::vector<std::string> out;
  const bool gpu = repix::gpu_available();
  for (const auto& v : repix::family::find(family).variants())
    if ((!v.gpu || gpu) && (!device_arrays || v.kernel_scope)) out.push_back(v.id);
  return out;
}

// repix's errors as Python's: a wrong element type is a TypeError, a bad value (an input, an
// option, a name) a ValueError, memory that does not fit a MemoryError, a failing CUDA call a
// RuntimeError. The message is the command line's.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const repix::WrongType& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const repix::CudaOutOfMemory& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const repix::CudaError& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const repix::Error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const repix::cli::UsageError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::bad_alloc& e) {
    PyErr_SetString(PyExc_MemoryError, repix::message_of(e).c_str());
  }
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "repix's families in memory; use the functions of the repix package";
  nb::register_exception_translator(translate);
  m.def("tool_info", [] { return repix::env::tool_info().dump(); },
        "The version and commit as repix's reports record them (JSON text).");
  m.def("families", &families, "Every family, in repix's order.");
  m.def("run_interface", [](const std::string& family) { return repix::family::find(family).run_interface().dump(); },
        nb::arg("family"), "A family's run command as data (JSON text): inputs, outputs, options with their defaults.");
  m.def("variants", &variants, nb::arg("family"), nb::arg("device_arrays") = false,
        "The variants of a family this machine can run (with device_arrays: those that read GPU arrays in place).");
  m.def("gpu_available", &repix::gpu_available, "Whether a CUDA GPU is usable here.");
  m.def("time_run", &time_run, nb::arg("family"), nb::arg("inputs"), nb::arg("options"), nb::arg("reps"),
        "The same run `reps` times in C++ alone: the seconds of each (the overhead benchmark's baseline).");
  m.def("run", &run, nb::arg("family"), nb::arg("inputs"), nb::arg("options"),
        "A family's run command in memory: [(name, array)] in, the outputs as NumPy arrays.");
  m.def("run_device", &run_device, nb::arg("family"), nb::arg("inputs"), nb::arg("options"), nb::arg("stream"),
        nb::arg("allocate"),
        "A family's run command on device arrays read in place: [(name, pointer, dtype, shape)] in, on `stream`; "
        "the outputs in arrays made by allocate(dtype, shape) -> (array, pointer).");
  m.def("time_run_device", &time_run_device, nb::arg("family"), nb::arg("inputs"), nb::arg("options"),
        nb::arg("stream"), nb::arg("reps"),
        "The same device run `reps` times in C++ alone, each synchronised: the seconds of each (the overhead "
        "benchmark's baseline for device arrays).");
}
