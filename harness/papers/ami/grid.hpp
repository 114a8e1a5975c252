// The thesis's tables (Pal 2020, chapter 5; results/paper/ami-5.N.json) as grids: rows (an image
// size, or a block size), columns (one family variant in one scope with its options, each beside
// the thesis's column it stands for), and ratios that compare across hardware (a speedup of ours
// beside the thesis's). Measuring goes through the families' own measurement
// (family::Family::problem/measure: the same runs, checks and timers as `repix bench`), every cell
// journalled as it is taken (Session); building the markdown/JSON is separate (render_grid) and
// tested without a GPU.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/bench.hpp"
#include "harness/report.hpp"
#include "harness/tables.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables::ami_paper {

using Timing = report::Result;

struct Column {
  std::string heading;     // "seq (s)"
  std::string family;      // ami | ranklet | auto-mi
  std::string variant;
  std::string scope;       // kernel | end-to-end
  cli::Args options;       // the family's options (--windows 8, --block 4, --gpus 2)
  std::string paper_key;   // the thesis row's field this column stands beside ("": none)
  double paper_to_s = 1;   // the thesis's unit in seconds (1e-3 for milliseconds)
  std::int64_t size = 0;   // the image side for this column (0: the row's)
  std::int64_t max_size = 0;  // above this side the cell is not run ("skipped: ..."); 0: no limit
  int gpus = 0;            // the cell needs this many visible GPUs (else "skipped: N GPU visible")
  // A measurement that is not a family variant (ami-5.7's host summation); empty: the family's.
  std::function<Timing(std::int64_t size)> custom;
};

// A ratio column: ours = time(den) / time(num) ("how many times faster num is than den"), beside
// the thesis's paper[paper_den] / paper[paper_num] (or paper[paper_value] when it gives the ratio).
struct Ratio {
  std::string heading;
  int num = 0, den = 0;     // column indices
  std::string paper_num, paper_den, paper_value;
};

struct Row {
  std::string label;       // "1024^2", "4 x 4"
  std::int64_t size = 0;   // the image side
  int block = 0;           // ami-5.5 / 5.6: the block of the row (0: none)
  std::vector<Timing> cells;  // one per column
};

struct Grid {
  std::string id, title, explanation, x_label;
  std::vector<Column> columns;
  std::vector<Ratio> ratios;
  std::vector<Row> rows;
  // The dataset spec of a family's input at a side (the tables' images).
  std::function<std::string(const std::string& family, std::int64_t size)> spec;
  // The thesis's row for one of ours ({} when it has none).
  std::function<nlohmann::json(const Row&)> paper_row;
  double wall_s = -1;
};

// Seconds of a cell (its median), or null when it did not run.
nlohmann::json seconds(const Timing& t);
// The markdown (also written with the JSON to out_dir/<id>.{md,json} when out_dir is not empty).
std::string render_grid(const nlohmann::json& paper, const Grid& g, const Meta& meta, const std::string& out_dir);

// One table run's settings (the common options).
struct Run {
  Session* session = nullptr;
  const cli::Args* args = nullptr;
  bool small = false;                  // --sizes small|quick: tiny inputs (the tests)
  std::vector<std::int64_t> sizes;     // --sizes N,N,... (empty: the table's own)
  bench::Reps reps;
  nlohmann::json paper;
  Meta meta;
  std::string out_dir;
  std::vector<std::int64_t> pick(std::vector<std::int64_t> small_list, std::vector<std::int64_t> paper_list) const {
    if (!sizes.empty()) return sizes;
    return small ? small_list : paper_list;
  }
};

// Measures every cell of `g` (rows filled by the caller: labels, sizes, blocks), writes and prints
// the table; the exit code: 1 when a cell that ran was not verified or stopped with an error.
int measure_and_write(Run& run, Grid& g);

// `repix table <id>` for an ami table: [--sizes small|paper|N,N,...] [--reps N] [--out DIR]
// [--paper P.json] | --from JOURNAL [--out DIR].
TableInfo table_info(const char* id, const char* description, std::function<Grid(const Run&)> build);

}  // namespace repix::tables::ami_paper
