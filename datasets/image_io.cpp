// PNG/PGM/TIFF through OpenCV, in builds that have it (the GPU machines have no OpenCV C++, so
// everything else must work without it). Grayscale 2D only; uint8 and uint16 (TIFF: also
// float32). Colour images are converted to gray by OpenCV's loader.
#include "datasets/io.hpp"

#ifdef REPIX_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstring>
#include <vector>

#include "core/atomic_file.hpp"
#endif

namespace repix::datasets {

#ifdef REPIX_HAVE_OPENCV

bool have_image_io() { return true; }

HostImage read_image(const std::string& path, bool pinned) {
  detail::file_size(path);  // a clear "cannot open" for missing files (imread just returns empty)
  cv::Mat m;
  try {
    m = cv::imread(path, cv::IMREAD_GRAYSCALE | cv::IMREAD_ANYDEPTH);
  } catch (const cv::Exception& e) {
    throw Error("cannot read image '" + path + "': " + e.what());
  }
  if (m.empty()) throw Error("cannot read image '" + path + "' (not a format this OpenCV build decodes)");
  DType dt;
  switch (m.depth()) {
    case CV_8U: dt = DType::u8; break;
    case CV_16U: dt = DType::u16; break;
    case CV_32F: dt = DType::f32; break;
    default: throw Error("image '" + path + "' has an unsupported pixel type (repix reads 8/16-bit unsigned and 32-bit float)");
  }
  HostImage img(dt, Shape::d2(m.cols, m.rows), pinned);
  const std::size_t row_bytes = static_cast<std::size_t>(m.cols) * dtype_size(dt);
  for (int y = 0; y < m.rows; ++y)
    std::memcpy(static_cast<char*>(img.raw()) + y * row_bytes, m.ptr(y), row_bytes);
  return img;
}

void write_image(const HostImage& img, const std::string& path) {
  const Shape& s = img.shape();
  if (s.ndim == 3 && s.nz > 1)
    throw Error("cannot write '" + path + "': image files hold 2D images, this one is " + s.str() + " (use .npy)");
  const int type = img.dtype() == DType::u8 ? CV_8UC1 : img.dtype() == DType::u16 ? CV_16UC1 : CV_32FC1;
  const cv::Mat m(static_cast<int>(s.ny), static_cast<int>(s.nx), type, const_cast<void*>(img.raw()));
  std::vector<unsigned char> bytes;
  const std::string ext = detail::extension(path);
  try {
    if (!cv::imencode(ext, m, bytes)) throw Error("cannot encode '" + path + "' as " + ext);
  } catch (const cv::Exception& e) {
    throw Error("cannot write '" + path + "' as " + ext + " (" + dtype_name(img.dtype()) + "): " + e.what());
  }
  AtomicFile f(path);  // encode in memory, then write atomically (imwrite would write in place)
  f.write(bytes.data(), bytes.size());
  f.commit();
}

#else

bool have_image_io() { return false; }

HostImage read_image(const std::string& path, bool) {
  throw Error("reading " + detail::extension(path) + " needs a build with OpenCV; this build has none (convert '" +
              path + "' to .npy)");
}

void write_image(const HostImage&, const std::string& path) {
  throw Error("writing " + detail::extension(path) + " needs a build with OpenCV; this build has none (write '" +
              path + "' as .npy instead)");
}

#endif

}  // namespace repix::datasets
