// `repix table ID`: tables regenerated from measurements, side by side with the papers' numbers
// where they exist (results/paper/). Each writes markdown and JSON under an output folder.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"

namespace repix::tables {

struct TableInfo {
  TableInfo(std::string id_, std::string description_, std::string usage_, std::function<int(const cli::Args&)> run_,
            std::string group_ = "")
      : id(std::move(id_)), description(std::move(description_)), usage(std::move(usage_)), run(std::move(run_)),
        group(std::move(group_)) {}
  std::string id;
  std::string description;
  std::string usage;                            // options after `repix table <id>`
  std::function<int(const cli::Args&)> run;     // `repix table <id> ...`; returns the exit code
  std::string group;  // the results folder, results/<gpu>/<group>/: the paper's (set by in_group)
};
// `tables`, each in `group` (a paper's register line: in_group("ecc", {...})).
std::vector<TableInfo> in_group(const std::string& group, std::vector<TableInfo> tables);
// Every table: each paper's (harness/papers/<paper>/register.cpp), one line per paper in
// tables.cpp, in the order of the issues.
const std::vector<TableInfo>& all();
std::vector<TableInfo> ecc_paper_tables();   // papers/ecc/register.cpp
std::vector<TableInfo> iwpp_paper_tables();  // papers/iwpp/register.cpp
std::vector<TableInfo> ami_paper_tables();   // papers/ami/tables.cpp
std::vector<TableInfo> maxtree_paper_tables();  // papers/maxtree/register.cpp
const TableInfo& find(const std::string& id);
// The command line being run (recorded in the tables' JSON); set by the CLI.
void set_command_line(const std::string& s);
const std::string& command_line();

}  // namespace repix::tables
