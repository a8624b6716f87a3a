#include "runtime/image_decode.h"

#include <png.h>
#include <turbojpeg.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace layerplan {
namespace {

bool too_big(int64_t width, int64_t height) { return width * height > kMaxImagePixels; }

BadImage too_big_error(int64_t width, int64_t height, const std::string& name) {
  return BadImage("image '" + name + "': " + std::to_string(width) + " x " + std::to_string(height) +
                  " pixels, more than the " + std::to_string(kMaxImagePixels) +
                  " an image may have (PIL's decompression-bomb limit)");
}

bool starts_with(const std::vector<uint8_t>& bytes, std::initializer_list<uint8_t> magic) {
  return bytes.size() >= magic.size() && std::equal(magic.begin(), magic.end(), bytes.begin());
}

// 3 channels to 1 by BT.601 luma, rounded as PIL does ((R*19595 + G*38470 + B*7471 + 0x8000) >> 16).
std::vector<uint8_t> luma(const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> gray(rgb.size() / 3);
  for (size_t i = 0; i < gray.size(); ++i) {
    const uint32_t y = rgb[3 * i] * 19595u + rgb[3 * i + 1] * 38470u + rgb[3 * i + 2] * 7471u + 0x8000u;
    gray[i] = static_cast<uint8_t>(y >> 16);
  }
  return gray;
}

DecodedImage decode_jpeg(const std::vector<uint8_t>& bytes, int channels, const std::string& name) {
  const std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  if (!tj) throw std::runtime_error("TurboJPEG: " + std::string(tjGetErrorStr2(nullptr)));
  auto fail = [&](const char* what) {
    return BadImage("image '" + name + "': " + what + ": " + tjGetErrorStr2(tj.get()));
  };
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.get(), bytes.data(), bytes.size(), &width, &height, &subsampling, &colorspace) != 0)
    throw fail("not a readable JPEG");
  if (too_big(width, height)) throw too_big_error(width, height, name);
  DecodedImage image{width, height, channels, {}};
  image.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels));
  // TJFLAG_STOPONWARNING: a truncated file is an error, not an image filled with gray.
  if (tjDecompress2(tj.get(), bytes.data(), bytes.size(), image.pixels.data(), width, 0, height,
                    channels == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_STOPONWARNING) != 0)
    throw fail("damaged JPEG");
  return image;
}

DecodedImage decode_png(const std::vector<uint8_t>& bytes, const std::string& name, int channels) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  auto fail = [&](const char* what) {
    const std::string message = "image '" + name + "': " + what + ": " + png.message;
    png_image_free(&png);
    return BadImage(message);
  };
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) throw fail("not a readable PNG");
  if (too_big(png.width, png.height)) {
    png_image_free(&png);
    throw too_big_error(png.width, png.height, name);
  }
  png.format = PNG_FORMAT_RGB;  // gray, palette, 16-bit and alpha all become 8-bit RGB
  DecodedImage image{static_cast<int>(png.width), static_cast<int>(png.height), 3, {}};
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) throw fail("damaged PNG");
  png_image_free(&png);
  if (channels == 1) {
    image.pixels = luma(image.pixels);
    image.channels = 1;
  }
  return image;
}

}  // namespace

DecodedImage decode_image(const std::vector<uint8_t>& bytes, int channels, const std::string& name) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("decode_image: channels " + std::to_string(channels) + ", expected 1 or 3");
  if (starts_with(bytes, {0xFF, 0xD8, 0xFF})) return decode_jpeg(bytes, channels, name);
  if (starts_with(bytes, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'})) return decode_png(bytes, name, channels);
  throw BadImage("image '" + name + "': neither a JPEG nor a PNG (" +
                 (bytes.empty() ? std::string("empty file") : "unknown first bytes") + ")");
}

DecodedImage decode_image_file(const std::string& path, int channels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadImage("image '" + path + "': cannot be opened");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadImage("image '" + path + "': read error");
  return decode_image(bytes, channels, path);
}

}  // namespace layerplan
