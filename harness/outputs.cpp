#include "harness/outputs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "datasets/io.hpp"
#include "harness/args.hpp"

namespace repix::cli {

namespace {

namespace fs = std::filesystem;

// Two names of one file: the same inode when it exists, else the same path once links and dots
// in the existing part are resolved.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  std::error_code ec1, ec2;
  const fs::path ca = fs::weakly_canonical(a, ec1), cb = fs::weakly_canonical(b, ec2);
  return ec1 || ec2 ? a == b : ca == cb;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// What writing `path` needs, checked now rather than after the computation: an existing file
// that is not a folder (a special file: writable in place), or a folder we may create files in.
void check_writable(const std::string& option, const std::string& path) {
  const std::string where = "--" + option + " '" + path + "'";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error("cannot write " + where + ": it is a folder");
    if (!S_ISREG(st.st_mode)) {
      if (::access(path.c_str(), W_OK) != 0) throw Error("cannot write " + where + ": " + std::strerror(errno));
      return;
    }
  }
  const std::string folder = folder_of(path);
  struct stat fst {};
  if (::stat(folder.c_str(), &fst) != 0) throw Error("cannot write " + where + ": no folder '" + folder + "'");
  if (!S_ISDIR(fst.st_mode)) throw Error("cannot write " + where + ": '" + folder + "' is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot write " + where + ": folder '" + folder + "': " + std::strerror(errno));
}

std::string list(const std::vector<std::string>& exts) {
  std::string s;
  for (std::size_t i = 0; i < exts.size(); ++i) s += (i == 0 ? "" : i + 1 == exts.size() ? " or " : ", ") + exts[i];
  return s;
}

}  // namespace

void make_output_folder(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--" + option + " '" + dir + "' is a file, not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw Error("--" + option + ": cannot create the folder '" + dir + "': " + ec.message());
}

void check_outputs(const std::vector<OutputArg>& outputs, const std::vector<std::pair<std::string, std::string>>& inputs) {
  std::vector<const OutputArg*> given;
  for (const OutputArg& o : outputs)
    if (!o.path.empty()) given.push_back(&o);
  // Clashes first: their message says what is wrong better than an extension's would.
  for (std::size_t i = 0; i < given.size(); ++i)
    for (std::size_t j = i + 1; j < given.size(); ++j)
      if (given[i]->path == given[j]->path || (given[i]->path != "-" && given[j]->path != "-" &&
                                               same_file(given[i]->path, given[j]->path)))
        throw UsageError("--" + given[i]->option + " and --" + given[j]->option + " name the same file '" +
                         given[j]->path + "'; give each output its own");
  for (const auto& [option, value] : inputs) {
    std::string file;
    try {
      const datasets::Spec spec = datasets::spec_of(value);
      if (!spec.is_file()) continue;
      file = spec.path;
    } catch (const std::exception&) {
      continue;  // not readable as a spec: the command reports it
    }
    for (const OutputArg* o : given)
      if (o->path != "-" && same_file(o->path, file))
        throw UsageError("--" + o->option + " '" + o->path + "' is the input --" + option +
                         "; write the result to another file");
  }
  for (const OutputArg* o : given) {
    const std::string where = "--" + o->option + " '" + o->path + "'";
    if (o->path == "-") {
      if (o->binary && ::isatty(STDOUT_FILENO))
        throw UsageError(where + " would write binary " + o->format + " to a terminal; redirect standard output or name a file");
      continue;
    }
    check_writable(o->option, o->path);
    // A device or FIFO (/dev/null) has no extension to match: it takes what the command writes.
    if (is_special_file(o->path)) continue;
    const std::string ext = datasets::detail::extension(o->path);
    if (!o->extensions.empty() && std::find(o->extensions.begin(), o->extensions.end(), ext) == o->extensions.end())
      throw UsageError(where + ": this output is written as " + o->format + "; give a name ending in " +
                       list(o->extensions));
  }
}

}  // namespace repix::cli
