// The `repix` command line. Every failure is one line on stderr and a non-zero exit:
// 1 for a failed run or bad input (repix::Error), 2 for a usage error, 3 for an internal error.
#include "harness/cli.hpp"

#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/gpu.hpp"
#include "core/host_limits.hpp"
#include "core/nvtx.hpp"
#include "harness/distributed/comm.hpp"
#include "harness/ncu.hpp"
#include "harness/sass.hpp"
#include "harness/figures.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/args.hpp"
#include "harness/bench.hpp"
#include "harness/json_text.hpp"
#include "harness/protocol.hpp"
#include "harness/env.hpp"
#include "harness/experiments.hpp"
#include "harness/family.hpp"
#include "harness/options.hpp"
#include "harness/outputs.hpp"
#include "harness/journal.hpp"
#include "harness/registry.hpp"
#include "harness/report.hpp"
#include "harness/suites.hpp"
#include "harness/tables.hpp"

namespace repix::cli {

namespace {

// Each command's synopsis: `repix help` prints them all, `repix help CMD` and `repix CMD --help`
// (or -h) the command's own, with what it takes from the families or tables named after it.
struct CommandHelp {
  const char* name;
  const char* text;
};
const CommandHelp kCommands[] = {
    {"list", "  list [families|variants|datasets|tables|experiments]\n"
             "                                         what can be run\n"},
    {"gen", "  gen SPEC -o FILE                       write a generated dataset (.npy, .raw; - : .npy to stdout)\n"},
    {"run", "  run FAMILY --variant V ...             one variant on one input (options per family below);\n"
            "                                         with no output named, its --json record goes to stdout\n"},
    {"bench", "  bench [--family F] [--variants a,b] [--exclude a,b] [--dataset SPEC]... [--suite NAME]\n"
              "        [--scopes kernel,end-to-end,with-io] [--min-samples N] [--min-time S] [--max-noise PCT]\n"
              "        [--max-time S] [--max-samples N] [--warmup N] [--samples N] [--cpu-samples N]\n"
              "        [--out PATH|auto] [--plan] [FAMILY OPTIONS (below)]\n"
              "        [--benchmark_filter=REGEX]       verify and time variants, write a JSON report\n"
              "                                         (--plan: list the rows it would measure, measure nothing)\n"
              "  bench --from R.json.partial.jsonl [--out R.json]\n"
              "                                         the report of what an unfinished bench had measured\n"
              "  mpirun -np N repix bench --distributed --family F [F's run inputs and options]\n"
              "        [--variant V] [--samples N] [--warmups N] [--out R.json]\n"
              "                                         time a distributed run: each sample the slowest rank's\n"
              "                                         (docs/distributed.md)\n"},
    {"table", "  table ID [options] [--no-figures]      regenerate a paper or ablation table (see `repix list tables`)\n"
              "                                         and draw its figures beside it\n"
              "  table ID --from ID.partial.jsonl [--out-dir DIR]\n"
              "                                         the table of what an unfinished table run had measured\n"},
    {"experiment", "  experiment NAME [--out DIR] [--plan] [--no-peers] [--steps A,B] [--sizes S] [--gpus N]\n"
                   "        [--no-figures]                   a named study (see `repix list experiments`): its benches,\n"
                   "                                         tables and profiles into DIR/<gpu>/<group>/NAME.{json,md}\n"
                   "                                         and its figures beside them\n"
                   "                                         (DIR: results; --plan: print and check the steps, run nothing)\n"},
    {"compare", "  compare A.json B.json                  two reports side by side with ratios\n"},
    {"plot", "  plot REPORT.json [--out DIR]           every figure the report defines (matplotlib): SVG, PNG and\n"
             "                                         the points drawn, in DIR (the report's folder); `table`\n"
             "                                         and `experiment` draw theirs unless --no-figures\n"},
    {"profile", "  profile FAMILY --variant V --dataset SPEC [--iterations N] [--scope kernel|end-to-end]\n"
                "                                         a fixed number of NVTX-ranged runs for Nsight\n"
                "  profile FAMILY --variant V --dataset SPEC --ncu [--sections A,B] [--kernels REGEX]\n"
                "        [--all-launches] [--out DIR]\n"
                "                                         the same under Nsight Compute, timed kernels only:\n"
                "                                         DIR/FAMILY-V.ncu-rep and a summary per kernel; a peer\n"
                "                                         (V = peer:ID) through one `repix bench` run [--samples N],\n"
                "                                         its kernels those named like REGEX; --all-launches: no\n"
                "                                         NVTX filter (set-up, warm-up, flushes: what it keeps out)\n"
                "  profile FAMILY --sass REGEX [--items-per-iteration N] [--out DIR]\n"
                "                                         the SASS of this build's kernels named like REGEX\n"
                "                                         (cuobjdump; no GPU needed) into DIR/FAMILY-sass.sass;\n"
                "                                         with N items a warp iteration, each one's innermost\n"
                "                                         loop bracketed: its issue bound in items/s\n"},
    {"help", "  help [COMMAND]                         this text, or one command's\n"},
};

// After the synopses of commands that write files.
const char* kOutputs = R"(
Outputs: all of a command's outputs are checked before it computes and replace their files only
once every one is written (an error or interrupt leaves the old files and no temporary). `-` is
standard output; an existing device or FIFO is written in place. Extensions must match the format.
)";

const char* kSpecs = R"(
Dataset specs: uniform:8192x8192:levels=256:dtype=float32:seed=1, grf:512x512x512:alpha=3:seed=4,
const:64x64:value=3, checker:64x64x64:period=2, noise-mask:1024x1024:marker=opening,
tissue:2048x2048:coverage=75, file:img.npy, file:img.raw:shape=128x128:dtype=float32
(see `repix list datasets`). Suites: )";

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// OMP_NUM_THREADS is a thread count like --threads (a list: one per nesting level): an entry above
// max_threads() is refused, not clamped, as the option is. A count libgomp would try to honour
// only fails inside it (SIGSEGV at 70000), and quietly running with fewer threads than asked
// would mislabel every timing. Values libgomp itself ignores (not numbers) are left to it.
// OMP_NUM_THREADS as libgomp reads it: a list of positive counts. libgomp ignores a value it cannot
// read ("0", "abc"), so the run would go on with its default while the report records the value
// given: refused instead, as too many threads are.
void check_omp_environment() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (!env) return;
  std::string text = env;
  if (text.find_first_not_of(" \t") == std::string::npos) return;  // empty: as unset, for libgomp too
  std::vector<std::string> items;
  std::size_t from = 0;
  for (std::size_t comma; (comma = text.find(',', from)) != std::string::npos; from = comma + 1)
    items.push_back(text.substr(from, comma - from));
  items.push_back(text.substr(from));
  for (std::string item : items) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.find_first_not_of('0') == std::string::npos)
      throw UsageError("OMP_NUM_THREADS='" + text + "' is not a list of thread counts of 1 or more (OpenMP would " +
                       "ignore it and run with its default); set it to e.g. 4, or unset it");
    if (item.size() > 9 || std::stoll(item) > max_threads())
      throw UsageError("OMP_NUM_THREADS=" + std::string(env) + " asks for more threads than repix runs on this machine (" +
                       max_threads_text() + "); lower it or unset it");
  }
}

