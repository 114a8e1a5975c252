// The outputs of one command, checked together before any work (issue 12): every path writable,
// no two naming the same file, none naming an input, each extension the format written, "-"
// (standard output) only where it makes sense. The command then writes them inside an OutputSet
// (core/atomic_file.hpp), which commits all of them or none.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace repix::cli {

struct OutputArg {
  std::string option;                   // "output", "json", ... (named in messages as --option)
  std::string path;                     // "" when not given (skipped); "-" is standard output
  std::vector<std::string> extensions;  // lower case with the dot; empty: any
  std::string format;                   // what is written, for messages ("CSV", ".npy")
  bool binary = false;                  // refused on a terminal when "-"
};

// A JSON output (--json of `repix run`).
inline OutputArg json_output(const std::string& option = "json") { return {option, "", {".json"}, "JSON", false}; }

// Usage errors (exit 2) for clashes, extensions and "-" on a terminal; repix::Error (exit 1) for
// a path that cannot be written (missing folder, a folder, no permission). `inputs` are
// (option, value) pairs; values that are not files (dataset specs) are ignored.
void check_outputs(const std::vector<OutputArg>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& inputs = {});

// Creates the output folder `dir` (and its parents) for --`option`: repix::Error with the reason
// when it cannot be (a file of that name, a parent that is a file, no permission).
void make_output_folder(const std::string& dir, const std::string& option);

}  // namespace repix::cli
