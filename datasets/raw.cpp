// .raw/.dat files (bare little-endian elements, x fastest; the ECC paper's format) and the
// streaming slab source shared with .npy.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/atomic_file.hpp"
#include "core/slab_source.hpp"
#include "datasets/io.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "repix's file formats are little-endian; a big-endian host needs byte swapping");

namespace repix::datasets {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_for_reading(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  return FilePtr(f);
}

std::string byte_count(std::int64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

// Reads [offset, offset + bytes) of an open file into dst.
void read_at(std::FILE* f, const std::string& path, std::int64_t offset, std::size_t bytes, void* dst) {
  if (fseeko(f, static_cast<off_t>(offset), SEEK_SET) != 0)
    throw Error("cannot seek in '" + path + "': " + std::strerror(errno));
  const std::size_t got = std::fread(dst, 1, bytes, f);
  if (got != bytes) {
    if (std::ferror(f)) throw Error("cannot read '" + path + "': " + std::strerror(errno));
    throw Error("truncated file '" + path + "': needed " + byte_count(static_cast<std::int64_t>(bytes)) +
                " at offset " + std::to_string(offset) + ", got " + byte_count(static_cast<std::int64_t>(got)));
  }
}

class FileSlabSource final : public SlabSource {
 public:
  FileSlabSource(std::string path, std::int64_t offset, Shape shape, DType dtype)
      : path_(std::move(path)), offset_(offset), shape_(shape), dtype_(dtype), fp_(open_for_reading(path_)) {}
  DType dtype() const override { return dtype_; }
  Shape shape() const override { return shape_; }
  void read(std::int64_t s0, std::int64_t s1, void* dst) override {
    if (s0 < 0 || s1 < s0 || s1 > slab_count(shape_))
      throw Error("internal: slab range [" + std::to_string(s0) + ", " + std::to_string(s1) +
                  ") outside 0.." + std::to_string(slab_count(shape_)) + " of '" + path_ + "'");
    const std::int64_t slab_bytes = slab_elems(shape_) * static_cast<std::int64_t>(dtype_size(dtype_));
    read_at(fp_.get(), path_, offset_ + s0 * slab_bytes, static_cast<std::size_t>((s1 - s0) * slab_bytes), dst);
  }

 private:
  std::string path_;
  std::int64_t offset_;
  Shape shape_;
  DType dtype_;
  FilePtr fp_;
};

void check_raw_size(const std::string& path, Shape shape, DType dtype) {
  const std::int64_t have = detail::file_size(path);
  const std::int64_t need = shape.size() * static_cast<std::int64_t>(dtype_size(dtype));
  if (have != need)
    throw Error("raw file '" + path + "' has " + byte_count(have) + ", but shape " + shape.str() + " " +
                dtype_name(dtype) + " needs " + byte_count(need) + " (check shape= and dtype=)");
}

}  // namespace

namespace detail {

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error("cannot read '" + path + "': it is a directory");
  return static_cast<std::int64_t>(st.st_size);
}

std::unique_ptr<SlabSource> make_file_slab_source(const std::string& path, std::int64_t offset,
                                                  Shape shape, DType dtype) {
  return std::make_unique<FileSlabSource>(path, offset, shape, dtype);
}

}  // namespace detail

HostImage read_raw(const std::string& path, Shape shape, DType dtype, bool pinned) {
  check_raw_size(path, shape, dtype);
  HostImage img(dtype, shape, pinned);
  FilePtr f = open_for_reading(path);
  read_at(f.get(), path, 0, img.bytes(), img.raw());
  return img;
}

void write_raw(const HostImage& img, const std::string& path) {
  AtomicFile f(path);
  f.write(img.raw(), img.bytes());
  f.commit();
}

// Used by open_file_source for raw files: the size is checked once, up front.
std::unique_ptr<SlabSource> open_raw_source(const std::string& path, Shape shape, DType dtype) {
  check_raw_size(path, shape, dtype);
  return detail::make_file_slab_source(path, 0, shape, dtype);
}

}  // namespace repix::datasets
