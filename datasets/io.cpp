// The file kind: file: specs dispatched to the readers by extension, and writes by extension.
// Depends on the readers and writers (npy.cpp, raw.cpp, image_io.cpp) and on specs, never on
// the generators: datasets.cpp reaches files through this kind, not the other way round.
#include "datasets/io.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/atomic_file.hpp"
#include "datasets/kind.hpp"

namespace repix::datasets {
namespace {

enum class Format { npy, raw, image, unknown };

bool is_image_ext(const std::string& ext) {
  return ext == ".png" || ext == ".pgm" || ext == ".pnm" || ext == ".tif" || ext == ".tiff";
}

// raw when the extension says so, or when the spec gives both shape= and dtype= for a name
// that is neither .npy nor an image (".bin", no extension, ...).
Format format_of(const Spec& s) {
  const std::string ext = detail::extension(s.path);
  if (ext == ".npy") return Format::npy;
  if (ext == ".raw" || ext == ".dat") return Format::raw;
  if (is_image_ext(ext)) return Format::image;
  if (s.has("shape") && s.has("dtype")) return Format::raw;
  // No extension (/dev/stdin, a pipe, a bare name): a regular file by its magic; a stream as .npy,
  // the format one is most often fed in (its magic cannot be peeked at without being consumed).
  struct stat st {};
  if (ext.empty() && ::stat(s.path.c_str(), &st) == 0) {
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return Format::npy;
    if (S_ISREG(st.st_mode)) {
      char magic[6] = {};
      std::ifstream in(s.path, std::ios::binary);
      if (in.read(magic, sizeof magic) && std::string(magic, sizeof magic) == "\x93NUMPY") return Format::npy;
    }
  }
  return Format::unknown;
}

[[noreturn]] void unknown_format(const std::string& path) {
  const std::string ext = detail::extension(path);
  throw Error("don't know how to read '" + path + "' (" + (ext.empty() ? "no extension" : "extension " + ext) +
              "; repix reads .npy, .raw/.dat with shape= and dtype=, and .png/.pgm/.tif with OpenCV)");
}

void require_raw_params(const Spec& s) {
  if (!s.has("shape") || !s.has("dtype"))
    throw Error("reading raw file '" + s.path + "' needs shape= and dtype=, e.g. file:" + s.path +
                ":shape=128x128:dtype=float32");
}

// shape=/dtype= given with a self-describing file must agree with it.
void check_matches(const Spec& s, Shape shape, DType dtype) {
  if (s.has("shape") && s.shape != shape)
    throw Error("'" + s.path + "' is " + shape.str() + ", but the spec says shape=" + s.shape.str());
  if (s.has("dtype") && s.get_dtype(dtype) != dtype)
    throw Error("'" + s.path + "' is " + dtype_name(dtype) + ", but the spec says dtype=" + s.get("dtype"));
}

Spec as_file_spec(const Spec& s) {
  Spec c = canonical(s);
  if (!c.is_file()) throw Error("internal: '" + c.str() + "' is not a file: spec");
  // A folder would otherwise be refused for its name ("no extension") or read as a broken file.
  std::error_code ec;
  if (std::filesystem::is_directory(c.path, ec))
    throw Error("'" + c.path + "' is a directory; give an image file (.npy, .raw/.dat, .png/.pgm/.tif) or a dataset spec");
  return c;
}

}  // namespace

namespace detail {

std::string extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

}  // namespace detail

HostImage load_file(const Spec& spec, bool pinned) {
  const Spec s = as_file_spec(spec);
  switch (format_of(s)) {
    case Format::npy: {
      HostImage img = read_npy(s.path, pinned);
      check_matches(s, img.shape(), img.dtype());
      return img;
    }
    case Format::raw:
      require_raw_params(s);
      return read_raw(s.path, s.shape, s.get_dtype(DType::u8), pinned);
    case Format::image: {
      HostImage img = read_image(s.path, pinned);
      check_matches(s, img.shape(), img.dtype());
      return img;
    }
    case Format::unknown: break;
  }
  unknown_format(s.path);
}

std::unique_ptr<SlabSource> open_file_source(const Spec& spec) {
  const Spec s = as_file_spec(spec);
  switch (format_of(s)) {
    case Format::npy: {
      auto src = open_npy_source(s.path);
      check_matches(s, src->shape(), src->dtype());
      return src;
    }
    case Format::raw:
      require_raw_params(s);
      return open_raw_source(s.path, s.shape, s.get_dtype(DType::u8));
    case Format::image: return detail::make_owned_source(load_file(s));
    case Format::unknown: break;
  }
  unknown_format(s.path);
}

std::vector<std::string> save_extensions() {
  std::vector<std::string> exts = {".npy", ".raw", ".dat"};
  if (have_image_io())
    for (const char* e : {".png", ".pgm", ".pnm", ".tif", ".tiff"}) exts.push_back(e);
  return exts;
}

void save(const HostImage& img, const std::string& path) {
  const std::string ext = detail::extension(path);
  // Standard output and devices or FIFOs (written in place, whatever their name) get .npy.
  if (ext == ".npy" || path == "-" || is_special_file(path)) return write_npy(img, path);
  if (ext == ".raw" || ext == ".dat") return write_raw(img, path);
  if (is_image_ext(ext)) return write_image(img, path);
  throw Error("don't know how to write '" + path + "' (" + (ext.empty() ? "no extension" : "extension " + ext) +
              "; repix writes .npy, .raw/.dat, and .png/.pgm/.tif with OpenCV)");
}

namespace detail {

Kind file_kind() {
  Kind k;
  k.name = "file";
  k.description = "an .npy, .raw/.dat (needs shape= and dtype=) or image file";
  k.keys = {"shape", "dtype"};
  k.takes_path = true;
  k.canonicalise = [](Spec& s) {
    auto& p = s.params;
    if (p.count("shape")) {
      s.shape = Shape::parse(p["shape"]);
      detail::check_shape_size(s.shape);
      p["shape"] = s.shape.str();
    }
    if (p.count("dtype")) p["dtype"] = dtype_name(parse_dtype(p["dtype"]));
  };
  k.generate = [](const Spec& s, bool pinned) { return load_file(s, pinned); };
  k.open_source = [](const Spec& s) { return open_file_source(s); };
  // .npy and raw files stream; images are read whole.
  k.chunk_addressable = [](const Spec& s) { return format_of(s) == Format::npy || format_of(s) == Format::raw; };
  k.dtype = [](const Spec& s) { return open_file_source(s)->dtype(); };
  k.shape = [](const Spec& s) { return open_file_source(s)->shape(); };
  return k;
}

}  // namespace detail

}  // namespace repix::datasets
