// Decoding JPEG and PNG files (gray and colour, either way round), damaged and truncated
// files, and how an image folder's classes and files are found and ordered.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>

#include "common/error.h"
#include "runtime/image_decode.h"
#include "runtime/image_folder.h"
#include "runtime/training/image_folder_source.h"
#include "tests/image_files.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A smooth 16 x 12 colour picture (JPEG keeps smooth pictures close).
std::vector<uint8_t> rgb_picture() {
  std::vector<uint8_t> p;
  for (int y = 0; y < 12; ++y) {
    for (int x = 0; x < 16; ++x) {
      p.push_back(static_cast<uint8_t>(40 + 10 * x));
      p.push_back(static_cast<uint8_t>(60 + 8 * y));
      p.push_back(120);
    }
  }
  return p;
}

int luma(const std::vector<uint8_t>& rgb, size_t i) {
  return static_cast<int>(std::lround(0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2]));
}

TEST(ImageDecode, PngIsExactInColourAndInGray) {
  const std::vector<uint8_t> rgb = rgb_picture();
  const std::vector<uint8_t> file = image_files::encode_png(rgb, 16, 12, 3);
  const DecodedImage colour = decode_image(file, 3, "a.png");
  EXPECT_EQ(colour.width, 16);
  EXPECT_EQ(colour.height, 12);
  EXPECT_EQ(colour.pixels, rgb);
  const DecodedImage gray = decode_image(file, 1, "a.png");
  ASSERT_EQ(gray.pixels.size(), 16u * 12u);
  for (size_t i = 0; i < gray.pixels.size(); ++i) EXPECT_NEAR(gray.pixels[i], luma(rgb, i), 1) << i;
}

TEST(ImageDecode, GrayPngBecomesThreeEqualChannels) {
  std::vector<uint8_t> g(20);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint8_t>(i * 12);
  const DecodedImage colour = decode_image(image_files::encode_png(g, 5, 4, 1), 3, "g.png");
  for (size_t i = 0; i < g.size(); ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(colour.pixels[3 * i + static_cast<size_t>(c)], g[i]);
  }
  EXPECT_EQ(decode_image(image_files::encode_png(g, 5, 4, 1), 1, "g.png").pixels, g);
}

TEST(ImageDecode, JpegIsCloseInColourAndInGray) {
  const std::vector<uint8_t> rgb = rgb_picture();
  const std::vector<uint8_t> file = image_files::encode_jpeg(rgb, 16, 12, 3, 100);
  const DecodedImage colour = decode_image(file, 3, "a.jpg");
  ASSERT_EQ(colour.pixels.size(), rgb.size());
  for (size_t i = 0; i < rgb.size(); ++i) EXPECT_NEAR(colour.pixels[i], rgb[i], 8) << i;
  const DecodedImage gray = decode_image(file, 1, "a.jpg");
  for (size_t i = 0; i < gray.pixels.size(); ++i) EXPECT_NEAR(gray.pixels[i], luma(rgb, i), 4) << i;
  // A gray JPEG read as colour: R = G = B.
  std::vector<uint8_t> g(16 * 12, 90);
  const DecodedImage from_gray = decode_image(image_files::encode_jpeg(g, 16, 12, 1), 3, "g.jpg");
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(from_gray.pixels[3 * i], 90, 1);
    EXPECT_EQ(from_gray.pixels[3 * i], from_gray.pixels[3 * i + 2]);
  }
}

TEST(ImageDecode, TruncatedAndForeignFilesAreBadImagesNamingTheFile) {
  std::vector<uint8_t> jpeg = image_files::encode_jpeg(rgb_picture(), 16, 12, 3);
  jpeg.resize(jpeg.size() / 2);
  std::vector<uint8_t> png = image_files::encode_png(rgb_picture(), 16, 12, 3);
  png.resize(png.size() - 20);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  for (const auto& [bytes, name] : {std::pair{jpeg, "cut.jpg"}, std::pair{png, "cut.png"}, std::pair{text, "t.jpg"},
                                    std::pair{std::vector<uint8_t>{}, "empty.png"}}) {
    try {
      decode_image(bytes, 3, name);
      ADD_FAILURE() << name << " decoded";
    } catch (const BadImage& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("'") + name + "'"));
    }
  }
  EXPECT_THROW(decode_image_file("/nonexistent/x.png", 1), BadImage);
}

// Big-endian 16 and 32-bit fields as JPEG and PNG headers store them.
void put_be(std::vector<uint8_t>& bytes, size_t at, uint32_t value, int width) {
  for (int i = 0; i < width; ++i)
    bytes[at + static_cast<size_t>(i)] = static_cast<uint8_t>(value >> (8 * (width - 1 - i)));
}

