#include "runtime/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include "common/error.h"

namespace layerplan {
namespace fs = std::filesystem;
namespace {

bool is_image_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* ext : {".jpg", ".jpeg", ".png"}) {
    const std::string e = ext;
    if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

// os.walk(dir, followlinks=True) sorted: each folder's path with its sorted file names,
// folders by path. std::string compares as unsigned bytes: UTF-8 code point order.
void walk(const fs::path& dir, std::vector<std::pair<std::string, std::vector<std::string>>>& out) {
  std::vector<std::string> files;
  std::vector<fs::path> subdirs;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    std::error_code e;
    if (it->is_directory(e)) {
      subdirs.push_back(it->path());
    } else if (it->is_regular_file(e) && is_image_name(it->path().filename().string())) {
      files.push_back(it->path().filename().string());
    }
  }
  require(!error, "image folder '" + dir.string() + "' cannot be read: " + error.message());
  std::sort(files.begin(), files.end());
  out.emplace_back(dir.string(), std::move(files));
  for (const fs::path& sub : subdirs) walk(sub, out);
}

}  // namespace

ImageFolder scan_image_folder(const std::string& root) {
  std::error_code error;
  require(fs::is_directory(root, error),
          "imagefolder:" + root + ": no such folder (expected one subfolder of images per class)");
  ImageFolder folder;
  folder.root = root;
  for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    std::error_code e;
    if (it->is_directory(e)) folder.classes.push_back(it->path().filename().string());
  }
  require(!error, "imagefolder:" + root + ": cannot be read: " + error.message());
  require(!folder.classes.empty(), "imagefolder:" + root + ": no class subfolders (expected one per class)");
  std::sort(folder.classes.begin(), folder.classes.end());
  for (size_t label = 0; label < folder.classes.size(); ++label) {
    std::vector<std::pair<std::string, std::vector<std::string>>> found;
    walk(fs::path(root) / folder.classes[label], found);
    std::sort(found.begin(), found.end());
    const size_t before = folder.files.size();
    for (const auto& [dir, names] : found) {
      for (const std::string& name : names) {
        folder.files.push_back((fs::path(dir) / name).string());
        folder.labels.push_back(static_cast<int64_t>(label));
      }
    }
    require(folder.files.size() > before,
            "imagefolder:" + root + ": class folder '" + folder.classes[label] + "' has no .jpg, .jpeg or .png files");
  }
  return folder;
}

}  // namespace layerplan
