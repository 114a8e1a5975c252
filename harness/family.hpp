// The one interface through which the harness reaches every family (gunrock's shape: options,
// problem, enactor). `repix run`, `profile`, `bench`, `list` and the tables loop over families
// and call these; nothing generic names a family. Each family implements it in its adapter,
// harness/families/<family>/adapter.cpp, on top of FamilyOf (family_of.hpp), which holds the
// generic machinery (the bench's verified and timed cases, the commands); the adapter supplies
// only the family's knowledge (its inputs, reference, verification, stats JSON, outputs,
// options). A new family is an adapter plus one line in families.cpp.
#pragma once
#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/image.hpp"
#include "harness/args.hpp"
#include "harness/bench.hpp"
#include "harness/options.hpp"
#include "harness/registry.hpp"

namespace repix::family {

// How an output compares with the family's reference: verified or not, one line, and error
// statistics where equivalence is approximate.
struct Verdict {
  bool ok = false;
  std::string text;
  nlohmann::json errors = nlohmann::json::object();
};

// An output of a run in memory (Family::run_in_memory): its name, its element type as NumPy
// spells it ("<f4", "<i8", "|u1"), its shape in NumPy's order (slowest first) and its bytes, which
// `owner` keeps alive (the Python module hands them to NumPy without a copy).
struct Array {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::shared_ptr<const void> owner;
  bool on_device = false;  // run_on_device's: `data` is the caller's device array
};

// An input of a run on the device (Family::run_on_device): device memory of the current device.
struct DeviceImage {
  DType dtype = DType::u8;
  Shape shape;
  const void* data = nullptr;
};
// The caller's side of a run on the device: its stream, and `allocate`, which makes an array of
// the caller's of that element type (NumPy's spelling) and shape (NumPy's order) on the current
// device and returns its data pointer (the Python module: a CuPy array, from CuPy's memory pool).
struct DeviceCall {
  cudaStream_t stream = nullptr;
  std::function<void*(const std::string& dtype, const std::vector<std::int64_t>& shape)> allocate;
};

template <class T> constexpr const char* numpy_dtype();
template <> constexpr const char* numpy_dtype<std::uint8_t>() { return "|u1"; }
template <> constexpr const char* numpy_dtype<std::uint16_t>() { return "<u2"; }
template <> constexpr const char* numpy_dtype<std::int32_t>() { return "<i4"; }
template <> constexpr const char* numpy_dtype<std::int64_t>() { return "<i8"; }
template <> constexpr const char* numpy_dtype<float>() { return "<f4"; }
template <> constexpr const char* numpy_dtype<double>() { return "<f8"; }

// The bytes of an Array's elements.
std::size_t bytes_of(const Array& a);
// A shape in NumPy's order (slowest first).
std::vector<std::int64_t> numpy_shape(const Shape& s);
// A vector as an Array, moved (not copied) into the Array's keeping.
template <class Vec>
Array array_of(std::string name, Vec v, std::vector<std::int64_t> shape) {
  auto held = std::make_shared<Vec>(std::move(v));
  return {std::move(name), numpy_dtype<typename Vec::value_type>(), std::move(shape), held->data(), held};
}
// An image as an Array of its shape, moved into the Array's keeping.
Array array_of(std::string name, HostImage img);
// The same, seen as `dims` (NumPy's order; as many elements as the image).
Array array_of(std::string name, HostImage img, std::vector<std::int64_t> dims);

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string name() const = 0;
  // The folder its variants live in, algorithms/<folder>/ (default: its name). Families built on
  // another's variants name that one's folder (area-opening: maxtree's trees, then the filter).
  virtual std::string algorithms() const { return name(); }
  // The registry's variants, in ablation order.
  virtual std::vector<registry::VariantInfo> variants() const = 0;
  // The options of the family's commands (declared once, adapter.cpp).
  virtual std::vector<options::Spec> option_specs() const = 0;
  // The family's datasets in the named bench suite (harness/suites.cpp names the suites); empty
  // when it has none there.
  virtual std::vector<std::string> suite_datasets(const std::string& suite) const = 0;
  // `repix help`'s lines for `repix run <name>`.
  virtual std::string run_usage() const = 0;
  // `repix run <name> ...`: one variant on one input, results to files; returns the exit code.
  virtual int run(const cli::Args& a) const = 0;
  // `repix profile <name> --variant V --dataset SPEC [--iterations N]`: NVTX-ranged runs for Nsight.
  virtual int profile(const cli::Args& a) const = 0;
  // A lower bound of the host memory a measurement on the dataset `spec` (bench, table) takes: its
  // inputs generated (the generators' working memory included) and held, and the reference's and
  // one variant's outputs. The bench and the tables refuse a dataset above the available memory
  // before anything is generated.
  virtual std::uint64_t host_bytes(const std::string& spec) const = 0;
  // The variant that computes the reference of a measurement on `spec` under the family's
  // `options`: the reference variant, or on inputs where it would take seconds, a faster CPU variant
  // the family's tests prove identical to it.
  virtual std::string reference_variant(const std::string& spec, const cli::Args& options) const = 0;
  // `repix bench`: appends the verified, timed cases of ctx.req's variants (and peers) on
  // ctx.specs, in the order dataset, variant, scope (kernel, end-to-end, with-io), then peers.
  virtual void add_bench_cases(bench::Context& ctx, std::vector<bench::Case>& cases) const = 0;