// Under an address-space limit (`ulimit -v`), OpenMP's threads are started now, before any data
// takes the space their stacks need: libgomp ends the process with its own two lines when it
// cannot create a thread ("Thread creation failed", seen mid-run under `ulimit -v 60000`), which
// nothing can catch. Checked against the limit first (one repix line when they cannot fit), then
// kept by libgomp for every later parallel region; a later allocation that fails is then the
// usual "out of host memory". Without a limit nothing changes.
void start_openmp_threads_under_an_address_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return;
  const int threads = omp_get_max_threads();
  if (threads <= 1) return;
  std::size_t stack = 8u << 20;
  pthread_attr_t attr;
  if (::pthread_getattr_default_np(&attr) == 0) {
    std::size_t s = 0;
    if (::pthread_attr_getstacksize(&attr, &s) == 0 && s > 0) stack = s;
    ::pthread_attr_destroy(&attr);
  }
  if (const char* v = std::getenv("OMP_STACKSIZE")) {  // libgomp's own: a number, K by default
    char* end = nullptr;
    const double n = std::strtod(v, &end);
    const char unit = end && *end ? static_cast<char>(std::toupper(static_cast<unsigned char>(*end))) : 'K';
    const double scale = unit == 'B' ? 1 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1 << 10;
    if (n > 0) stack = static_cast<std::size_t>(n * scale);
  }
  double used = 0;  // this process's address space now
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) used = std::strtod(line.c_str() + 7, nullptr) * 1024;
  const double need = static_cast<double>(threads - 1) * static_cast<double>(stack) + (16 << 20);
  if (used + need > static_cast<double>(lim.rlim_cur))
    throw Error("the address-space limit (ulimit -v) leaves " + format_gb(static_cast<double>(lim.rlim_cur) - used) +
                "; OpenMP's " + std::to_string(threads) + " threads need " + format_gb(need) +
                " for their stacks: raise the limit, or lower OMP_NUM_THREADS");
