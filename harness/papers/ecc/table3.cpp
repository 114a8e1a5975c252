// ECC paper Table 3: batches of N small images read from files, the GPU's fixed costs amortised;
// every image of every batch checked against seq.
#include "harness/papers/ecc/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/nvtx.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/batch.hpp"
#include "ecc/ecc.hpp"
#include "harness/json_fields.hpp"

namespace repix::tables::ecc_tables {

using nlohmann::json;

// omp takes milliseconds per small image (thread start-up on every call): 10000 x 128^2 would
// take a minute, so the CPU column stops at 2^27 voxels per batch.
constexpr double kCpuMaxBatchVoxels = double(1 << 27);

BatchRun batch(const std::string& input, const std::string& spec0, int count, int reps, ecc::BatchPath path,
               const TempDir& dir) {
  BatchRun run;
  run.input = input;
  run.count = count;
  run.spec = datasets::Spec::parse(spec0).str();
  const int pool = std::min(count, 16);  // distinct images, cycled: generating 1000 GRFs would dominate
  run.distinct = pool;
  const Shape spec_shape = datasets::spec_shape(datasets::Spec::parse(spec0));
  const bool cpu_column = static_cast<double>(count) * static_cast<double>(spec_shape.size()) <= kCpuMaxBatchVoxels;
  if (!cpu_column && !gpu_available()) {  // nothing would run: skip generating and writing
    run.shape = spec_shape.str();
    run.verified = true;
    run.verification = "not run (no GPU, and the CPU column is over its budget at this size)";
    return run;
  }
  std::vector<HostImage> images;
  std::vector<ecc::Curve> refs;
  for (int j = 0; j < pool; ++j) {
    images.push_back(datasets::generate(datasets::Spec::parse(with_seed(spec0, 1 + j))));
    refs.push_back(ecc::run_seq(images.back(), {}));
  }
  const DType dt = images[0].dtype();
  const Shape shape = images[0].shape();
  run.shape = shape.str();
  const std::size_t bytes = images[0].bytes();
  std::vector<std::string> paths;
  for (int i = 0; i < count; ++i) {
    paths.push_back((dir.path / (input + "-" + std::to_string(count) + "-" + std::to_string(i) + ".npy")).string());
    datasets::write_npy(images[i % pool], paths.back());
  }
  std::string mismatch;
  auto check = [&](const std::vector<ecc::Curve>& got, const char* what) {
    for (int i = 0; i < count && mismatch.empty(); ++i)
      if (!(got[i] == refs[i % pool])) mismatch = std::string(what) + ": image " + std::to_string(i) + " differs from seq";
  };
  // CPU: read + omp per image, up to a batch size that keeps a device round in budget (omp takes
  // milliseconds per 128^2 float image: it is built for large images).
  if (cpu_column) {
    std::vector<ecc::Curve> got;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& p : paths) got.push_back(ecc::run_omp(datasets::read_npy(p), {}));
    run.cpu_ms.push_back(ms_since(t0));
    check(got, "omp");
  }
  if (gpu_available()) {
    run.gpu = true;
    std::vector<ecc::Curve> got;
    for (int rep = 0; rep < reps; ++rep) {
      nvtx::Range range("ecc-table3/batch", count);
      const auto t0 = std::chrono::steady_clock::now();
      HostBuffer host(bytes * count, /*pinned=*/true);
      DeviceBuffer<unsigned char> dev(bytes * count);
      ecc::BatchRunner runner(dt, shape, 4, path);
      run.path = ecc::batch_path_name(runner.path());
      CudaStream s;
      const auto r0 = std::chrono::steady_clock::now();
      auto* dst = static_cast<unsigned char*>(host.data());
      for (int i = 0; i < count; ++i) datasets::open_npy_source(paths[i])->read(0, slab_count(shape), dst + bytes * i);
      run.read_ms.push_back(ms_since(r0));
      REPIX_CUDA(cudaMemcpyAsync(dev.get(), host.data(), bytes * count, cudaMemcpyHostToDevice, s.get()));
      s.sync();
      got = runner.run(dev.get(), count);
      run.overall_ms.push_back(ms_since(t0));
      // The ECC alone on the now device-resident batch (run() is synchronous: host clock).
      const auto d0 = std::chrono::steady_clock::now();
      got = runner.run(dev.get(), count);
      run.device_ms.push_back(ms_since(d0));
    }
    check(got, ("GPU batch, " + run.path).c_str());
  }
  const bool ran = run.gpu || !run.cpu_ms.empty();
  run.verified = mismatch.empty();
  run.verification = !run.verified ? mismatch
                     : ran        ? "every image: exact match with seq (" + std::to_string(pool) + " distinct images)"
                                  : "not run (no GPU, and the CPU column is over its budget at this size)";
  for (const auto& p : paths) std::filesystem::remove(p);
  return run;
}

