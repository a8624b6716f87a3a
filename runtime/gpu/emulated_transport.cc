// NOT YET RUN ON A GPU: compiled and linked in CI only (docs/gpu-backend.md, "What has run where").
#include "runtime/gpu/emulated_transport.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "runtime/gpu/cuda_check.h"
#include "runtime/gpu/device_arena.h"
#include "runtime/gpu/device_kernels.h"

namespace layerplan {

using gpu::check;

struct EmulatedDevicesTransport::State {
  gpu::DeviceArena arena;
  std::map<int, cudaStream_t> streams;  // one per emulated device
  std::vector<cudaEvent_t> events;      // reused; events[k] for the k-th hand-over of a call

  explicit State(size_t bytes) : arena(bytes) {}
  ~State() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    for (const auto& [device, s] : streams) cudaStreamDestroy(s);
  }
  cudaStream_t stream(int device) {
    auto [it, fresh] = streams.emplace(device, nullptr);
    if (fresh) check(cudaStreamCreateWithFlags(&it->second, cudaStreamNonBlocking), "cudaStreamCreate");
    return it->second;
  }
  // Makes `to` wait for what `from` has queued so far (hand-over number k of this call).
  void hand_over(int from, int to, size_t k) {
    while (events.size() <= k) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
      events.push_back(e);
    }
    check(cudaEventRecord(events[k], stream(from)), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream(to), events[k], 0), "cudaStreamWaitEvent");
  }
  float* upload(const float* values, size_t count, int device) {
    float* d = arena.allocate_n<float>(count);
    check(cudaMemcpyAsync(d, values, count * sizeof(float), cudaMemcpyHostToDevice, stream(device)), "upload");
    return d;
  }
  void download(const float* d, float* values, size_t count, int device) {
    check(cudaMemcpyAsync(values, d, count * sizeof(float), cudaMemcpyDeviceToHost, stream(device)), "download");
  }
  void synchronize() {
    for (const auto& [device, s] : streams) check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }
};

EmulatedDevicesTransport::EmulatedDevicesTransport(int gpu, size_t arena_bytes) {
  check(cudaSetDevice(gpu), "cudaSetDevice");
  state_ = std::make_unique<State>(arena_bytes);
}

EmulatedDevicesTransport::~EmulatedDevicesTransport() = default;

namespace {

gpu::Dims4 offset_in(const Box& region, const Box& tensor) {
  return {region.dim[0].lo - tensor.dim[0].lo, region.dim[1].lo - tensor.dim[1].lo, region.dim[2].lo - tensor.dim[2].lo,
          region.dim[3].lo - tensor.dim[3].lo};
}

gpu::Dims4 extents_of(const Box& b) { return {b.dim[0].size(), b.dim[1].size(), b.dim[2].size(), b.dim[3].size()}; }

}  // namespace

void EmulatedDevicesTransport::exchange(const std::vector<BoxMove>& moves, const EdgeTag& tag) {
  State& s = *state_;
  s.arena.reset();
  // Each tensor goes to its device once, however many moves read or write it.
  std::map<const Tensor*, const float*> sources;
  std::map<Tensor*, std::pair<float*, int>> destinations;
  for (const BoxMove& m : moves) {
    if (m.src == nullptr || m.dst == nullptr) throw std::invalid_argument("exchange: a tensor is missing");
    if (!sources.count(m.src))
      sources[m.src] = s.upload(m.src->data(), static_cast<size_t>(m.src->size()), m.src_device);
    if (!destinations.count(m.dst))
      destinations[m.dst] = {s.upload(m.dst->data(), static_cast<size_t>(m.dst->size()), m.dst_device), m.dst_device};
  }
  const bool add = tag.direction == Direction::kBackward;
  size_t hand_overs = 0;
  for (const BoxMove& m : moves) {
    const int64_t n = m.region.volume();
    if (n == 0) continue;
    const gpu::Dims4 box = extents_of(m.region);
    float* packed = s.arena.allocate_n<float>(static_cast<size_t>(n));
    gpu::copy_box(sources[m.src], extents_of(m.src->box()), offset_in(m.region, m.src->box()), packed, box,
                  {0, 0, 0, 0}, box, false, s.stream(m.src_device));
    s.hand_over(m.src_device, m.dst_device, hand_overs++);
    float* arrived = s.arena.allocate_n<float>(static_cast<size_t>(n));  // the destination's copy
    check(cudaMemcpyAsync(arrived, packed, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice,
                          s.stream(m.dst_device)),
          "box hand-over");
    gpu::copy_box(arrived, box, {0, 0, 0, 0}, destinations[m.dst].first, extents_of(m.dst->box()),
                  offset_in(m.region, m.dst->box()), box, add, s.stream(m.dst_device));
    count_move(tag, m.src_device, m.dst_device, n);
  }
  for (const auto& [tensor, at] : destinations) {
    s.download(at.first, tensor->data(), static_cast<size_t>(tensor->size()), at.second);
  }
  s.synchronize();
}

void EmulatedDevicesTransport::all_reduce(const std::vector<int>& devices,
                                          const std::vector<std::vector<float>*>& buffers,
                                          const std::vector<ReduceSegment>& segments) {
  const int p = static_cast<int>(devices.size());
  if (p <= 1) return;
  State& s = *state_;
  s.arena.reset();
  const auto n = static_cast<int64_t>(buffers[0]->size());
  std::vector<int> order(devices.size());  // positions in ascending device order: the ring
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return devices[static_cast<size_t>(a)] < devices[static_cast<size_t>(b)]; });
  std::vector<float*> on(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) on[i] = s.upload(buffers[i]->data(), buffers[i]->size(), devices[i]);
  size_t hand_overs = 0;
  // Step s of the reduce-scatter: position r's chunk (r - s) is added into position r + 1's;
  // of the all-gather: chunk (r + 1 - s) is copied there (InProcessTransport's schedule).
  for (int k = 0; k < 2 * (p - 1); ++k) {
    const bool gather = k >= p - 1;
    const int step = gather ? k - (p - 1) : k;
    for (int r = 0; r < p; ++r) {
      const auto from = static_cast<size_t>(order[static_cast<size_t>(r)]);
      const auto to = static_cast<size_t>(order[static_cast<size_t>((r + 1) % p)]);
      const auto [lo, hi] = ring_chunk(n, p, (((gather ? r + 1 : r) - step) % p + p) % p);
      s.hand_over(devices[from], devices[to], hand_overs++);
      if (gather) {
        check(cudaMemcpyAsync(on[to] + lo, on[from] + lo, static_cast<size_t>(hi - lo) * sizeof(float),
                              cudaMemcpyDeviceToDevice, s.stream(devices[to])),
              "ring all-gather");
      } else {
        gpu::add_into(on[to] + lo, on[from] + lo, hi - lo, s.stream(devices[to]));
      }
      count_ring_send(segments, lo, hi, devices[from], devices[to]);
    }
    s.synchronize();  // every position's step ends before the next reads its chunks
  }
  for (size_t i = 0; i < devices.size(); ++i) s.download(on[i], buffers[i]->data(), buffers[i]->size(), devices[i]);
  s.synchronize();
}

}  // namespace layerplan
