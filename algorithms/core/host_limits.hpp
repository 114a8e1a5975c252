// What this machine allows a run, checked before the work starts: how many threads a thread
// count may ask for, and how much host memory the process can still take. The CLI refuses what
// exceeds them with one clear line instead of dying inside libgomp or the allocator.
#pragma once
#include <cstdint>
#include <string>

namespace repix {

// The most threads one thread count (an option such as --threads, or an entry of
// OMP_NUM_THREADS) may ask for: 4 x the hardware threads, and never fewer than 1024.
//
// Why: libgomp cannot create tens of thousands of threads (32768 and more fail with "Thread
// creation failed", 70000 crashes inside it), while no variant gains anything past one thread per
// hardware thread; each thread also holds private working memory (histograms, tile queues), so a
// count far above the cores only costs. 4x leaves room to study oversubscription; the floor of
// 1024 lets small machines run the thread-count studies of the papers (up to a few hundred
// threads) unchanged.
int max_threads();
// "at most 1024 (4 x the 16 hardware threads, and never fewer than 1024)", for messages.
std::string max_threads_text();

// Host memory this process can still use, in bytes: /proc/meminfo's MemAvailable, lowered to
// what the memory cgroup (v2 memory.max, v1 memory.limit_in_bytes, at the process's cgroup and
// its ancestors) leaves above its working set (usage less inactive page cache). UINT64_MAX when
// none of these can be read.
//
// Test hook: the environment variable REPIX_TEST_HOST_MEMORY (bytes) replaces the measurement,
// so that tests can check the estimates against a known amount.
std::uint64_t available_host_memory();

// Throws repix::Error "<what> needs N GB of host memory, M GB available" when `need` bytes exceed
// available_host_memory(). `need` is an estimate of the peak (a lower bound where the code says
// so), made before anything is allocated.
void require_host_memory(std::uint64_t need, const std::string& what);

// "12.3 GB" (decimal gigabytes, 3 significant digits; "0.00012 GB" for small amounts).
std::string format_gb(std::uint64_t bytes);

}  // namespace repix
