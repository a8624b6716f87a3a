#pragma once
// JPEG and PNG files written with the libraries layerplan decodes them with (TurboJPEG and
// libpng's simplified API), for the image-folder tests and the writer of test folders.
#include <png.h>
#include <turbojpeg.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace layerplan::image_files {

// `pixels`: width x height pixels of `channels` (1 or 3) bytes each, row by row.
inline std::vector<uint8_t> encode_jpeg(const std::vector<uint8_t>& pixels, int width, int height, int channels,
                                        int quality = 95) {
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(tj, pixels.data(), width, 0, height, channels == 1 ? TJPF_GRAY : TJPF_RGB, &out, &size,
                             channels == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, 0);
  if (rc != 0) {
    const std::string why = tjGetErrorStr2(tj);
    tjDestroy(tj);
    throw std::runtime_error("tjCompress2: " + why);
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

inline std::vector<uint8_t> encode_png(const std::vector<uint8_t>& pixels, int width, int height, int channels) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(width);
  png.height = static_cast<png_uint_32>(height);
  png.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error(std::string("png_image_write_to_memory: ") + png.message);
  std::vector<uint8_t> bytes(size);
  if (!png_image_write_to_memory(&png, bytes.data(), &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error(std::string("png_image_write_to_memory: ") + png.message);
  bytes.resize(size);
  return bytes;
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace layerplan::image_files