#pragma omp parallel
  { (void)omp_get_thread_num(); }
}

int cmd_list(const Args& a) {
  a.only({});
  if (a.positional.size() > 1)
    throw UsageError("list takes one of families, variants, datasets, tables or experiments (got " +
                     std::to_string(a.positional.size()) + " words)");
  const std::string what = a.positional.empty() ? "all" : a.positional[0];
  if (what != "all" && what != "families" && what != "variants" && what != "datasets" && what != "tables" &&
      what != "experiments")
    throw UsageError("list what? (families, variants, datasets, tables or experiments; got '" + what + "')");
  if (what == "all" || what == "families") {
    std::cout << "families:\n";
    for (const auto& f : registry::families()) std::cout << "  " << f << "\n";
  }
  if (what == "all" || what == "variants") {
    std::cout << "variants (family  id  device  ablation step  description):\n";
    for (const auto& v : registry::variants())
      std::printf("  %-6s %-18s %-4s %-22s %s\n", v.family.c_str(), v.id.c_str(), v.gpu ? "gpu" : "cpu",
                  v.step.c_str(), v.description.c_str());
  }
  if (what == "all" || what == "datasets") {
    std::cout << "dataset kinds:\n";
    for (const auto& [k, d] : datasets::kinds()) std::printf("  %-10s %s\n", k.c_str(), d.c_str());
    std::cout << "suites (repix bench --suite NAME):\n";
    for (const auto& s : suites::all()) std::printf("  %-10s %s\n", s.name.c_str(), s.description.c_str());
  }
  if (what == "all" || what == "tables") {
    std::cout << "tables (repix table ID):\n";
    for (const auto& t : tables::all())
      std::printf("  %-14s %s\n  %-14s   options: %s\n", t.id.c_str(), t.description.c_str(), "", t.usage.c_str());
  }
  if (what == "all" || what == "experiments") {
    std::cout << "experiments (repix experiment NAME; name  group  needs  description):\n";
    for (const auto& e : experiments::all())
      std::printf("  %-24s %-8s %-22s %s\n", e.name.c_str(), e.group.c_str(),
                  experiments::needs_text(e.needs()).c_str(), e.description.c_str());
  }
  return 0;
}

int cmd_gen(const Args& a) {
  a.only({"output"});
  if (a.positional.size() != 1) throw UsageError("gen takes one dataset spec");
  const std::string out = a.need("output");
  const datasets::Spec spec = datasets::Spec::parse(a.positional[0]);
  check_outputs({{"output", out, datasets::save_extensions(), "a dataset (\"-\": .npy)", true}});
  const HostImage img = datasets::generate(spec);
  datasets::save(img, out);
  std::fprintf(stderr, "repix gen: %s -> %s (%s %s)\n", spec.str().c_str(), out.c_str(),
               img.shape().str().c_str(), dtype_name(img.dtype()).c_str());
  return 0;
}

int cmd_run(const Args& a) {
  if (a.positional.empty()) throw UsageError("run takes the family name (e.g. `repix run ecc ...`)");
  return family::find(a.positional[0]).run(a);
}

// bench prints its summary table on standard output: its report cannot go there too.
void refuse_report_on_stdout(const std::string& out) {
  if (out == "-") throw UsageError("bench writes its summary to standard output; give --out a file name for the report");
}

