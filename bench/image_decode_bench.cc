// Decode plus augment throughput of `--data imagefolder:DIR` on one core: 500 x 375 RGB
// JPEGs (an ImageNet-like size, quality 90) decoded with TurboJPEG and transformed to
// 224 x 224 by the training recipe (RandomResizedCrop, flip, normalise) and by the
// evaluation recipe (Resize 256, CenterCrop 224). One thread: images/s per core.
//   image_decode_bench [SECONDS per recipe, default 3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "runtime/image_decode.h"
#include "runtime/image_transforms.h"
#include "tests/image_files.h"

using namespace layerplan;

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  // 16 different pictures: smooth gradients with noise, so the files are photo-sized (~60 KB).
  std::vector<std::vector<uint8_t>> files;
  std::mt19937 noise(1);
  for (int f = 0; f < 16; ++f) {
    std::vector<uint8_t> rgb(size_t{500} * 375 * 3);
    for (int y = 0; y < 375; ++y) {
      for (int x = 0; x < 500; ++x) {
        for (int c = 0; c < 3; ++c) {
          const int v = (x * (c + 1) + y * (3 - c) + f * 17) / 4 + static_cast<int>(noise() % 48);
          rgb[(static_cast<size_t>(y) * 500 + static_cast<size_t>(x)) * 3 + static_cast<size_t>(c)] =
              static_cast<uint8_t>(v & 255);
        }
      }
    }
    files.push_back(image_files::encode_jpeg(rgb, 500, 375, 3, 90));
  }
  size_t bytes = 0;
  for (const auto& f : files) bytes += f.size();
  std::printf("16 JPEGs of 500x375, %.0f KB each on average, to 224x224x3\n", static_cast<double>(bytes) / 16 / 1024);
  const Normalization norm = imagenet_normalization(3);
  std::vector<float> out(size_t{3} * 224 * 224);
  for (const bool train : {true, false}) {
    std::mt19937_64 rng(7);
    int64_t images = 0;
    double decode_s = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
      const auto t0 = std::chrono::steady_clock::now();
      const DecodedImage image = decode_image(files[static_cast<size_t>(images % 16)], 3, "bench");
      decode_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (train) {
        train_transform(image, 224, 224, rng, norm, out.data());
      } else {
        eval_transform(image, 224, 224, norm, out.data());
      }
      ++images;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("%-10s %7.1f images/s per core (decode %.2f ms, transform %.2f ms an image)\n",
                train ? "training" : "evaluation", static_cast<double>(images) / elapsed,
                1e3 * decode_s / static_cast<double>(images), 1e3 * (elapsed - decode_s) / static_cast<double>(images));
  }
  return 0;
}
