// Image files: .npy (read 1.0/2.0/3.0, write 1.0), .raw/.dat (explicit shape and dtype), and
// PNG/PGM/TIFF through OpenCV where the build has it (REPIX_HAVE_OPENCV).
//
// Element types: uint8, uint16, float32, little-endian (npy descr '|u1', '<u2', '<f4').
// Layout: C order with x fastest; a numpy array of shape (nz, ny, nx) is Shape{nx, ny, nz}
// with ndim = the number of numpy dimensions (1 to 3).
// Every file is written through AtomicFile (temporary + rename): no half-written outputs.
// Every problem is one line of repix::Error that names the file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/slab_source.hpp"
#include "datasets/spec.hpp"

namespace repix::datasets {

// ---- .npy ------------------------------------------------------------------------------------
struct NpyHeader {
  DType dtype = DType::u8;
  Shape shape;
  std::int64_t data_offset = 0;  // bytes before the array data
};
NpyHeader read_npy_header(const std::string& path);
// An array's element type and shape as repix reads them, from NumPy's spelling: `descr` is the
// dtype string ('|u1', '<u2', '<f4': an .npy header's descr, an array's dtype.str), `dims` the
// shape in NumPy's order. Errors name `subject` (a file as 'path', an argument by its name) and
// say `kind` for the type ("dtype", ".npy dtype"): any other element type is a WrongType; no
// dimension, more than 3, an empty or a too large array an Error. Shared by the .npy reader and
// the Python module, so that both refuse the same arrays with the same words.
DType array_dtype(const std::string& descr, const std::string& subject, const std::string& kind = "dtype");
Shape array_shape(const std::vector<std::int64_t>& dims, const std::string& subject);
HostImage read_npy(const std::string& path, bool pinned = false);
void write_npy(const HostImage& img, const std::string& path);
// int64 ('<i8') and int32 ('<i4') arrays, e.g. the edt site map, the max-tree parent image;
// write-only (repix reads no integer inputs wider than 16 bits).
void write_npy_int64(const std::int64_t* data, const Shape& shape, const std::string& path);
void write_npy_int32(const std::int32_t* data, const Shape& shape, const std::string& path);
// float32 arrays of any number of dimensions (numpy order, slowest first), e.g. the ranklet
// stage's (windows, 3, H, W); write-only.
void write_npy_float32(const float* data, const std::vector<std::int64_t>& dims, const std::string& path);
// The bytes before the data of a format 1.0 .npy file of a C-order array (numpy's `descr`, the
// shape `dims` slowest first), padded as numpy pads it; the descr of a dtype; a shape as dims.
// For writers that put the data in place themselves (the ranks of a distributed run).
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& dims);
std::string npy_descr(DType dtype);
std::vector<std::int64_t> npy_dims(const Shape& shape);
// Streams slabs of an .npy file (header and data size are checked here).
std::unique_ptr<SlabSource> open_npy_source(const std::string& path);

// ---- .raw / .dat: the bare elements, little-endian, x fastest --------------------------------
HostImage read_raw(const std::string& path, Shape shape, DType dtype, bool pinned = false);
void write_raw(const HostImage& img, const std::string& path);
// Streams slabs of a raw file (its size is checked here).
std::unique_ptr<SlabSource> open_raw_source(const std::string& path, Shape shape, DType dtype);

// ---- images through OpenCV (grayscale uint8/uint16, 2D; TIFF also float32) -------------------
bool have_image_io();  // false in builds without OpenCV
HostImage read_image(const std::string& path, bool pinned = false);
void write_image(const HostImage& img, const std::string& path);

// ---- dispatch --------------------------------------------------------------------------------
// A spec of any kind ("uniform:64x64", "file:a.npy") is generated or loaded; anything else is
// a path, read as file:PATH (so "a.dat:shape=128x128:dtype=float32" works too). Declared here,
// defined with generate() in datasets.cpp: it needs every kind, and file IO needs none.
HostImage load(const std::string& path_or_spec, bool pinned = false);
// The spec load() reads `path_or_spec` as (a spec of any kind, else file:PATH): for callers that
// stream it (open_source) or size it first.
Spec spec_of(const std::string& path_or_spec);
// The shape load() would give, without generating or reading the pixels (a file's header is
// read, so a missing or damaged file fails here): for checking inputs before long work.
Shape shape_of(const std::string& path_or_spec);
// The file kind (io.cpp). Loads a file: spec, by extension: .npy; .raw/.dat (or any other name
// when shape= and dtype= are given) as raw; .png/.pgm/.pnm/.tif/.tiff as images. shape=/dtype=
// given for an .npy or image file must match the file.
HostImage load_file(const Spec& spec, bool pinned = false);
// Writes by extension: .npy, .raw/.dat, image extensions (with OpenCV); "-" (standard output) and
// an existing device or FIFO are written as .npy.
void save(const HostImage& img, const std::string& path);
// The extensions save() writes in this build (lower case, with the dot).
std::vector<std::string> save_extensions();

// Slab source over a file: spec. .npy and raw files are streamed (one seek + one read per
// request, never the whole file); images are read whole. Size problems (truncation) are
// reported when the source is opened.
std::unique_ptr<SlabSource> open_file_source(const Spec& spec);

namespace detail {
// Serves slabs of [offset, offset + shape.size() * dtype_size) of a file, read on demand.
std::unique_ptr<SlabSource> make_file_slab_source(const std::string& path, std::int64_t offset,
                                                  Shape shape, DType dtype);
// Size of a file in bytes; throws "cannot open 'path': ..." when it cannot be read.
std::int64_t file_size(const std::string& path);
// Lower-case extension with the dot ("a/b.NPY" -> ".npy"), "" when none.
std::string extension(const std::string& path);
}  // namespace detail

}  // namespace repix::datasets
