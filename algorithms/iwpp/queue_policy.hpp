// The enqueue policies of the IWPP GPU queue (queue.cuh), in a host-only header so that plain C++
// code (the edt tile API, registries) can name a policy without including CUDA device code.
#pragma once

namespace repix::iwpp {

// Table 1's ablation ladder: atomic (Naive: one hardware atomic per queued element), warp_atomic
// (the same source as the compiler builds it by default: one atomic per warp), scan (PF),
// thread_queue (TQ). queue.cuh says how each appends to a block's queue.
enum class QueuePolicy { atomic, warp_atomic, scan, thread_queue };

}  // namespace repix::iwpp
