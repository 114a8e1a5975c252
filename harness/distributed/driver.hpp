// The generic MPI driver of the distributed runs (issue 42): a family declares its decomposition
// as a Job (how a rank reads its part, computes and merges it, writes the outputs, and what its
// record says), and this driver runs it the same way for every family, once
// (`repix run FAMILY --distributed`) or as a measurement (`repix bench --distributed`).
//
// A measured sample is the slowest rank's: every rank times the span from leaving one barrier to
// leaving the next, after its compute(), and the sample is the longest of those spans; every
// rank's own compute() time and span are kept too. The report holds every rank's samples, the rank layout and the MPI library.
#pragma once
#include <functional>
#include <string>

#include "harness/args.hpp"
#include "harness/distributed/comm.hpp"
#include "harness/json_fields.hpp"

namespace repix::distributed {

class Job {
 public:
  virtual ~Job() = default;
  // Reads (or makes) this rank's part and checks it; local work only (the driver agrees on the
  // first rank's error). Called once.
  virtual void load() = 0;
  // This rank's computation and the merge with the other ranks; every rank calls it the same
  // number of times, so collectives may be used, and local work that can fail runs inside
  // on_every_rank. Called once by a run, warm-ups plus samples by a bench.
  virtual void compute() = 0;
  // Writes the outputs of the last compute() (collectives allowed: a shared .npy).
  virtual void write() {}
  // This rank's part in the record ({"rows": [first, last]}, counters of the last compute()).
  virtual nlohmann::json rank_part() const = 0;
  // How the work is split, in words ("rows", "z planes", ...).
  virtual std::string split() const = 0;
  // The record's own fields (the family, input, variant, a curve), at rank 0.
  virtual nlohmann::json record() const = 0;
};

// Runs `local` on this rank; the first rank whose `local` threw (in rank order) has its message,
// "rank R: ...", said by rank 0 (Comm::throw_first_error). Every rank calls it.
void on_every_rank(const Comm& comm, const std::function<void()>& local);

// Runs `body`, a command whose ranks all meet the same errors (its arguments' checks): rank 0
// says such an error, the other ranks exit with its code (2 for a usage error, else 1) without a
// line of their own (SaidByRoot), so that `mpirun -np 4` prints one line, not four.
int said_once(const std::function<int()>& body);

// A Job's arguments. `variant` multi-device is refused with one usage line (a rank has one GPU;
// `split` says what the ranks share out). --`option`'s path ("" where not given) must name an .npy
// file: each rank writes its part of it.
void refuse_multi_device(const std::string& variant, const std::string& split);
std::string npy_output(const cli::Args& a, const std::string& option);

// One GPU a rank: makes GPU rank % (the GPUs this process sees) current, and returns it. Throws
// repix::Error where there is no GPU.
int use_rank_gpu(const Comm& comm);

// `repix run FAMILY --distributed`: load, compute and write once; rank 0 writes `json_out` (when
// not empty): the job's record with "distributed" (ranks, split, every rank's part with its load
// and compute times, the MPI library) and "ms" (the slowest rank's time from the first barrier to
// the one after the outputs are written).
int run(Job& job, const std::string& json_out);

struct BenchRequest {
  int warmups = 1;
  int samples = 10;
  std::string out;      // the report ("" = none; the summary line is printed either way)
  std::string command;  // recorded in the report
};

// `repix bench --distributed`: load once, `warmups` computes, then `samples` timed ones, each
// between two barriers. Rank 0 prints one line (median, min and max of the slowest rank's
// samples) and writes the report.
int bench(Job& job, const BenchRequest& request);

}  // namespace repix::distributed
