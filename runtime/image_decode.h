#pragma once
// JPEG and PNG files decoded to 8-bit pixels with the channels a model takes: JPEG with
// libjpeg-turbo's TurboJPEG API, PNG with libpng's simplified API (docs/dependencies.md).
// The format comes from the file's first bytes, not its name.
//
// Gray from colour is ITU-R BT.601 luma, Y = 0.299 R + 0.587 G + 0.114 B (what a JPEG
// stores as its Y plane, and what PIL's convert("L") computes); colour from gray repeats
// the gray value in R, G and B. A PNG's alpha is dropped by compositing on black.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace layerplan {

// A file that is not a JPEG or PNG, or that is damaged or truncated. The message names
// the file and what is wrong.
class BadImage : public std::runtime_error {
 public:
  explicit BadImage(const std::string& message) : std::runtime_error(message) {}
};

// Pixels row by row, each pixel `channels` bytes (1: gray; 3: R, G, B).
struct DecodedImage {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
  uint8_t at(int y, int x, int c) const {
    return pixels[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
                      static_cast<size_t>(channels) +
                  static_cast<size_t>(c)];
  }
};

// The most pixels an image may have: PIL's limit, above which Image.open raises
// DecompressionBombError (2 x Image.MAX_IMAGE_PIXELS = 2 x 89,478,485). A header claiming
// more (a few bytes can claim 60,000 x 60,000) is a BadImage before any pixel memory is taken.
inline constexpr int64_t kMaxImagePixels = 178'956'970;

// `channels` is 1 or 3. Throws BadImage for a file that cannot be read or decoded; a JPEG
// decoder warning (such as data that ends early) counts as damage.
DecodedImage decode_image_file(const std::string& path, int channels);
// The same for a file's bytes; `name` is used in messages.
DecodedImage decode_image(const std::vector<uint8_t>& bytes, int channels, const std::string& name);

}  // namespace layerplan
