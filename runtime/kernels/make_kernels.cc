// The backend factory: make_kernels and the names `--kernels` takes.
#include <stdexcept>
#include <string>

#include "runtime/kernels/kernels.h"
#include "runtime/kernels/onednn_kernels.h"
#include "runtime/kernels/reference_kernels.h"

namespace layerplan {

const char* kernel_backend_name(KernelBackend backend) {
  return backend == KernelBackend::kOnednn ? "onednn" : "reference";
}

std::unique_ptr<Kernels> make_kernels(KernelBackend backend, int threads) {
  if (backend == KernelBackend::kReference) return std::make_unique<ReferenceKernels>();
  return std::make_unique<OnednnKernels>(threads);
}

std::unique_ptr<Kernels> make_kernels(std::string_view backend, int threads) {
  for (const KernelBackend b : {KernelBackend::kReference, KernelBackend::kOnednn}) {
    if (backend == kernel_backend_name(b)) return make_kernels(b, threads);
  }
  throw std::invalid_argument("unknown kernel backend '" + std::string(backend) + "': expected reference or onednn");
}

}  // namespace layerplan
