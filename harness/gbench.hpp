// What repix needs to know and do about the Google Benchmark library it links. The library
// drives `repix bench` (registration, filters, repetitions, console output) but takes no time of
// its own: every sample is a CUDA-event or host-clock time measured by repix and handed to it as
// manual time. Distribution builds of the library (Debian's libbenchmark-dev, the GPU machine's)
// are compiled without NDEBUG, and the library then prints "***WARNING*** Library was built as
// DEBUG. Timings may be affected." before every run: misleading here, so the console reporter
// below leaves that line out and the report's environment records the fact with the reason it
// does not matter (env.cpp, build.benchmark_library_debug).
#pragma once
#include <benchmark/benchmark.h>

namespace repix::gbench {

// True when the linked library was built with assertions (its DEBUG warning), asked of the
// library itself once.
bool library_is_debug_build();

// Google Benchmark's console output without the DEBUG warning (colour only on a terminal, as the
// library's own choice would be).
class Console : public benchmark::ConsoleReporter {
 public:
  Console();
  bool ReportContext(const Context& context) override;
};

}  // namespace repix::gbench