  // ---- one measurement at a time, the tables' way (the same runs, checks and timers) ----
  // A dataset's inputs, loaded once for several measurements, and its reference output.
  class Problem {
   public:
    virtual ~Problem() = default;
    virtual const std::string& spec() const = 0;  // canonical
  };
  // The problem of `spec` under the family's options `base` (its reference follows them, e.g.
  // --connectivity 4). Generates the inputs now.
  virtual std::unique_ptr<Problem> problem(const std::string& spec, const cli::Args& base) const = 0;
  // `variant` on `p` in `scope` ("kernel": inputs on the GPU, CUDA events, L2 flushed; "end-to-end":
  // host clock), with `options` (the family's, as on a command line) over the problem's base ones.
  // Its first output is checked against the reference before any sample counts (a wrong one ends
  // the measurement: not_run "wrong output: ..."), a kernel's again after its samples. Measuring
  // the reference variant end to end while the problem has no reference yet makes its first
  // output the reference ("the reference"); otherwise the reference is computed, untimed, when
  // first needed. Never throws for the variant's own failures: they come back as not_run
  // ("error: ...", "no GPU", "absent: ...", "skipped: ...").
  virtual report::Result measure(Problem& p, const std::string& variant, const std::string& scope,
                                 const bench::Reps& reps, const cli::Args& options) const = 0;

  // Whether `repix run <family> --distributed` runs (under mpirun: harness/distributed/).
  virtual bool has_distributed_run() const { return false; }
  // `mpirun -np N repix bench --distributed --family <family> ...`: the run's inputs and options
  // (no outputs), --samples, --warmups, --out; `command` is recorded in the report.
  virtual int bench_distributed(const cli::Args& a, const std::string& command) const = 0;

  // ---- `repix run` in memory: the Python module ----
  // The run command's interface as data, for the Python module's functions and their help: its
  // inputs and outputs (option names, in order; each output's format) and every option it takes
  // (name, default as the command line writes it, help, whether it is a flag).
  virtual nlohmann::json run_interface() const = 0;
  // The run command on inputs already in memory (`inputs` in the family's input order), with its
  // options as the command line names them ("variant" among them; absent: the command's default
  // variant): the same checks, default variant and errors as `repix run <name>`, the outputs
  // returned instead of written.
  virtual std::vector<Array> run_in_memory(std::vector<HostImage> inputs, const cli::Args& options) const = 0;
  // The same on inputs in device memory of the current device, read in place on `call.stream`
  // (the caller's: CuPy's current stream) with a GPU variant's plan, kept for the next call
  // with the same variant, options and input type and shape. Every output comes back in an
  // array of the caller's (call.allocate), with `on_device` set: copied device to device on the
  // stream where the plan leaves it on the device, up from the host where the plan finishes it
  // there (a curve, a few features). A CPU variant is refused: its input must be on the host.
  virtual std::vector<Array> run_on_device(const std::vector<DeviceImage>& inputs, const cli::Args& options,
                                           const DeviceCall& call) const = 0;
};

// Every family, in the order of the issues (families.cpp: one line each).
const std::vector<std::unique_ptr<Family>>& all();
// The families with a distributed run, comma-separated ("none" when none has).
std::string distributed_families();
// Throws repix::Error listing the known families.
const Family& find(const std::string& name);

}  // namespace repix::family
