// The max-tree seminar's table (Blin, LRDE 2021), one line.
#include <iostream>

#include "harness/papers/maxtree/seminar.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

std::vector<TableInfo> maxtree_paper_tables() {
  return in_group("maxtree", {
      {"maxtree-seminar",
       "Blin's max-tree seminar (RTX 2060) beside ours from maxtree bench reports: GPU vs omp, Gpx/s, fps, steps",
       "--report R.json[,R2.json...] [--out-dir DIR] [--paper P.json]",
       [](const cli::Args& a) {
         a.only({"report", "out-dir", "paper"});
         std::vector<report::Report> reports;
         for (const std::string& path : cli::split(a.need("report"), ',')) reports.push_back(report::read_report(path));
         const nlohmann::json paper = load_paper("maxtree-seminar", a.get("paper"), "maxtree-seminar");
         std::cout << maxtree_seminar(paper, reports, a.get("out-dir"));
         return 0;
       }},
  });
}

}  // namespace repix::tables