// `repix bench --from J [--out R]`: the report of what an unfinished bench had measured.
int bench_from_journal(const Args& a) {
  a.only({"from", "out"});
  const std::string from = a.get("from");
  std::string out = a.get("out");
  const std::string suffix = journal::path_for("");
  if (out.empty() && from.size() > suffix.size() && from.compare(from.size() - suffix.size(), suffix.size(), suffix) == 0)
    out = from.substr(0, from.size() - suffix.size());
  if (out.empty()) throw UsageError("give --out for the report built from '" + from + "'");
  refuse_report_on_stdout(out);
  // The report over the journal it is built from (any spelling of it) is a usage error, before
  // anything is read.
  check_outputs({{"out", out, {}, "a JSON report", false}}, {{"from", from}});
  const journal::Journal j = journal::read(from, "bench");
  const report::Report rep = bench::report_from_journal(j);
  if (rep.results.empty()) throw Error("the journal '" + from + "' holds no result yet: no report to build");
  std::cout << report::summary_table(rep) << std::flush;
  report::write_report(rep, out);
  std::fprintf(stderr, "repix bench: %zu results from the journal %s%s; report written to %s\n", rep.results.size(),
               from.c_str(), j.torn_tail ? " (its cut-off last line ignored)" : "", out.c_str());
  const bool all_ok = std::all_of(rep.results.begin(), rep.results.end(), [](const auto& r) { return r.verified; });
  if (!all_ok) std::fprintf(stderr, "repix bench: error: some results are not verified\n");
  return all_ok ? 0 : 1;
}

// Every family's flags, whatever command declares them (an option of another command is refused
// by that command's own check, with its reason).
std::vector<std::string> family_flags() {
  std::vector<std::string> out;
  for (const auto& f : family::all())
    for (const options::Spec& o : f->option_specs())
      if (o.flag && std::find(out.begin(), out.end(), o.name) == out.end()) out.push_back(o.name);
  return out;
}

