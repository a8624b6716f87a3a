#pragma once
// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
// Own CUDA kernels of the layers without a fitting library call, each doing per element what
// the reference loops do (runtime/kernels/reference_*.cc), in the same order, so that the
// results match them closely: dropout (the same hash of the seed and the whole-tensor index,
// kernel_types.h), global average pooling, softmax cross-entropy, GELU, channel shuffle.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/gpu/device_kernels.h"

namespace layerplan::gpu {

// y = keep(seed, whole-tensor index) ? x / (1 - p) : 0 over a tile of extents `ext` at
// `origin` of a whole tensor of extents `whole`; also the backward (dropout is linear).
void dropout(const float* x, float* y, const Dims4& ext, const Dims4& origin, const Dims4& whole, uint64_t seed,
             double probability, cudaStream_t stream);

// y[n][c] = mean over the h x w plane of x[n][c] (x: n x c x h x w).
void global_avg_pool_forward(const float* x, float* y, int64_t planes, int64_t area, cudaStream_t stream);
// dx[n][c][.][.] = dy[n][c] / area.
void global_avg_pool_backward(const float* dy, float* dx, int64_t planes, int64_t area, cudaStream_t stream);

// y = GELU(x) over `count` elements, the erf form or (tanh) PyTorch's approximate='tanh',
// computed in double as runtime/kernels/activation_math.h; the backward takes the input x.
void gelu_forward(const float* x, float* y, int64_t count, bool tanh, cudaStream_t stream);
void gelu_backward(const float* x, const float* dy, float* dx, int64_t count, bool tanh, cudaStream_t stream);

// Per sample i of `samples` rows of `classes` logits: softmax probabilities, and
// loss[i] = log(sum exp(x - max)) + max - x[label[i]] (in double).
void softmax_cross_entropy_forward(const float* x, const int64_t* labels, float* probabilities, double* loss,
                                   int64_t samples, int64_t classes, cudaStream_t stream);
// dx = (p - onehot(label)) / batch.
void softmax_cross_entropy_backward(const float* probabilities, const int64_t* labels, float* dx, int64_t samples,
                                    int64_t classes, double batch, cudaStream_t stream);

// Channel shuffle of a tile holding every channel (x, y: samples x channels x area):
// y[n][c] = x[n][(c % groups) * (channels / groups) + c / groups]; inverse: the backward,
// dx[n][that channel] = dy[n][c].
void channel_shuffle(const float* from, float* to, int64_t samples, int64_t channels, int64_t area, int64_t groups,
                     bool inverse, cudaStream_t stream);

}  // namespace layerplan::gpu
