// `repix bench`: verify every requested variant against the family's reference on the same
// input, then time it by the measurement protocol (measure_case: verify, warm up, sample until the
// stopping rule of core/stopping_rule.hpp holds, verify the timed output again), and write the
// versioned JSON report. Google Benchmark registers the cases and prints the console lines (one
// iteration a case, its time the row's median); the samples are repix's own (CUDA events for the
// kernel scope, the host clock otherwise) and every raw one goes into the report.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/image.hpp"
#include "core/stopping_rule.hpp"
#include "harness/args.hpp"
#include "harness/journal.hpp"
#include "baselines/peers.hpp"
#include "harness/report.hpp"
#include "core/timing.hpp"

namespace repix::bench {

struct Request {
  // Family -> dataset specs to run it on, in order; several families share one report.
  std::vector<std::pair<std::string, std::vector<std::string>>> family_datasets;
  std::vector<std::string> variants;   // empty: every variant this machine can run. With several
                                       // families, ids a family lacks are skipped for it.
  std::vector<std::string> exclude;    // not timed (the reference still runs, untimed, to verify)
  std::vector<std::string> scopes = {"kernel", "end-to-end"};
  protocol::Rule rule;                 // every row's stopping rule (harness/protocol.hpp)
  int gpu_samples = 0;                 // > 0: exactly this many samples of each GPU row (--samples)
  int cpu_samples = 0;                 // > 0: of each CPU row (--cpu-samples)
  bool sample_stats = false;           // kernel scope: each sample's stats in extra["sample_stats"]
  bool plan_only = false;              // --plan: print the rows (GPU ones too) and measure nothing
  // The families' own options given to the bench (--connectivity, --gpus, ...: each family's
  // adapter declares which it takes, harness/options.hpp); a family takes those it declares.
  cli::Args family_options;
  std::string out_path;                // "" = no file
  std::string filter;                  // --benchmark_filter: a regex over the case names ("" = all)
  std::string command;                 // recorded in the report
  // Where each result, bound and dataset goes the moment it is measured (journal.hpp): this
  // writer (a table's journal) when given, else a journal beside out_path that the bench removes
  // once the report is written; none without either.
  journal::Writer* journal = nullptr;

  // The rule of a GPU (or CPU) variant's rows: `rule`, or exactly gpu_samples (cpu_samples).
  protocol::Rule rule_for(bool gpu) const;
};

// How a measurement outside the bench's case list (the paper tables: Family::measure) is taken:
// the same protocol, with the rule of GPU variants' rows and of CPU variants' rows.
struct Reps {
  protocol::Rule gpu;
  protocol::Rule cpu;
  bool sample_stats = false;  // kernel scope: each sample's own stats in extra["sample_stats"]
};

// The paper tables' rules: GPU cells at least `reps` samples after one warm-up, then the default
// rule's noise target within half a second; CPU cells (the slow single-core baselines among them)
// no warm-up (the first, checked run is timed), at most min(reps, 3) runs, stopping once 1 s is
// spent or their noise is under the target.
Reps table_reps(int reps);
// The words under a table that say so.
std::string table_reps_text(const Reps& r);

// A row's output was wrong: it is not timed (further). The row's verification says how.
struct WrongOutput : Error {
  using Error::Error;
};

// One timed (family, variant, dataset, scope) combination: a row of the report.
struct Case {
  report::Result result;          // identity fields filled at registration; the rest by measure_case
  bool gpu = false;
  double bytes_per_item = 0;      // for % of bound
  bool skipped = false;           // prepare() found the input unsupported (peers)
  // Untimed: load the input, verify the output (throwing WrongOutput when wrong), warm up,
  // allocate. Throwing peers::Unsupported skips the case (noted, not a failure).
  std::function<void(Case& me)> prepare;
  std::function<double(Case& me)> sample;  // one timed sample, milliseconds
  std::function<void(Case& me)> finish;    // untimed: re-verify the timed path's output, release memory
  // Set by a prepare() that took the samples itself (peers time their own calls by the rule).
  std::optional<protocol::Outcome> timed_by_prepare;
};

// The protocol on one case: prepare (verify, warm up), sample until `rule` stops, finish (the
// timed path's output verified again), the statistics. A wrong output ends it without samples
// (result.not_run "wrong output: ..."); other failures throw.
void measure_case(Case& c, const protocol::Rule& rule);

// The report entry of an image generated from (or loaded by) `spec`.
report::DatasetInfo describe_dataset(const std::string& spec, const HostImage& img);

struct Context {
  const Request& req;
  std::string family;                  // the family whose cases are being added
  std::vector<std::string> specs;      // its dataset specs
  std::vector<report::DatasetInfo> dataset_infos;
  bool gpu = false;
  timing::Bandwidths bandwidths;
};

// Kernel-scope timing shared by the families: a dedicated stream, device copies of the inputs,
// warm-up, then one event-timed run (L2 flushed first, outside the variant's NVTX range) per
// sample(). The family's plan is set up on stream() between construction and start().
class KernelTimer {
 public:
  using Compute = std::function<void(const std::vector<const void*>& device_inputs, cudaStream_t)>;
  KernelTimer();
  cudaStream_t stream() const { return stream_.get(); }
  // Copies the images to the device, asynchronously on stream().
  void upload(const std::vector<const HostImage*>& inputs);
  // Runs `compute` `warmup` times (NVTX "warmup" > `nvtx_name`), synchronises, and keeps it for
  // sample(). `nvtx_name` is the variant's path `family/variant` (nested ranges, core/nvtx.hpp).
  void start(Compute compute, int warmup, std::string nvtx_name);
  // One timed run of `compute` inside the NVTX ranges of `nvtx_name`; milliseconds.
  double sample();

