// Command-line option parsing shared by the CLI and the families' `run`/`profile` handlers:
// positionals, `--key value`, `--key=value`, flags, and `--benchmark_*` passed to Google
// Benchmark. A UsageError becomes exit code 2 with one line on stderr.
#pragma once
#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace repix::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;
  std::vector<std::string> passthrough;  // --benchmark_* for Google Benchmark

  static Args parse(int argc, char** argv, int first, const std::vector<std::string>& flags) {
    Args a;
    for (int i = first; i < argc; ++i) {
      std::string s = argv[i];
      if (s.rfind("--benchmark_", 0) == 0) {
        a.passthrough.push_back(s);
        continue;
      }
      if (s.size() > 2 && s.rfind("--", 0) == 0) {
        const auto eq = s.find('=');
        std::string key = s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        if (eq != std::string::npos) {
          a.options.emplace(key, s.substr(eq + 1));
        } else if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
          a.options.emplace(key, "1");
        } else {
          if (i + 1 >= argc) throw UsageError("option --" + key + " needs a value");
          a.options.emplace(key, argv[++i]);
        }
      } else if (s == "-o") {
        if (i + 1 >= argc) throw UsageError("-o needs a file name");
        a.options.emplace("output", argv[++i]);
      } else {
        a.positional.push_back(s);
      }
    }
    return a;
  }
  bool has(const std::string& k) const { return options.count(k) != 0; }
  // The value of an option given at most once (all() takes the repeatable ones): a second
  // `--variant` would otherwise be dropped without a word.
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = options.find(k);
    if (it == options.end()) return def;
    if (options.count(k) > 1) throw UsageError("--" + k + " given more than once");
    return it->second;
  }
  std::string need(const std::string& k) const {
    if (!has(k)) throw UsageError("missing --" + k);
    return get(k);
  }
  std::vector<std::string> all(const std::string& k) const {
    std::vector<std::string> v;
    for (auto [it, end] = options.equal_range(k); it != end; ++it) v.push_back(it->second);
    return v;
  }
  // The value of --k, an integer of at least `min`; `def` when --k is not given. A value given
  // empty (--samples "") is a usage error, never the default.
  int get_int(const std::string& k, int def, int min = 0, int max = std::numeric_limits<int>::max()) const {
    if (!has(k)) return def;
    const std::string s = get(k);
    try {
      std::size_t used = 0;
      if (s.empty() || (!std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '-')) throw std::invalid_argument(s);
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < min || v > max) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      const std::string range = max != std::numeric_limits<int>::max()
                                    ? "an integer from " + std::to_string(min) + " to " + std::to_string(max)
                                : min == 0 ? std::string("a non-negative integer")
                                           : "an integer of at least " + std::to_string(min);
      throw UsageError("--" + k + " expects " + range + ", got '" + s + "'");
    }
  }
  // The value of --k, a finite decimal number in [min, max]; `def` when --k is not given.
  double get_double(const std::string& k, double def, double min, double max) const {
    if (!has(k)) return def;
    const std::string s = get(k);
    try {
      std::size_t used = 0;
      // Decimal only: stod would also take " 1", "0x10", "inf" and "nan".
      if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos) throw std::invalid_argument(s);
      const double v = std::stod(s, &used);
      if (used != s.size() || !(v >= min && v <= max)) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      std::ostringstream range;
      range << "a number from " << min << " to " << max;
      throw UsageError("--" + k + " expects " + range.str() + ", got '" + s + "'");
    }
  }
  void only(const std::vector<std::string>& known) const {
    for (const auto& [k, v] : options)
      if (std::find(known.begin(), known.end(), k) == known.end())
        throw UsageError("unknown option --" + k);
  }
};

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace repix::cli
