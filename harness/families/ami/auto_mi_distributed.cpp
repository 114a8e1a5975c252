#include "harness/families/ami/auto_mi_distributed.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "ami/auto_mi/nmi_core.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/io.hpp"
#include "harness/distributed/comm.hpp"
#include "harness/json_text.hpp"

namespace repix::family::auto_mi_distributed {

namespace am = ami::auto_mi;

namespace {

// A rank's per-lag NMIs, horizontal then vertical, as bytes.
std::vector<char> pack(const am::Features& f) {
  std::vector<char> out((f.nmi_x.size() + f.nmi_y.size()) * sizeof(double));
  if (!f.nmi_x.empty()) std::memcpy(out.data(), f.nmi_x.data(), f.nmi_x.size() * sizeof(double));
  if (!f.nmi_y.empty())
    std::memcpy(out.data() + f.nmi_x.size() * sizeof(double), f.nmi_y.data(), f.nmi_y.size() * sizeof(double));
  return out;
}

// Rank `rank`'s lags of `direction` as the --json record says them: [first, last], or [] for none.
nlohmann::json lags_of(std::int64_t h, std::int64_t w, int direction, int rank, int ranks) {
  std::int64_t first = 1, last = 0;
  am::lag_range(h, w, direction, rank, ranks, &first, &last);
  return first <= last ? nlohmann::json{first, last} : nlohmann::json::array();
}

}  // namespace

int run(const cli::Args& a, const am::Options& given, const am::Variant& variant) {
  distributed::Comm& comm = distributed::Comm::world();
  if (variant.id == "multi-device")
    throw cli::UsageError("--distributed shares the lags out over the ranks (one GPU a rank); --variant multi-device "
                          "does not apply");
  const std::string input = a.need("input"), output = a.get("output"), json_out = a.get("json");
  am::Options opt = given;
  opt.part = comm.rank();
  opt.parts = comm.size();

  comm.barrier();
  const double t0 = comm.wtime();
  std::string error;
  am::Features mine;
  Shape shape;
  try {
    if (variant.gpu) {
      require_gpu();
      int devices = 0;
      REPIX_CUDA(cudaGetDeviceCount(&devices));
      REPIX_CUDA(cudaSetDevice(comm.rank() % devices));
    }
    const HostImage labels = datasets::load(input, variant.gpu);
    shape = labels.shape();
    mine = variant.run(labels, opt);
  } catch (const std::exception& e) {
    error = "rank " + std::to_string(comm.rank()) + ": " + message_of(e);
  }
  comm.throw_first_error(error);
  const std::vector<std::vector<char>> parts = comm.gather_to_root(pack(mine));
  const double seconds = comm.wtime() - t0;
  comm.barrier();
  const double slowest_ms = 1e3 * (comm.wtime() - t0);
  const std::vector<double> rank_s = comm.gather_to_root(seconds);
  if (!comm.root()) return 0;

  // Each lag's NMI is nonzero in one part at most: the sum over ranks is that part's value, exactly.
  am::Features whole;
  whole.nmi_x.assign(mine.nmi_x.size(), 0.0);
  whole.nmi_y.assign(mine.nmi_y.size(), 0.0);
  for (const std::vector<char>& p : parts) {
    if (p.size() != (whole.nmi_x.size() + whole.nmi_y.size()) * sizeof(double))
      throw Error("auto-mi: internal: a rank sent " + std::to_string(p.size()) + " bytes of lags");
    std::vector<double> v(p.size() / sizeof(double));
    if (!v.empty()) std::memcpy(v.data(), p.data(), p.size());
    for (std::size_t i = 0; i < whole.nmi_x.size(); ++i) whole.nmi_x[i] += v[i];
    for (std::size_t i = 0; i < whole.nmi_y.size(); ++i) whole.nmi_y[i] += v[whole.nmi_x.size() + i];
  }
  am::finish_features(whole, shape.ny, shape.nx);
  if (!output.empty()) am::write_csv(whole, output);
  if (!json_out.empty()) {
    nlohmann::json layout = nlohmann::json::array();
    for (int r = 0; r < comm.size(); ++r) {
      layout.push_back({{"rank", r},
                        {"horizontal_lags", lags_of(shape.ny, shape.nx, am::kHorizontal, r, comm.size())},
                        {"vertical_lags", lags_of(shape.ny, shape.nx, am::kVertical, r, comm.size())},
                        {"ms", 1e3 * rank_s[static_cast<std::size_t>(r)]}});
    }
    nlohmann::json j = {{"family", "auto-mi"},
                        {"variant", variant.id},
                        {"distributed", {{"ranks", comm.size()},
                                         {"split", "lags, ranges of equal pair counts"},
                                         {"parts", layout},
                                         {"mpi", distributed::mpi_library()}}},
                        {"input", input},
                        {"shape", shape.str()},
                        {"ms", slowest_ms},
                        {"horizontal", whole.horizontal},
                        {"vertical", whole.vertical}};
    write_file_atomic(json_out, json_text::dump(j, 1) + "\n");
  }
  return 0;
}

}  // namespace repix::family::auto_mi_distributed
