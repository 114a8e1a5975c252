#include "harness/distributed/driver.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "harness/env.hpp"
#include "harness/json_text.hpp"
#include "harness/report.hpp"

namespace repix::distributed {

namespace {

// Every rank's `mine`, in rank order, at rank 0 (empty elsewhere).
std::vector<nlohmann::json> gather_json(const Comm& comm, const nlohmann::json& mine) {
  const std::string text = mine.dump();
  std::vector<nlohmann::json> out;
  for (const std::vector<char>& bytes : comm.gather_to_root(std::vector<char>(text.begin(), text.end())))
    out.push_back(nlohmann::json::parse(bytes.begin(), bytes.end()));
  return out;
}

// The record's "distributed" object: ranks, split, every rank's part (rank_part() with the
// driver's times), the MPI library.
nlohmann::json layout(const Comm& comm, const Job& job, const std::vector<nlohmann::json>& parts) {
  return {{"ranks", comm.size()}, {"split", job.split()}, {"parts", parts}, {"mpi", mpi_library()}};
}

}  // namespace

void on_every_rank(const Comm& comm, const std::function<void()>& local) {
  std::string error;
  try {
    local();
  } catch (const std::exception& e) {
    error = "rank " + std::to_string(comm.rank()) + ": " + message_of(e);
  }
  comm.throw_first_error(error);
}

int said_once(const std::function<int()>& body) {
  try {
    return body();
  } catch (const SaidByRoot&) {
    throw;
  } catch (const cli::UsageError& e) {
    if (Comm::world().root()) throw;
    throw SaidByRoot(e.what(), 2);
  } catch (const UnknownName& e) {
    if (Comm::world().root()) throw;
    throw SaidByRoot(e.what(), 2);
  } catch (const Error& e) {
    if (Comm::world().root()) throw;
    throw SaidByRoot(e.what(), 1);
  }
}

void refuse_multi_device(const std::string& variant, const std::string& split) {
  if (variant == "multi-device")
    throw cli::UsageError("--distributed shares the " + split + " out over the ranks (one GPU a rank); --variant "
                          "multi-device does not apply");
}

std::string npy_output(const cli::Args& a, const std::string& option) {
  const std::string path = a.get(option);
  if (!path.empty() && datasets::detail::extension(path) != ".npy")
    throw cli::UsageError("--" + option + " of a distributed run is an .npy file (each rank writes its part of it), got '" +
                          path + "'");
  return path;
}

int use_rank_gpu(const Comm& comm) {
  require_gpu();
  int devices = 0;
  REPIX_CUDA(cudaGetDeviceCount(&devices));
  const int device = comm.rank() % devices;
  REPIX_CUDA(cudaSetDevice(device));
  return device;
}

int run(Job& job, const std::string& json_out) {
  const Comm& comm = Comm::world();
  comm.barrier();
  const double t0 = comm.wtime();
  on_every_rank(comm, [&] { job.load(); });
  const double loaded = comm.wtime();
  job.compute();
  const double computed = comm.wtime();
  job.write();
  comm.barrier();
  const double slowest_ms = 1e3 * (comm.wtime() - t0);
  nlohmann::json mine = job.rank_part();
  mine["rank"] = comm.rank();
  mine["host"] = env::hostname();
  mine["load_ms"] = 1e3 * (loaded - t0);
  mine["compute_ms"] = 1e3 * (computed - loaded);
  const std::vector<nlohmann::json> parts = gather_json(comm, mine);
  if (!comm.root() || json_out.empty()) return 0;
  nlohmann::json j = job.record();
  j["distributed"] = layout(comm, job, parts);
  j["ms"] = slowest_ms;
  write_file_atomic(json_out, json_text::dump(j, 1) + "\n");
  return 0;
}

int bench(Job& job, const BenchRequest& request) {
  const Comm& comm = Comm::world();
  if (request.samples < 1) throw Error("--samples must be at least 1");
  on_every_rank(comm, [&] { job.load(); });
  for (int w = 0; w < request.warmups; ++w) job.compute();
  std::vector<double> own, span;
  for (int s = 0; s < request.samples; ++s) {
    comm.barrier();
    const double t0 = comm.wtime();
    job.compute();
    own.push_back(1e3 * (comm.wtime() - t0));
    comm.barrier();
    span.push_back(1e3 * (comm.wtime() - t0));
  }
  nlohmann::json mine = job.rank_part();
  mine["rank"] = comm.rank();
  mine["host"] = env::hostname();
  mine["samples_ms"] = own;
  mine["between_barriers_ms"] = span;
  mine["median_ms"] = report::summarize(own).median;
  const std::vector<nlohmann::json> parts = gather_json(comm, mine);
  if (!comm.root()) return 0;
  // A sample is the slowest rank's time between the two barriers (the ranks leave a barrier at
  // slightly different moments, so rank 0's own span is not always the longest).
  std::vector<double> slowest(static_cast<std::size_t>(request.samples), 0.0);
  for (const nlohmann::json& p : parts)
    for (std::size_t i = 0; i < slowest.size(); ++i)
      slowest[i] = std::max(slowest[i], p.at("between_barriers_ms").at(i).get<double>());
  const report::Stats st = report::summarize(slowest);
  nlohmann::json j = job.record();
  std::printf("%s distributed over %d ranks (%s): median %.3f ms, min %.3f, max %.3f of %d samples (the slowest rank's)\n",
              json_fields::field_or(j, "family", std::string("?")).c_str(), comm.size(), job.split().c_str(), st.median,
              st.min, st.max, request.samples);
  std::fflush(stdout);
  if (request.out.empty()) return 0;
  j["schema"] = "repix-distributed-bench";
  j["schema_version"] = 1;
  j["command"] = request.command;
  j["tool"] = env::tool_info();
  j["env"] = env::capture_environment();
  j["distributed"] = layout(comm, job, parts);
  j["warmups"] = request.warmups;
  j["samples_ms"] = slowest;
  j["median_ms"] = st.median;
  j["min_ms"] = st.min;
  j["max_ms"] = st.max;
  write_file_atomic(request.out, json_text::dump(j, 1) + "\n");
  return 0;
}

}  // namespace repix::distributed