// A small valid file whose header is rewritten to claim 60,000 x 60,000 pixels (3.6e9, above
// PIL's limit): refused as a BadImage naming the file and the size, before pixel memory is taken.
TEST(ImageDecode, AHeaderClaimingTooManyPixelsIsABadImage) {
  std::vector<uint8_t> jpeg = image_files::encode_jpeg(rgb_picture(), 16, 12, 3);
  // The frame header: FF C0 (baseline) or C1/C2, length (2), precision (1), height (2), width (2).
  size_t sof = 2;
  while (sof + 9 < jpeg.size() && !(jpeg[sof] == 0xFF && jpeg[sof + 1] >= 0xC0 && jpeg[sof + 1] <= 0xC2)) ++sof;
  ASSERT_LT(sof + 9, jpeg.size());
  put_be(jpeg, sof + 5, 60000, 2);
  put_be(jpeg, sof + 7, 60000, 2);
  std::vector<uint8_t> png = image_files::encode_png(rgb_picture(), 16, 12, 3);
  // Signature (8), IHDR's length (4) and type (4), width (4), height (4), ..., its CRC after 13 bytes.
  put_be(png, 16, 60000, 4);
  put_be(png, 20, 60000, 4);
  put_be(png, 29, static_cast<uint32_t>(crc32(0, png.data() + 12, 17)), 4);
  for (const auto& [bytes, name] : {std::pair{jpeg, "bomb.jpg"}, std::pair{png, "bomb.png"}}) {
    EXPECT_THAT([&] { decode_image(bytes, 3, name); },
                ::testing::ThrowsMessage<BadImage>(::testing::AllOf(HasSubstr(name), HasSubstr("60000 x 60000"))));
  }
}

void write_png(const fs::path& path) {
  fs::create_directories(path.parent_path());
  image_files::write_file(path.string(), image_files::encode_png(std::vector<uint8_t>(64, 128), 8, 8, 1));
}

TEST(ImageFolder, ClassesAndFilesAreInTorchvisionsOrder) {
  ScratchDir dir;
  const fs::path root = dir.path() / "data";
  // Code point order: upper case before lower case, "b" before "b2".
  for (const char* f : {"cat/b.png", "cat/a.JPG", "cat/sub/a.png", "Zebra/1.jpeg", "dog/x.png", "dog/notes.txt"}) {
    write_png(root / f);
  }
  const ImageFolder folder = scan_image_folder(root.string());
  EXPECT_EQ(folder.classes, (std::vector<std::string>{"Zebra", "cat", "dog"}));
  std::vector<std::string> relative;
  for (const std::string& f : folder.files) relative.push_back(fs::relative(f, root).string());
  EXPECT_EQ(relative,
            (std::vector<std::string>{"Zebra/1.jpeg", "cat/a.JPG", "cat/b.png", "cat/sub/a.png", "dog/x.png"}));
  EXPECT_EQ(folder.labels, (std::vector<int64_t>{0, 1, 1, 1, 2}));
}

TEST(ImageFolder, MissingEmptyAndClasslessFoldersAreUsageErrorsNamingThePath) {
  ScratchDir dir;
  const std::string missing = (dir.path() / "nope").string();
  EXPECT_THAT([&] { scan_image_folder(missing); }, ::testing::ThrowsMessage<UsageError>(HasSubstr(missing)));
  fs::create_directories(dir.path() / "flat");
  write_png(dir.path() / "flat" / "a.png");
  EXPECT_THAT([&] { scan_image_folder((dir.path() / "flat").string()); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("no class subfolders")));
  fs::create_directories(dir.path() / "emptyclass" / "a");
  write_png(dir.path() / "emptyclass" / "b" / "x.png");
  EXPECT_THAT([&] { scan_image_folder((dir.path() / "emptyclass").string()); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("class folder 'a' has no")));
}

TEST(ImageFolder, ABadFileIsReplacedByTheNextImageOfItsClassOrStopsUnderStrict) {
  ScratchDir dir;
  const fs::path root = dir.path() / "data";
  write_png(root / "a" / "1.png");
  fs::create_directories(root / "b");
  image_files::write_file((root / "b" / "1.png").string(), {0x89, 'P', 'N', 'G'});
  write_png(root / "b" / "2.png");
  const Shape input{{2, 1, 8, 8}};
  const auto source = image_folder_source(scan_image_folder(root.string()), input, {.augment = false});
  std::vector<float> bad(64), good(64);
  source->image(1, 0, bad.data());
  source->image(2, 0, good.data());
  EXPECT_EQ(bad, good);
  EXPECT_EQ(source->label(1), 1);
  EXPECT_EQ(source->bad_images(), 1);
  const auto strict = image_folder_source(scan_image_folder(root.string()), input, {.augment = false, .strict = true});
  EXPECT_THAT([&] { strict->image(1, 0, bad.data()); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr((root / "b" / "1.png").string())));
}

TEST(ImageFolder, AugmentationDependsOnSeedEpochAndIndexOnly) {
  ScratchDir dir;
  const fs::path root = dir.path() / "data";
  std::vector<uint8_t> pixels(32 * 24);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7);
  fs::create_directories(root / "a");
  image_files::write_file((root / "a" / "1.png").string(), image_files::encode_png(pixels, 32, 24, 1));
  const Shape input{{1, 1, 16, 16}};
  const auto one = image_folder_source(scan_image_folder(root.string()), input, {.seed = 4});
  const auto two = image_folder_source(scan_image_folder(root.string()), input, {.seed = 4});
  std::vector<float> a(256), b(256), c(256);
  one->image(0, 1, a.data());
  two->image(0, 1, b.data());
  one->image(0, 2, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace layerplan
