// The static side of a kernel's issue bound: `repix profile FAMILY --sass REGEX` reads this very
// binary's SASS (cuobjdump -sass), keeps the kernels whose mangled names match REGEX and, with
// --items-per-iteration N, brackets each one's innermost hot loop between its shortest, common and
// longest path (scripts/sass-loop-bound): the issue-rate bound in items a second that Nsight
// Compute's executed warp instructions are then placed against. No GPU is needed; cuobjdump (CUDA
// toolkit) and python3 are.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"

namespace repix::sass {

// cuobjdump -sass output split into functions: (mangled name, its text from the "Function :" line
// on), those whose name matches `regex` (std::regex, ECMAScript, searched), in order; a kernel
// built for several architectures is kept once (its first). A bad regex: cli::UsageError.
std::vector<std::pair<std::string, std::string>> functions(const std::string& sass_text, const std::string& regex);

// scripts/sass-loop-bound's printout as JSON: function, loop, warp instructions an iteration
// (shortest, longest, common) and the issue bound of each path in G items/s; "text" keeps it whole.
nlohmann::json parse_loop_bound(const std::string& text);

// scripts/sass-loop-bound (python3, beside the sources this binary was built from) on one function
// of a SASS file: parse_loop_bound of what it prints. Throws repix::Error when it fails.
nlohmann::json loop_bound(const std::string& sass_file, const std::string& function, double items_per_iteration,
                          int sms, double ghz);

// The outputs' file stem in the output folder: <family>-sass.
std::string report_stem(const std::string& family);

// `repix profile FAMILY --sass REGEX [--items-per-iteration N] [--out DIR]`: writes
// DIR/<family>-sass.sass (the matching kernels' SASS), .summary.json and .summary.md; prints the
// markdown. Throws repix::Error when cuobjdump is absent or no kernel of this build matches.
int command(const cli::Args& a);

}  // namespace repix::sass
