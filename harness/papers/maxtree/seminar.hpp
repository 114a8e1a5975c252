// Blin's seminar (results/paper/maxtree-seminar.json) beside ours, from bench reports
// (seminar.cpp says what each row is). Building the table is separate from measuring it, so it is
// tested without a GPU on a report written by the test.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/report.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables {

// The markdown; with a non-empty out_dir also <out_dir>/maxtree-seminar.{md,json}. Throws
// repix::Error when the reports hold no maxtree result.
std::string maxtree_seminar(const nlohmann::json& paper, const std::vector<report::Report>& reports,
                            const std::string& out_dir);

}  // namespace repix::tables