int cmd_bench(int argc, char** argv, const Args& a) {
  if (a.has("from")) return bench_from_journal(a);
  if (a.has("distributed")) {
    const std::string family_name = a.get("family");
    if (family_name.empty()) throw UsageError("bench --distributed needs --family F (one family, its run's inputs)");
    return family::find(family_name).bench_distributed(a, command_line(argc, argv));
  }
  // The bench's own options, and the families' (each family declares those its bench cases take).
  std::vector<std::string> known = {"family", "variants", "variant", "exclude", "dataset", "datasets", "suite",
                                    "scopes", "samples", "cpu-samples", "out", "plan"};
  for (const std::string& o : protocol::option_names()) known.push_back(o);
  std::map<std::string, std::vector<std::string>> declared_by;  // family option -> families declaring it
  for (const auto& f : family::all())
    for (const options::Spec& o : f->option_specs())
      if (o.commands & options::kBench) {
        if (!declared_by.count(o.name)) known.push_back(o.name);
        declared_by[o.name].push_back(f->name());
      }
  a.only(known);
  bench::Request req;
  const std::string family_name = a.get("family");
  if (!family_name.empty()) registry::check_family(family_name);
  for (const auto& s : a.all("variants"))
    for (const auto& v : split(s, ',')) req.variants.push_back(v);
  for (const auto& v : a.all("variant")) req.variants.push_back(v);
  for (const auto& s : a.all("exclude"))
    for (const auto& v : split(s, ',')) req.exclude.push_back(v);
  std::vector<std::string> specs = a.all("dataset");
  for (const auto& s : a.all("datasets"))
    for (const auto& d : split(s, ',')) specs.push_back(d);
  std::string suite_name = a.get("suite");
  if (!specs.empty()) {
    if (!suite_name.empty()) throw UsageError("give --dataset or --suite, not both");
    // Explicit datasets belong to one family: the first registered unless told.
    req.family_datasets.push_back({family_name.empty() ? family::all().front()->name() : family_name, specs});
  } else {
    if (suite_name.empty()) suite_name = "default";
    const suites::Suite& s = suites::find(suite_name);
    for (const auto& [fam, list] : s.datasets)
      if (family_name.empty() || fam == family_name) req.family_datasets.push_back({fam, list});
    if (req.family_datasets.empty())
      throw Error("suite '" + suite_name + "' has no datasets for family '" + family_name + "'");
  }
  const std::string scopes = a.get("scopes");
  if (!scopes.empty()) req.scopes = split(scopes, ',');
  for (const auto& s : req.scopes)
    if (s != "kernel" && s != "end-to-end" && s != "with-io")
      throw UsageError("unknown scope '" + s + "' (kernel, end-to-end, with-io)");
  req.rule = protocol::from_args(a, req.rule);
  // Fixed counts, past the rule: at most its cap of samples (every raw sample is in the report).
  req.gpu_samples = a.get_int("samples", 0, 1, 100000);
  req.cpu_samples = a.get_int("cpu-samples", 0, 1, 100000);
  // A family option goes to the families of this bench that declare it; one that none of them
  // declares is a usage error (checked here, before anything is measured).
  for (const auto& [name, families] : declared_by) {
    if (!a.has(name)) continue;
    const bool applies = std::any_of(req.family_datasets.begin(), req.family_datasets.end(), [&](const auto& fd) {
      return std::find(families.begin(), families.end(), fd.first) != families.end();
    });
    if (!applies) {
      std::string who;
      for (std::size_t i = 0; i < families.size(); ++i)
        who += (i == 0 ? "" : i + 1 == families.size() ? " and " : ", ") + families[i];
      throw UsageError("--" + name + " applies to the " + who + (families.size() == 1 ? " family" : " families") +
                       ", which this bench does not run");
    }
    for (const auto& f : family::all())
      for (const options::Spec& o : f->option_specs())
        if (o.name == name) o.check(a.get(name));  // refused before anything is measured
    // Given but read by none of the variants named (of the families that declare it): one note,
    // and the bench goes on (the rows record it only where it is read).
    std::string note;
    bool read = false;
    for (const auto& f : family::all())
      for (const options::Spec& o : f->option_specs())
        if (o.name == name && (o.commands & options::kBench) &&
            std::any_of(req.family_datasets.begin(), req.family_datasets.end(),
                        [&](const auto& fd) { return fd.first == f->name(); })) {
          const std::string n = options::unread_note(o, req.variants);
          if (n.empty()) read = true;
          else if (note.empty()) note = n;
        }
    if (!read && !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
    req.family_options.options.emplace(name, a.get(name));
  }
  if (a.has("plan") && a.get("plan") != "1" && a.get("plan") != "0")
    throw UsageError("--plan takes no value (or =1, =0), got '" + a.get("plan") + "'");
  req.plan_only = a.has("plan") && a.get("plan") == "1";
  if (req.plan_only) {  // nothing is measured or written
    req.command = command_line(argc, argv);
    return bench::run(req);
  }
  req.out_path = a.get("out");
  refuse_report_on_stdout(req.out_path);
  // A report that could not be written (a folder, a missing folder, no permission) is refused now,
  // not after the timing (results/<gpu>/ of --out auto is created when written).
  if (req.out_path != "auto") check_outputs({{"out", req.out_path, {}, "a JSON report", false}});
  if (req.out_path == "auto")
    req.out_path = std::string("results/") + env::machine_slug() + "/bench-" +
                   (suite_name.empty() ? std::string("custom") : suite_name) + ".json";
  // Of Google Benchmark's own flags only the filter: its others would write files around repix's
  // outputs (--benchmark_out) or change what a row means (--benchmark_repetitions).
  for (const std::string& p : a.passthrough) {
    const std::string key = p.substr(0, p.find('='));
    if (key != "--benchmark_filter")
      throw UsageError(key + " is not taken: repix bench accepts --benchmark_filter=REGEX of Google Benchmark's flags "
                             "(the report goes to --out)");
    if (p.find('=') == std::string::npos) throw UsageError("--benchmark_filter needs =REGEX");
    if (!req.filter.empty()) throw UsageError("--benchmark_filter given more than once");
    req.filter = p.substr(p.find('=') + 1);
    if (req.filter.empty()) throw UsageError("--benchmark_filter= needs a regular expression");
  }
  req.command = command_line(argc, argv);
  return bench::run(req);
}

int cmd_compare(const Args& a) {
  a.only({});
  if (a.positional.size() != 2) throw UsageError("compare takes two report files");
  const report::Report ra = report::read_report(a.positional[0]);
  const report::Report rb = report::read_report(a.positional[1]);
  std::cout << "A: " << a.positional[0] << "\nB: " << a.positional[1] << "\n"
            << report::compare_table(ra, rb);
  return 0;
}

int cmd_table(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("table takes one table id (see `repix list tables`)");
  return tables::find(a.positional[0]).run(a);
}

int cmd_profile(const Args& a) {
  if (a.positional.empty()) throw UsageError("profile takes the family name");
  if (a.has("sass")) return sass::command(a);  // static: this binary's SASS, nothing runs
  if (a.has("ncu")) return ncu::command(a);  // re-runs this command under ncu
  return family::find(a.positional[0]).profile(a);
}

// The family options that `command` (profile or bench) takes, one line per family declaring any.
void print_family_options(const family::Family& f, options::Command command, const char* label) {
  std::string u;
  for (const options::Spec& o : f.option_specs())
    if (o.commands & command) u += " " + o.usage();
  if (!u.empty()) std::cout << "        " << label << " " << f.name() << " also takes" << u << "\n";
}

// `repix help [CMD]`, `repix CMD --help`: everything, or one command's synopsis with what it
// takes per family (run, profile, bench: only the family named after it, if one is) or per
// table (table: only the table named, if one is).
int print_help(const std::string& cmd, const std::vector<std::string>& positional) {
  const CommandHelp* one = nullptr;
  for (const CommandHelp& c : kCommands)
    if (cmd == c.name) one = &c;
  if (!cmd.empty() && !one) throw UsageError("no command '" + cmd + "' to explain");
  const std::string what = one ? one->name : "";
  // An unknown table or family named after the command: the usual error, before any output.
  const bool one_table = what == "table" && !positional.empty();
  const bool one_family = (what == "run" || what == "profile") && !positional.empty();
  if (one_table) tables::find(positional[0]);
  if (one_family) family::find(positional[0]);
  if (!one) {
    std::cout << "usage: repix <command> [options]\n\ncommands:\n";
    for (const CommandHelp& c : kCommands) std::cout << c.text;
  } else {
    std::cout << "usage:\n" << one->text;
  }
  if (what == "table") {
    std::cout << "\ntables:\n";
    for (const auto& t : tables::all())
      if (!one_table || positional[0] == t.id)
        std::printf("  %-14s %s\n  %-14s   options: %s\n", t.id.c_str(), t.description.c_str(), "", t.usage.c_str());
    return 0;
  }
  if (what == "experiment") {
    std::cout << "\nexperiments (name  group  needs  description):\n";
    for (const auto& e : experiments::all())
      std::printf("  %-24s %-8s %-22s %s\n", e.name.c_str(), e.group.c_str(),
                  experiments::needs_text(e.needs()).c_str(), e.description.c_str());
    return 0;
  }
  if (what == "run" || what == "profile" || what == "bench" || what.empty()) {
    std::cout << "\nper family:\n";
    for (const auto& f : family::all()) {
      if (one_family && f->name() != positional[0]) continue;
      if (what != "profile" && what != "bench") std::cout << "  " << f->run_usage() << "\n";
      // The family's options that profile and bench take too (declared once, in its adapter).
      if (what != "bench") print_family_options(*f, options::kProfile, "profile");
      if (what != "profile") print_family_options(*f, options::kBench, "bench");
      if (!one_family) continue;
      // One family asked about: each of its options with what it does and its default.
      const options::Command command = what == "profile" ? options::kProfile : options::kRun;
      std::cout << "\n" << f->name() << " options:\n";
      for (const options::Spec& o : f->option_specs())
        if (o.commands & command)
          std::printf("  %-28s %s%s\n", o.usage().c_str(), o.help.c_str(),
                      o.default_text.empty() ? "" : (" (default " + o.default_text + ")").c_str());
    }
  }
  if (what.empty() || what == "bench") std::cout << "\n" << protocol::usage();
  if (what.empty() || what == "gen" || what == "run") std::cout << kOutputs;
  if (what.empty() || what == "gen" || what == "bench" || what == "profile" || what == "run") {
    std::cout << kSpecs;
    for (const auto& s : suites::all()) std::cout << s.name << " ";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

namespace {

// The standard descriptors a command starts without are held open on /dev/null, so that no file
// the command opens takes their number: a closed standard output would otherwise become the first
// output file or journal and receive the summary table. Standard output is opened read-only, so
// that writing to it fails and the command says so (stdout_failure).
void hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = ::open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (got >= 0 && got != fd) {  // a lower one was closed too and is held by now: move it
      ::dup2(got, fd);
      ::close(got);
    }
  }
}

// What a command wrote to standard output that did not arrive (a full disk, a closed descriptor):
// the line to say, or "" when everything went out.
std::string stdout_failure() {
  errno = 0;
  std::cout.flush();
  const bool lost = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout);
  const int err = errno;
  if (!lost) return "";
  return std::string("cannot write to standard output") + (err ? std::string(": ") + std::strerror(err) : "");
}

int dispatch(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command given");
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (argc > 3) throw UsageError("help takes at most one command name");
    const std::string about = argc == 3 ? argv[2] : "";
    return print_help(about == "--help" || about == "-h" ? "" : about, {});
  }
  // `repix CMD ... --help` (or -h) anywhere after the command: that command's help, before its
  // options are parsed (an option expecting a value would otherwise take --help as its value).
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::vector<std::string> positional;
      for (int j = 2; j < argc; ++j)
        if (argv[j][0] != '-') positional.push_back(argv[j]);
      return print_help(cmd, positional);
    }
  check_omp_environment();
  if (cmd == "run" || cmd == "bench" || cmd == "table" || cmd == "profile" || cmd == "gen" || cmd == "experiment")
    start_openmp_threads_under_an_address_limit();
  // Flags (options without a value) are parsed as flags, so that `--timeline --samples 5` does
  // not take "--samples" for a value: the families' (reconstruct's --clip, ecc's --timeline),
  // the tables' --quick, profile's and the ablation tables' --ncu.
  if (cmd == "bench") {
    std::vector<std::string> flags = family_flags();
    flags.push_back("plan");
    flags.push_back("distributed");
    return cmd_bench(argc, argv, Args::parse(argc, argv, 2, flags));
  }
  std::vector<std::string> flags = family_flags();
  flags.insert(flags.end(), {"quick", "ncu", "all-launches", "no-figures", "distributed"});
  if (cmd == "experiment") {
    const Args a = Args::parse(argc, argv, 2, {"plan", "no-peers", "no-figures"});
    if (!a.passthrough.empty()) throw UsageError("--benchmark_* options belong to `repix bench`");
    return experiments::command(a, command_line(argc, argv));
  }
  const Args a = Args::parse(argc, argv, 2, flags);
  if (!a.passthrough.empty()) throw UsageError("--benchmark_* options belong to `repix bench`");
  if (cmd == "list") return cmd_list(a);
  if (cmd == "gen") return cmd_gen(a);
  if (cmd == "run") return cmd_run(a);
  if (cmd == "compare") return cmd_compare(a);
  if (cmd == "plot") return figures::command(a);
  if (cmd == "table") {
    tables::set_command_line(command_line(argc, argv));
    // --no-figures is the CLI's, not the table's: the tables check their own options.
    Args table_args = a;
    if (table_args.options.erase("no-figures")) figures::set_enabled(false);
    return cmd_table(table_args);
  }
  if (cmd == "profile") return cmd_profile(a);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  hold_standard_descriptors();
  int code = 0;
  // Every error is one printable line: names with newlines or bytes that are not UTF-8 in it are
  // spelt as \xHH (json_text.hpp).
  try {
    code = dispatch(argc, argv);
  } catch (const distributed::SaidByRoot& e) {  // a rank other than 0: rank 0 says it
    return e.code;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "repix: usage error: %s (see `repix help`)\n", json_text::printable(e.what()).c_str());
    return 2;
  } catch (const UnknownName& e) {  // a family, variant, suite or table that does not exist: a bad value
    std::fprintf(stderr, "repix: usage error: %s (see `repix help`)\n", json_text::printable(e.what()).c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "repix: error: %s\n", json_text::printable(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    // The estimates made up front (host_limits.hpp) are lower bounds: what they miss ends here,
    // as the machine's limit it is, not as a bug.
    std::string now;
    try {
      now = "; " + format_gb(available_host_memory()) + " available now";
    } catch (...) {  // still short: the line goes out without the amount
    }
    std::fprintf(stderr, "repix: error: out of host memory (an allocation failed%s)\n", now.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "repix: internal error: %s\n", json_text::printable(e.what()).c_str());
    return 3;
  }
  if (const std::string lost = stdout_failure(); !lost.empty()) {
    std::fprintf(stderr, "repix: error: %s\n", lost.c_str());
    return code == 0 ? 1 : code;
  }
  return code;
}

}  // namespace repix::cli
