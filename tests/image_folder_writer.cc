// Writes a subset of Fashion-MNIST (Debian's dataset-fashion-mnist, or
// $LAYERPLAN_FASHION_MNIST_DIR) as an image folder in torchvision's ImageFolder layout, for
// the `--data imagefolder:DIR` tests:
//   layerplan_image_folder_writer OUT TRAIN VAL
// writes the first TRAIN training images to OUT/train/CLASS/ and the first VAL test images
// to OUT/val/CLASS/, named by their index, PNG and JPEG by turns. The class folders carry
// the dataset's class names, whose sorted order is not the label order.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/datasets.h"
#include "tests/image_files.h"

namespace {

using namespace layerplan;
namespace fs = std::filesystem;

const char* const kClasses[] = {"T-shirt_top", "Trouser", "Pullover", "Dress", "Coat",
                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle_boot"};

void write_split(const std::string& images, const std::string& labels, int64_t count, const fs::path& out) {
  const ImageBatch batch = read_idx_dataset(images, labels, {0, count});
  const int64_t h = batch.shape.height, w = batch.shape.width;
  for (const char* name : kClasses) fs::create_directories(out / name);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<uint8_t> pixels(static_cast<size_t>(h * w));
    for (size_t p = 0; p < pixels.size(); ++p) {
      pixels[p] = static_cast<uint8_t>(std::lround(batch.images[static_cast<size_t>(i * h * w) + p] * 255.0f));
    }
    char name[32];
    const bool png = i % 2 == 0;
    std::snprintf(name, sizeof name, "%06lld.%s", static_cast<long long>(i), png ? "png" : "jpg");
    const fs::path path = out / kClasses[batch.labels[static_cast<size_t>(i)]] / name;
    image_files::write_file(path.string(),
                            png ? image_files::encode_png(pixels, static_cast<int>(w), static_cast<int>(h), 1)
                                : image_files::encode_jpeg(pixels, static_cast<int>(w), static_cast<int>(h), 1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s OUT TRAIN VAL\n", argv[0]);
    return 2;
  }
  try {
    const char* env = std::getenv("LAYERPLAN_FASHION_MNIST_DIR");
    const FashionMnistFiles f = fashion_mnist_files(env && *env ? env : kDebianFashionMnistDir);
    write_split(f.train_images, f.train_labels, std::atoll(argv[2]), fs::path(argv[1]) / "train");
    write_split(f.test_images, f.test_labels, std::atoll(argv[3]), fs::path(argv[1]) / "val");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