 private:
  CudaStream stream_;
  std::vector<DeviceBuffer<unsigned char>> buffers_;
  std::vector<const void*> pointers_;
  Compute compute_;
  std::string name_;
  std::unique_ptr<timing::GpuSampler> sampler_;
};

// The variants of ctx.family that ctx.req asks for (all this machine can run when none are
// named; excluded ones dropped), as indices into `all`. GPU variants are skipped with a note
// without a GPU; an id no family has is an error.
std::vector<std::size_t> choose_variants(const Context& ctx, const std::vector<std::string>& ids,
                                         const std::vector<bool>& is_gpu);
// choose_variants over a family's typed registry (anything with `id` and `gpu` members).
template <class V>
std::vector<const V*> chosen_variants(const Context& ctx, const std::vector<V>& all) {
  std::vector<std::string> ids;
  std::vector<bool> is_gpu;
  for (const V& v : all) {
    ids.push_back(v.id);
    is_gpu.push_back(v.gpu);
  }
  std::vector<const V*> out;
  for (std::size_t i : choose_variants(ctx, ids, is_gpu)) out.push_back(&all[i]);
  return out;
}
bool wants_scope(const Context& ctx, const std::string& scope);
// Whether --variants names peer `id` (as `peer:<id>`).
bool names_peer(const Context& ctx, const std::string& id);
// The peers of ctx.family this run asks for: every available one when no variant list is given,
// else those named `peer:<id>`; minus --exclude; GPU peers only with a GPU.
std::vector<peers::Peer> choose_peers(const Context& ctx);
// Appends the case of `peer` on `spec`. Peers time themselves by the row's rule (their own
// warm-up and samples): prepare() calls run_and_verify(me, rule), which runs the peer through
// peers::run, fills me.result (items, verification) from its output and returns the run, whose
// samples and outcome the row keeps.
using PeerRunner = std::function<peers::PeerRun(Case& me, const protocol::Rule& rule)>;
void add_peer_case(Context& ctx, std::vector<Case>& cases, const peers::Peer& peer, const std::string& spec,
                   const std::string& unit, PeerRunner run_and_verify);
// Registers `spec`'s DatasetInfo in ctx (once).
void record_dataset(Context& ctx, const report::DatasetInfo& info);

// Runs the whole bench; returns 0 when every result is verified, 1 otherwise.
int run(const Request& req, report::Report* out = nullptr);

// The report a bench (or a table that runs one) had measured when its journal ends: tool, command
// and environment from the header, then every bound, dataset and result record. Its provenance
// names the journal. Throws repix::Error on a damaged record.
report::Report report_from_journal(const journal::Journal& j);

}  // namespace repix::bench
