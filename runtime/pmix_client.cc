#include "runtime/pmix_client.h"

#include <dlfcn.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "runtime/communicator.h"
#include "runtime/dl_symbol.h"

namespace layerplan {
namespace {

void set_key(pmix_key_t& target, const std::string& key) {
  std::memset(target, 0, sizeof target);
  std::memcpy(target, key.data(), std::min(key.size(), sizeof target - 1));
}

// Seconds every fence and get may take: the communicator's timeout (docs/runtime.md).
int timeout_seconds() {
  const char* text = std::getenv("LAYERPLAN_COMM_TIMEOUT_S");
  const long seconds = text ? std::strtol(text, nullptr, 10) : 0;
  return seconds >= 1 && seconds <= 1'000'000 ? static_cast<int>(seconds) : 60;
}

pmix_info_t timeout_info() {
  pmix_info_t info;
  std::memset(&info, 0, sizeof info);
  set_key(info.key, PMIX_TIMEOUT);
  info.value.type = PMIX_INT;
  info.value.data.integer = timeout_seconds();
  return info;
}

std::string status_text(pmix_status_t status) {
  return status == PMIX_ERR_TIMEOUT ? "timed out after " + std::to_string(timeout_seconds()) + " s"
                                    : "status " + std::to_string(status);
}

}  // namespace

struct PmixClient::Api {
  void* library = nullptr;
  decltype(&PMIx_Init) init = nullptr;
  decltype(&PMIx_Finalize) finalize = nullptr;
  decltype(&PMIx_Put) put = nullptr;
  decltype(&PMIx_Commit) commit = nullptr;
  decltype(&PMIx_Fence) fence = nullptr;
  decltype(&PMIx_Get) get = nullptr;
  decltype(&PMIx_Value_destruct) value_destruct = nullptr;
  pmix_proc_t self{};
  mutable pmix_status_t last_status = PMIX_SUCCESS;

  bool complete() const { return init && finalize && put && commit && fence && get && value_destruct; }

  // The value of `key` that process `rank` of this step holds (nullptr when absent); the
  // caller releases it with release().
  pmix_value_t* lookup(pmix_rank_t rank, const char* key) const {
    pmix_proc_t proc = self;
    proc.rank = rank;
    pmix_value_t* value = nullptr;
    pmix_info_t timeout = timeout_info();
    last_status = get(&proc, key, &timeout, 1, &value);
    return last_status == PMIX_SUCCESS ? value : nullptr;
  }
  void release(pmix_value_t* value) const {
    value_destruct(value);
    std::free(value);  // PMIx allocates values with malloc (PMIX_VALUE_RELEASE)
  }
};

PmixClient& PmixClient::instance() {
  static PmixClient client;  // PMIx_Init once per process; finalized at exit
  return client;
}

PmixClient::PmixClient() : api_(std::make_unique<Api>()) {
  // RTLD_GLOBAL: libpmix opens its own components, which resolve its symbols.
  api_->library = dlopen("libpmix.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (api_->library == nullptr) {
    const char* why = dlerror();
    throw UsageError(std::string("PMIX_RANK is set (srun --mpi=pmix) but libpmix.so.2 could not be loaded (") +
                     (why ? why : "not found") + "): install libpmix2 on the node, or use `srun --mpi=pmi2`");
  }
  api_->init = dl_symbol<decltype(&PMIx_Init)>(api_->library, "PMIx_Init");
  api_->finalize = dl_symbol<decltype(&PMIx_Finalize)>(api_->library, "PMIx_Finalize");
  api_->put = dl_symbol<decltype(&PMIx_Put)>(api_->library, "PMIx_Put");
  api_->commit = dl_symbol<decltype(&PMIx_Commit)>(api_->library, "PMIx_Commit");
  api_->fence = dl_symbol<decltype(&PMIx_Fence)>(api_->library, "PMIx_Fence");
  api_->get = dl_symbol<decltype(&PMIx_Get)>(api_->library, "PMIx_Get");
  api_->value_destruct = dl_symbol<decltype(&PMIx_Value_destruct)>(api_->library, "PMIx_Value_destruct");
  pmix_status_t status = PMIX_ERROR;
  if (api_->complete()) status = api_->init(&api_->self, nullptr, 0);
  if (status != PMIX_SUCCESS) {
    dlclose(api_->library);
    throw UsageError("PMIX_RANK is set but PMIx_Init failed (status " + std::to_string(status) +
                     "): is this a task of `srun --mpi=pmix`?");
  }
  rank_ = static_cast<int>(api_->self.rank);
  pmix_value_t* job_size = api_->lookup(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
  if (job_size != nullptr && job_size->type == PMIX_UINT32) size_ = static_cast<int>(job_size->data.uint32);
  if (job_size != nullptr) api_->release(job_size);
}

PmixClient::~PmixClient() {
  api_->finalize(nullptr, 0);
  // libpmix keeps threads of its own until finalized; it is not unloaded.
}

void PmixClient::put(const std::string& key, std::span<const char> value) {
  require(key.size() < PMIX_MAX_KEYLEN, "PMIx key of " + std::to_string(key.size()) +
                                            " characters: expected fewer than " + std::to_string(PMIX_MAX_KEYLEN));
  pmix_key_t name;
  set_key(name, key);
  pmix_value_t v;
  std::memset(&v, 0, sizeof v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(value.data());  // PMIx_Put copies it
  v.data.bo.size = value.size();
  const pmix_status_t status = api_->put(PMIX_GLOBAL, name, &v);
  if (status != PMIX_SUCCESS) {
    throw CommError("rank " + std::to_string(rank_) + ": PMIx_Put of '" + key + "' failed (status " +
                    std::to_string(status) + ")");
  }
}

void PmixClient::fence() {
  pmix_status_t status = api_->commit();
  if (status == PMIX_SUCCESS) {
    pmix_proc_t everyone = api_->self;
    everyone.rank = PMIX_RANK_WILDCARD;
    pmix_info_t info[2];
    std::memset(&info[0], 0, sizeof info[0]);
    set_key(info[0].key, PMIX_COLLECT_DATA);
    info[0].value.type = PMIX_BOOL;
    info[0].value.data.flag = true;
    info[1] = timeout_info();
    status = api_->fence(&everyone, 1, info, 2);
  }
  if (status != PMIX_SUCCESS) {
    throw CommError("rank " + std::to_string(rank_) + ": PMIx fence of every task failed (" + status_text(status) +
                    "): did a task of the step die?");
  }
}

std::vector<char> PmixClient::get(const std::string& key) {
  pmix_key_t name;
  set_key(name, key);
  // Keys are unique in the step, so whichever task put it: PMIX_RANK_UNDEF searches them all.
  pmix_value_t* value = api_->lookup(PMIX_RANK_UNDEF, name);
  if (value == nullptr || value->type != PMIX_BYTE_OBJECT) {
    if (value != nullptr) api_->release(value);
    throw CommError("rank " + std::to_string(rank_) + ": PMIx_Get of '" + key + "' found nothing (" +
                    status_text(api_->last_status) + "): did a task put it before the fence?");
  }
  std::vector<char> out(value->data.bo.bytes, value->data.bo.bytes + value->data.bo.size);
  api_->release(value);
  return out;
}

}  // namespace layerplan
