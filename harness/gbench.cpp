#include "harness/gbench.hpp"

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>

namespace repix::gbench {

namespace {
constexpr const char* kDebugWarning = "Library was built as DEBUG";
}

bool library_is_debug_build() {
  static const bool debug = [] {
    std::ostringstream context;
    benchmark::BenchmarkReporter::PrintBasicContext(&context, benchmark::BenchmarkReporter::Context());
    return context.str().find(kDebugWarning) != std::string::npos;
  }();
  return debug;
}

Console::Console() : benchmark::ConsoleReporter(::isatty(::fileno(stdout)) ? OO_Color : OO_None) {}

bool Console::ReportContext(const Context& context) {
  std::ostream& err = GetErrorStream();
  std::ostringstream buffered;
  SetErrorStream(&buffered);
  const bool ok = benchmark::ConsoleReporter::ReportContext(context);
  SetErrorStream(&err);
  std::istringstream lines(buffered.str());
  for (std::string line; std::getline(lines, line);)
    if (line.find(kDebugWarning) == std::string::npos) err << line << "\n";
  return ok;
}

}  // namespace repix::gbench
