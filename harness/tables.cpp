#include "harness/tables.hpp"

#include "core/find_by_name.hpp"

namespace repix::tables {

const std::vector<TableInfo>& all() {
  static const std::vector<TableInfo> t = [] {
    std::vector<TableInfo> v;
    for (auto paper : {ecc_paper_tables, iwpp_paper_tables, ami_paper_tables, maxtree_paper_tables})  // one line per paper (harness/papers/<paper>/)
      for (TableInfo& info : paper()) v.push_back(std::move(info));
    return v;
  }();
  return t;
}

namespace {
std::string& command_line_store() {
  static std::string s;
  return s;
}
}  // namespace
void set_command_line(const std::string& s) { command_line_store() = s; }
const std::string& command_line() { return command_line_store(); }

std::vector<TableInfo> in_group(const std::string& group, std::vector<TableInfo> tables) {
  for (TableInfo& t : tables) t.group = group;
  return tables;
}

const TableInfo& find(const std::string& id) {
  return find_by_name(all(), id, "table", [](const TableInfo& t) { return t.id; });
}

}  // namespace repix::tables