int table3(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session) {
  const bool quick = meta.sizes == "quick";
  if (meta.sizes != "quick" && meta.sizes != "default" && meta.sizes != "paper")
    throw cli::UsageError("--sizes for ecc-3: quick, default or paper");
  // The paper's groups: uniform float32 noise 128^2 and GRF 128^3.
  std::vector<int> c2 = quick ? std::vector<int>{1, 4} : std::vector<int>{1, 100, 1000, 10000};
  std::vector<int> c3 = quick ? std::vector<int>{1, 2} : std::vector<int>{1, 10, 100, 1000};
  if (a.has("counts-2d")) c2 = parse_counts(a.get("counts-2d"));
  if (a.has("counts-3d")) c3 = parse_counts(a.get("counts-3d"));
  // --dataset-2d/3d replace a group's images (e.g. to time other small shapes or dtypes); the row
  // is labelled with the dataset kind, so only the paper's own inputs meet the paper's numbers.
  const std::string s2 = a.get("dataset-2d", "uniform:128x128:seed=1");
  const std::string s3 = a.get("dataset-3d", quick ? "grf:32x32x32:alpha=3:seed=1" : "grf:128x128x128:alpha=3:seed=1");
  ecc::BatchPath path = ecc::BatchPath::automatic;
  try {
    path = ecc::parse_batch_path(a.get("batch-path", "auto"));
  } catch (const Error& e) {
    throw cli::UsageError(std::string("--batch-path: ") + e.what());
  }
  const double ctx = session.take<double>("cuda context", [] { return context_ms(); }).value_or(-1.0);
  std::optional<TempDir> dir;  // only when measuring
  if (!session.replaying()) dir.emplace("ecc-table3");
  std::vector<BatchRun> runs;
  struct Group {
    std::string spec;
    std::vector<int> counts;
    int reps_above_100;  // repetitions of the batches of more than 100 images
  };
  for (const Group& group : {Group{s2, c2, 3}, Group{s3, c3, 2}}) {
    const datasets::Spec parsed = datasets::Spec::parse(group.spec);
    const Shape shape = datasets::spec_shape(parsed);
    // small-kernel is forced only where the images fit it; the GPU path column shows what ran.
    const bool fits = ecc::BatchRunner::small_kernel_fits(shape);
    const ecc::BatchPath group_path = path == ecc::BatchPath::small_kernel && !fits ? ecc::BatchPath::per_image : path;
    if (group_path != path)
      std::fprintf(stderr, "repix table ecc-3: %s images are too large for small-kernel: per-image\n", shape.str().c_str());
    for (int n : group.counts) {
      const auto run = session.take<BatchRun>(parsed.kind + " " + shape.str() + " x" + std::to_string(n), [&] {
        std::fprintf(stderr, "repix table ecc-3: %s %s x %d...\n", parsed.kind.c_str(), shape.str().c_str(), n);
        return batch(parsed.kind, group.spec, n, n <= 100 ? 5 : group.reps_above_100, group_path, *dir);
      });
      if (run) runs.push_back(*run);
    }
  }
  session.stamp(meta);
  std::cout << ecc_table3(ecc_paper(3, a.get("paper")), runs, ctx, meta, out_dir);
  int code = 0;
  for (const auto& r : runs)
    if (!r.verified) {
      std::fprintf(stderr, "repix table ecc-3: %s x%d: %s\n", r.input.c_str(), r.count, r.verification.c_str());
      code = 1;
    }
  return code;
}

}  // namespace repix::tables::ecc_tables
