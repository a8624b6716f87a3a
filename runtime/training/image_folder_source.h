#pragma once
// `--data imagefolder:DIR` and `--val-data imagefolder:DIR`: the images of a folder in
// torchvision's ImageFolder layout (runtime/image_folder.h), each decoded when a batch
// needs it (so a rank decodes only the samples at its batch positions) and transformed as
// torchvision's ImageNet reference recipe (runtime/image_transforms.h) to the model's
// input size and channels.
//
// Training samples are augmented with a generator seeded by (seed, epoch, sample index):
// the same sample of the same epoch is cropped and flipped the same way by whichever
// rank or thread decodes it, so one process and any number of ranks train alike.
//
// A file that cannot be decoded is reported once (a warning on stderr naming it) and the
// next readable image of its class (in folder order, wrapping) takes its place with the
// same draws: the label is unchanged, so ranks that do not decode it still agree on it.
// With `strict` it is a UsageError naming the file instead.
#include <cstdint>
#include <memory>

#include "model/model_graph.h"
#include "runtime/image_folder.h"
#include "runtime/training/train_data.h"

namespace layerplan {

struct ImageFolderSourceOptions {
  bool augment = true;  // training: random crop and flip; evaluation: resize and centre crop
  uint64_t seed = 1;
  bool strict = false;
  double crop_scale = 0.08;  // RandomResizedCrop's smallest area share
};

// `input` is the model's input shape (N x C x H x W); C must be 1 or 3 (UsageError).
std::unique_ptr<SampleSource> image_folder_source(ImageFolder folder, const Shape& input,
                                                  const ImageFolderSourceOptions& options);

}  // namespace layerplan
