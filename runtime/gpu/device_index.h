#pragma once
// The index arithmetic of the backend's own CUDA kernels (device_kernels.cu,
// batch_norm_kernels.cu, pointwise_kernels.cu), as functions that compile for the host too,
// so that CI tests it without a GPU (tests/gpu/device_index_test.cc) and the kernels run
// exactly what was tested. Plain C++ without CUDA headers.
#include <cstdint>

#ifdef __CUDACC__
#define LAYERPLAN_HOST_DEVICE __host__ __device__
#else
#define LAYERPLAN_HOST_DEVICE
#endif

namespace layerplan::gpu {

// Element i (row-major) of a box of extents `box`: its offsets in the source buffer (extents
// src_ext, box at src_at) and in the destination (dst_ext, dst_at), NCHW.
struct BoxCopyIndex {
  int64_t src = 0, dst = 0;
};
LAYERPLAN_HOST_DEVICE inline BoxCopyIndex box_copy_index(int64_t i, const int64_t* box, const int64_t* src_ext,
                                                         const int64_t* src_at, const int64_t* dst_ext,
                                                         const int64_t* dst_at) {
  int64_t idx[4];
  for (int d = 3; d >= 0; --d) {
    idx[d] = i % box[d];
    i /= box[d];
  }
  BoxCopyIndex out;
  for (int d = 0; d < 4; ++d) {
    out.src = out.src * src_ext[d] + src_at[d] + idx[d];
    out.dst = out.dst * dst_ext[d] + dst_at[d] + idx[d];
  }
  return out;
}

// Element k of channel c in an N x C x HW buffer (k runs over samples, then the plane).
LAYERPLAN_HOST_DEVICE inline int64_t channel_element(int64_t channels, int64_t hw, int64_t c, int64_t k) {
  return ((k / hw) * channels + c) * hw + k % hw;
}

// The whole-tensor NCHW index of element i (row-major) of a tile of extents `ext` at `origin`
// of a tensor of extents `whole`: what dropout's mask hashes.
LAYERPLAN_HOST_DEVICE inline int64_t whole_tensor_index(int64_t i, const int64_t* ext, const int64_t* origin,
                                                        const int64_t* whole) {
  int64_t coord[4];
  for (int d = 3; d >= 0; --d) {
    coord[d] = i % ext[d] + origin[d];
    i /= ext[d];
  }
  int64_t index = 0;
  for (int d = 0; d < 4; ++d) index = index * whole[d] + coord[d];
  return index;
}

}  // namespace layerplan::gpu
