#pragma once
// A folder of labelled images in torchvision's ImageFolder layout: one subfolder per class,
// the classes numbered in the order of their names sorted by code point (as Python's
// sorted()), each class's images found in its subfolder and the folders below it (symbolic
// links followed), ordered as torchvision orders them: by folder path, then by file name.
// Images are the files whose names end, in any case, in .jpg, .jpeg or .png: the JPEG and
// PNG entries of torchvision's IMG_EXTENSIONS. Other files are left out.
#include <cstdint>
#include <string>
#include <vector>

namespace layerplan {

struct ImageFolder {
  std::string root;
  std::vector<std::string> classes;  // sorted; class i is label i
  std::vector<std::string> files;    // every image, as paths under root
  std::vector<int64_t> labels;       // of each file
};

// Throws UsageError naming the path for a missing or unreadable folder, one with no class
// subfolders, or a class subfolder with no images (torchvision refuses it too).
ImageFolder scan_image_folder(const std::string& root);

}  // namespace layerplan
