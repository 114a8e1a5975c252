// Large device-to-host copies into pageable memory at the link's speed.
//
// cudaMemcpy into pageable memory goes through the driver's own small staging buffer on one
// thread, which also takes the first-touch page fault of every destination page: ranklet's 3.2 GB
// result at 8192^2 came down in about 2 s on the H100, against
// about 0.1 s for the same bytes into pinned memory. Pinning the destination instead costs as
// much (cudaHostAlloc of 3.2 GB faults and locks every page on one thread). So: two pinned staging
// buffers of kDownloadChunk bytes, kept for the process; chunk i + 1 comes over the link while the
// host's threads (OpenMP) copy chunk i into the destination, touching its pages in parallel
// (chunks of download_chunk(bytes), below; since 2026-11-26, not yet measured: 64 MiB before).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace repix {

constexpr std::size_t kDownloadChunk = std::size_t(64) << 20;  // the largest chunk (the staging buffers' size)

// The chunk of a staged download of `bytes`: an eighth of it in whole MiB, from 8 MiB up to
// kDownloadChunk. Only the first chunk's transfer and the last chunk's host copy are not
// overlapped with anything: with 64 MiB chunks a 96 MB parent image (6000x4000 int32) left a
// 64 MiB transfer and a 32 MiB copy exposed; with 12 MiB ones about an eighth of each.
constexpr std::size_t download_chunk(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  const std::size_t eighth = (bytes / 8 + kMiB - 1) / kMiB * kMiB;
  return eighth < 8 * kMiB ? 8 * kMiB : (eighth > kDownloadChunk ? kDownloadChunk : eighth);
}
// Below this a plain cudaMemcpyAsync is as fast (the staging adds a host copy).
constexpr std::size_t kDownloadDirectBelow = std::size_t(32) << 20;

// Copies `bytes` from device memory `device` to host memory `host` (pageable or pinned) in stream
// order on `stream`, and returns when the copy is complete. Thread-safe (one download at a time
// uses the shared staging buffers).
void download(void* host, const void* device, std::size_t bytes, cudaStream_t stream);

// True when `host` is page-locked memory the CUDA runtime knows (cudaHostAlloc, cudaHostRegister):
// a device-to-host copy into it is one DMA, with no staging.
bool is_pinned(const void* host);

// Takes the first-touch page faults of fresh host memory now, in parallel (a write to each 4 KB
// page; the contents are then unspecified): for an output that a later download() fills, called
// from a host thread while the GPU computes, so the download's host copy finds its pages mapped.
void prefault(void* host, std::size_t bytes);

}  // namespace repix
