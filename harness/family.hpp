// The one interface through which the harness reaches every family (gunrock's shape: options,
// problem, enactor). `repix run`, `profile`, `bench`, `list` and the tables loop over families
// and call these; nothing generic names a family. Each family implements it in its adapter,
// harness/families/<family>/adapter.cpp, on top of FamilyOf (family_of.hpp), which holds the
// generic machinery (the bench's verified and timed cases, the commands); the adapter supplies
// only the family's knowledge (its inputs, reference, verification, stats JSON, outputs,
// options). A new family is an adapter plus one line in families.cpp.
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

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

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string name() const = 0;
  // The registry's variants, in ablation order.
  virtual std::vector<registry::VariantInfo> variants() const = 0;
  // The options of the family's commands (declared once, adapter.cpp).
  virtual std::vector<options::Spec> option_specs() const = 0;
  // `repix help`'s lines for `repix run <name>`.
  virtual std::string run_usage() const = 0;
  // `repix run <name> ...`: one variant on one input, results to files; returns the exit code.
  virtual int run(const cli::Args& a) const = 0;
  // `repix profile <name> --variant V --dataset SPEC [--iterations N]`: NVTX-ranged runs for Nsight.
  virtual int profile(const cli::Args& a) const = 0;
  // `repix bench`: appends the verified, timed cases of ctx.req's variants (and peers) on
  // ctx.specs, in the order dataset, variant, scope (kernel, end-to-end, with-io), then peers.
  virtual void add_bench_cases(bench::Context& ctx, std::vector<bench::Case>& cases) const = 0;
};

// Every family, in the order of the issues (families.cpp: one line each).
const std::vector<std::unique_ptr<Family>>& all();
// Throws repix::Error listing the known families.
const Family& find(const std::string& name);

}  // namespace repix::family
