// The exact separable GPU EDT engine shared by gpu-exact-rowfill, gpu-exact-envelope and gpu-opt
// (same distance formula as seq-exact, so the same bits). The engine runs the column phase and
// owns the workspace; each variant's file holds its row phase (what it changes on top).
//
// Phase 1, columns (no per-pixel output at all):
//   mask   thread per (column, 32-row segment): one 32-bit word of background bits;
//   scan   thread per column: for every segment, the last background row above it and the first
//          below it (int32, -1 when none).
//   The nearest background row of any pixel is then a few bit operations on its segment's word
//   plus those two values (vertical_nearest): 12 bytes per 32 pixels instead of 4 per pixel.
// Phase 2, rows. The envelope path, rows split into bands of kBand columns:
//   envelope  thread per (band, row): the lower envelope of the band's parabolas
//             (x - c)^2 + g(c)^2 over the whole row, by the same stack algorithm as seq-exact,
//             kept in global scratch laid out [band][stack slot][row] so that the 32 rows of a
//             warp (one segment word: broadcast loads) touch neighbouring addresses;
//   then a fill, which is where the variants differ (gpu_exact_rowfill.cu,
//   gpu_exact_envelope.cu; gpu_opt.cu runs its windowed search first and the envelope path only
//   on the rows it leaves, a device-side row list).
// Every kernel writes only its own threads' elements and reads what earlier kernels wrote
// (stream order); the per-thread work is in gpu_opt_core.hpp, which the CPU tests run thread
// by thread.
#pragma once
#include <cuda_runtime.h>

#include "edt/edt.hpp"
#include "edt/gpu_opt_core.hpp"

namespace repix::edt::separable {

using gpu_opt::Columns;
using gpu_opt::Envelopes;
using gpu_opt::i64;

constexpr int kThreads = 256;
// Blocks for a grid-stride loop over n threads' work.
int grid_for(i64 n);

// The rows phase 2 works on: rows[0 .. *nrows) when `rows` is set (gpu-opt's fallback list,
// whose length only the device knows), else every row.
struct RowList {
  const int* rows;
  const int* nrows;
  i64 ny;
  __device__ i64 size() const { return rows ? *nrows : ny; }
  __device__ i64 operator[](i64 i) const { return rows ? rows[i] : i; }
};

// What a row phase works with: the column phase's output, the envelope scratch, the outputs
// (sites null when not wanted) and, for a phase that asks for it, the row-list workspace.
struct Launch {
  Columns cols;
  Envelopes env;
  i64 nx = 0, ny = 0, nbands = 0;
  float* dist = nullptr;
  long long* sites = nullptr;
  int* flags = nullptr;         // [ny], zeroed by the phase before use
  int* list = nullptr;          // [ny + 1]: the rows, then their count
  unsigned char* temp = nullptr;  // CUB DeviceSelect's scratch
  std::size_t temp_bytes = 0;
  int list_grid = 1;            // a fixed grid for kernels over a list whose length only the device knows
};

// The envelope path's first kernel, on every row or a row list.
void launch_envelopes(const Launch& l, RowList rows, int grid, cudaStream_t stream);
// The thread-per-pixel fill: the minimum of a pixel's band envelope and the others' (binary
// searches), bands visited outward until none can be nearer; coalesced stores.
void launch_pixel_fill(const Launch& l, RowList rows, int grid, cudaStream_t stream);
// Compacts the rows whose flag is set into l.list (their count at l.list[ny]) on the device.
void select_flagged_rows(const Launch& l, cudaStream_t stream);

// A variant's row phase: its NVTX range name, whether it uses the row-list workspace (its
// count of rows then becomes Stats::fallback_rows), and its launches.
struct RowPhase {
  const char* name;
  bool row_list;
  void (*launch)(const Launch& l, cudaStream_t stream);
};

// The variant of `phase` (exact; run end to end and through a plan).
Variant variant(const char* id, const char* step, const char* description, RowPhase phase);

}  // namespace repix::edt::separable
