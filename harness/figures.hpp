// The figures of a report (figures/repix_figures, Python and matplotlib): `repix plot REPORT.json
// [--out DIR]` draws every figure the report's kind defines; `repix table` and `repix experiment`
// draw theirs beside the .md/.json they write unless --no-figures is given; `repix run ecc --plot
// CURVE.svg` draws the curve of the run. The drawing is a child `python3 -m repix_figures`, run
// with the first python3 (on PATH, then /usr/bin/python3) that can import matplotlib and the
// package beside the sources this repix was built from. Where there is none, a table or an
// experiment still writes its numbers and says in one line that its figures were skipped and why;
// `repix plot` and `--plot` fail with that line.
#pragma once
#include <string>
#include <vector>

#include "harness/args.hpp"

namespace repix::figures {

// Every python3 there is to run, in the order they are tried: those on PATH, then /usr/bin/python3.
std::vector<std::string> python_candidates();
// The python3 that can draw, or "" with *why saying what was tried and what is missing.
std::string find_python(std::string* why);

// Draws every figure of the report at `report_path` into `out_dir` as <stem>.<figure>.{svg,png,
// points.json}. Returns the files written. Throws repix::Error when the report is not one, or
// (required) when no python3 can draw; not required, that is one "figures skipped" line on stderr.
std::vector<std::string> draw(const std::string& report_path, const std::string& out_dir, const std::string& stem,
                              bool required);
// One figure of the report, to exactly `to` (.svg or .png; the points drawn beside it as
// <to without extension>.points.json). Throws repix::Error.
void draw_one(const std::string& report_path, const std::string& figure, const std::string& to);

// Whether the tables written by this process draw their figures (the CLI turns it off for
// --no-figures, and for the tables an experiment runs: it draws its own at the end).
void set_enabled(bool on);
bool enabled();
// A table's JSON was just written: its figures beside it, when enabled (never throws: a figure
// that fails is one line on stderr, the table stands).
void after_table(const std::string& json_path);

// `repix plot REPORT.json [--out DIR]`.
int command(const cli::Args& a);

}  // namespace repix::figures
