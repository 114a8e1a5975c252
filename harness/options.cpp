#include "harness/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/host_limits.hpp"

namespace repix::options {

std::string Spec::check(const std::string& value) const {
  if (check_value) return check_value(value);
  if (flag) {
    if (value == "1" || value == "true") return "1";
    if (value == "0" || value == "false") return "0";
    throw cli::UsageError("--" + name + " is a flag (or --" + name + "=1/0), got '" + value + "'");
  }
  if (!choices.empty()) {
    if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
    std::string list;
    for (std::size_t i = 0; i < choices.size(); ++i)
      list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    throw cli::UsageError("--" + name + " must be " + list + ", got '" + value + "'");
  }
  // An integer: the whole text, in range.
  const bool digits = !value.empty() && value.find_first_not_of("0123456789", value[0] == '-' ? 1 : 0) == std::string::npos &&
                      value != "-";
  errno = 0;
  const long long v = digits ? std::strtoll(value.c_str(), nullptr, 10) : 0;
  if (thread_count && digits && errno != ERANGE) check_thread_count(name, v);
  if (!digits || errno == ERANGE || v < min || v > max) {
    const std::string range = min == 0 && max == std::numeric_limits<int>::max()
                                  ? "a non-negative integer"
                                  : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    throw cli::UsageError("--" + name + " expects " + range + ", got '" + value + "'");
  }
  return std::to_string(v);
}

Spec threads(std::string name, std::string help, std::string default_text, unsigned commands) {
  Spec s = integer(std::move(name), "N", std::move(help), std::move(default_text), commands);
  s.max = max_threads();
  s.thread_count = true;
  return s;
}

void check_thread_count(const std::string& name, long long count) {
  if (count <= max_threads()) return;
  throw cli::UsageError("--" + name + " " + std::to_string(count) + " is more threads than repix runs on this machine (" +
                        max_threads_text() + ")");
}

std::string unread_note(const Spec& s, const std::vector<std::string>& selected) {
  if (selected.empty() || std::any_of(selected.begin(), selected.end(), [&](const std::string& v) {
        return v.rfind("peer:", 0) != 0 && s.read_by(v);
      }))
    return "";
  std::string readers;
  for (std::size_t i = 0; i < s.variants.size(); ++i) readers += (i ? ", " : "") + s.variants[i];
  return "note: --" + s.name + " is read by none of the selected variants (read by " + readers + ")";
}

std::string Spec::usage() const { return flag ? "[--" + name + "]" : "[--" + name + " " + placeholder + "]"; }

}  // namespace repix::options
