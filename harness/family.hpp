// One entry per algorithm family: the harness reaches every family through this table, so a
// new family is one `family_<name>.cpp` (its CLI `run`/`profile` handlers and its bench cases)
// plus one line in families.cpp. No switch on family names anywhere else.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/bench.hpp"
#include "harness/registry.hpp"

namespace repix::family {

struct Family {
  std::string name;
  std::string run_usage;  // the options of `repix run <name>`, for `repix help`
  std::function<std::vector<registry::VariantInfo>()> variants;
  // `repix run <name> ...`: one variant on one input, result to a file. Returns the exit code.
  std::function<int(const cli::Args&)> run;
  // `repix profile <name> --variant V --dataset SPEC [--iterations N]`.
  std::function<int(const cli::Args&)> profile;
  // `repix bench`: append the verified, timed cases of ctx.req's variants on ctx.datasets.
  std::function<void(bench::Context&, std::vector<bench::Case>&)> add_bench_cases;
};

// Every family, in the order of the issues (ecc first).
const std::vector<Family>& all();
// Throws repix::Error listing the known families.
const Family& find(const std::string& name);

// Defined in harness/family_<name>.cpp.
Family ecc_family();
Family reconstruct_family();
Family edt_family();

}  // namespace repix::family
