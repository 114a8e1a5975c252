#include "harness/families/maxtree/distributed.hpp"

#include <omp.h>

#include <vector>

#include "core/error.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/distributed/driver.hpp"
#include "harness/distributed/shared_npy.hpp"
#include "maxtree/parts.hpp"

namespace repix::family::maxtree_distributed {

namespace {

// One rank's rows.
class MaxtreeJob final : public distributed::Job {
 public:
  MaxtreeJob(const cli::Args& a, const maxtree::Options& opt, const std::string& variant_id, bool area_opening)
      : comm_(distributed::Comm::world()),
        opt_(opt),
        variant_(maxtree::find_variant(variant_id)),
        area_opening_(area_opening) {
    distributed::refuse_multi_device(variant_.id, "rows");
    output_ = distributed::npy_output(a, "output");
    input_ = a.need("input");
    spec_ = datasets::spec_of(input_);
    threads_ = opt_.threads > 0 ? opt_.threads : omp_get_max_threads();
  }

  void load() override {
    dtype_ = datasets::spec_dtype(spec_);
    shape_ = datasets::spec_shape(spec_);
    if (area_opening_) maxtree::check_area_input(InputDesc{dtype_, shape_}, opt_);
    else maxtree::check_input(InputDesc{dtype_, shape_}, opt_);
    std::tie(first_, last_) = distributed::part(shape_.ny, comm_.rank(), comm_.size());
    if (first_ == last_) return;
    if (variant_.gpu) distributed::use_rank_gpu(comm_);
    rows_ = HostImage(dtype_, Shape::d2(shape_.nx, last_ - first_), variant_.gpu);
    datasets::open_source(spec_)->read(first_, last_, rows_.raw());
  }

  // The part's tree, its border to every rank, the merge, then the part in the whole image's terms.
  void compute() override {
    const bool mine = first_ < last_;
    // Phase times in ms on the driver's clock (MPI_Wtime).
    auto ms_since = [&](double since) { return 1e3 * (comm_.wtime() - since); };
    double t0 = comm_.wtime();
    distributed::on_every_rank(comm_, [&] {
      if (!mine) return;
      tree_.build(rows_, variant_.run(rows_, opt_).parent, first_, shape_.ny, area_opening_, threads_);
      border_ = tree_.border().bytes();
    });
    tree_ms_ = ms_since(t0);
    t0 = comm_.wtime();
    const std::vector<std::vector<char>> all = comm_.gather_to_all(mine ? border_ : std::vector<char>{});
    gather_ms_ = ms_since(t0);
    t0 = comm_.wtime();
    distributed::on_every_rank(comm_, [&] {
      std::vector<maxtree::parts::Border> borders;
      border_nodes_ = 0;
      for (const std::vector<char>& b : all)
        if (!b.empty()) {
          borders.push_back(maxtree::parts::Border::from_bytes(b));
          border_nodes_ += static_cast<std::int64_t>(borders.back().nodes.size());
        }
      merged_ = maxtree::parts::merge(borders, opt_.connectivity, area_opening_ ? opt_.area : 0);
    });
    merge_ms_ = ms_since(t0);
    t0 = comm_.wtime();
    distributed::on_every_rank(comm_, [&] {
      if (!mine) return;
      if (area_opening_) tree_.area_opening(merged_, opt_.area, threads_, opened_);
      else tree_.whole_image_parents(merged_, threads_, parent_);
    });
    finish_ms_ = ms_since(t0);
  }

  void write() override {
    if (output_.empty()) return;
    const bool mine = first_ < last_;
    const std::uint64_t at = static_cast<std::uint64_t>(first_ * shape_.nx);
    if (area_opening_) {
      distributed::write_npy_parts(comm_, output_, datasets::npy_descr(dtype_), datasets::npy_dims(shape_),
                                   at * dtype_size(dtype_), mine ? opened_.raw() : nullptr, mine ? opened_.bytes() : 0);
      return;
    }
    // int32 below 2^31 pixels of the whole image, int64 from there on: the single process's dtype.
    const bool wide = shape_.size() >= (std::int64_t(1) << 31);
    const std::size_t index = wide ? sizeof(std::int64_t) : sizeof(std::int32_t);
    const void* data = !mine ? nullptr : wide ? static_cast<const void*>(parent_.wide_.data()) : parent_.narrow.data();
    distributed::write_npy_parts(comm_, output_, wide ? "<i8" : "<i4", datasets::npy_dims(shape_), at * index, data,
                                 mine ? static_cast<std::size_t>(parent_.size()) * index : 0);
  }

  nlohmann::json rank_part() const override {
    nlohmann::json j = {{"rows", {first_, last_}},
                        {"threads", threads_},
                        {"tree_ms", tree_ms_},
                        {"gather_ms", gather_ms_},
                        {"merge_ms", merge_ms_},
                        {"finish_ms", finish_ms_}};
    if (first_ < last_) {
      j["part_nodes"] = tree_.nodes();
      j["border_bytes"] = border_.size();
    }
    return j;
  }
  std::string split() const override { return "rows; the border trees of the edge rows gathered and merged"; }
  nlohmann::json record() const override {
    nlohmann::json j = {{"family", area_opening_ ? "area-opening" : "maxtree"},
                        {"variant", variant_.id},
                        {"connectivity", opt_.connectivity},
                        {"input", input_},
                        {"shape", shape_.str()},
                        {"dtype", dtype_name(dtype_)},
                        {"border_nodes", border_nodes_},
                        {"merged_nodes", merged_.nodes}};
    if (area_opening_) j["area"] = opt_.area;
    return j;
  }

 private:
  const distributed::Comm& comm_;
  maxtree::Options opt_;
  const maxtree::Variant& variant_;
  bool area_opening_;
  std::string output_, input_;
  datasets::Spec spec_;
  int threads_ = 1;
  DType dtype_ = DType::u8;
  Shape shape_;
  std::int64_t first_ = 0, last_ = 0;
  HostImage rows_;
  // Kept from one compute() to the next (a bench's samples): the tree's, the parents' and the
  // filtered image's storage is reused.
  maxtree::parts::PartTree tree_;
  std::vector<char> border_;
  maxtree::parts::Merged merged_;
  maxtree::ParentImage parent_;
  HostImage opened_;
  std::int64_t border_nodes_ = 0;
  double tree_ms_ = 0, gather_ms_ = 0, merge_ms_ = 0, finish_ms_ = 0;
};

}  // namespace

std::unique_ptr<distributed::Job> job(const cli::Args& a, const maxtree::Options& opt, const std::string& variant_id,
                                      bool area_opening) {
  return std::make_unique<MaxtreeJob>(a, opt, variant_id, area_opening);
}

}  // namespace repix::family::maxtree_distributed
