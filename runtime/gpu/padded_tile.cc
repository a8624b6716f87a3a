#include "runtime/gpu/padded_tile.h"

#include "runtime/kernels/backend_helpers.h"

namespace layerplan::gpu {

PaddedTile padded_tile(const Window& w, const Box& out_box, const Box& in_box) {
  const kernels_internal::TilePadding pad = kernels_internal::tile_padding(w, out_box, in_box);
  PaddedTile t;
  t.extents = {in_box.dim[0].size(), in_box.dim[1].size(), in_box.dim[2].size() + pad.l[0] + pad.r[0],
               in_box.dim[3].size() + pad.l[1] + pad.r[1]};
  t.at = {0, 0, pad.l[0], pad.l[1]};
  return t;
}

}  // namespace layerplan::gpu
