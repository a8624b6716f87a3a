#include "runtime/pmi2_client.h"

#include <dlfcn.h>
#include <slurm/pmi2.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "runtime/communicator.h"
#include "runtime/dl_symbol.h"

namespace layerplan {
namespace {

// PMI-2's limits include the terminating NUL; keys stay well inside so that a piece
// number fits after them.
constexpr size_t kMaxPlainKey = 48;
constexpr size_t kPieceBytes = (PMI2_MAX_VALLEN - 1) / 2;  // hex doubles the length

// Slurm's wire format separates fields with ';' and '='; other keys are replaced by a
// hash of themselves (FNV-1a), the same on every task.
std::string pmi_key(const std::string& key) {
  const bool plain = key.size() <= kMaxPlainKey && std::all_of(key.begin(), key.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/_.-", c) != nullptr;
                     });
  if (plain) return key;
  uint64_t hash = 14695981039346656037ULL;
  for (char c : key) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char text[24];
  std::snprintf(text, sizeof text, "h%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string hex_encode(std::span<const char> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

struct Pmi2Client::Api {
  void* library = nullptr;
  decltype(&PMI2_Init) init = nullptr;
  decltype(&PMI2_Finalize) finalize = nullptr;
  decltype(&PMI2_KVS_Put) put = nullptr;
  decltype(&PMI2_KVS_Fence) fence = nullptr;
  decltype(&PMI2_KVS_Get) get = nullptr;
};

Pmi2Client& Pmi2Client::instance() {
  static Pmi2Client client;  // PMI2_Init once per process; finalized at exit
  return client;
}

Pmi2Client::Pmi2Client() : api_(std::make_unique<Api>()) {
  api_->library = dlopen("libpmi2.so.0", RTLD_NOW | RTLD_LOCAL);
  if (api_->library == nullptr) {
    const char* why = dlerror();
    throw UsageError(std::string("PMI_FD is set (srun --mpi=pmi2) but Slurm's libpmi2.so.0 could not be loaded (") +
                     (why ? why : "not found") + "): install libpmi2-0 on the node, or start the ranks another way");
  }
  api_->init = dl_symbol<decltype(&PMI2_Init)>(api_->library, "PMI2_Init");
  api_->finalize = dl_symbol<decltype(&PMI2_Finalize)>(api_->library, "PMI2_Finalize");
  api_->put = dl_symbol<decltype(&PMI2_KVS_Put)>(api_->library, "PMI2_KVS_Put");
  api_->fence = dl_symbol<decltype(&PMI2_KVS_Fence)>(api_->library, "PMI2_KVS_Fence");
  api_->get = dl_symbol<decltype(&PMI2_KVS_Get)>(api_->library, "PMI2_KVS_Get");
  int spawned = 0, appnum = 0;
  int status = PMI2_FAIL;
  if (api_->init && api_->finalize && api_->put && api_->fence && api_->get) {
    status = api_->init(&spawned, &size_, &rank_, &appnum);
  }
  if (status != PMI2_SUCCESS) {
    dlclose(api_->library);
    throw UsageError("PMI_FD is set but PMI2_Init failed (error " + std::to_string(status) +
                     "): is this a task of `srun --mpi=pmi2`, and is libpmi2.so.0 Slurm's?");
  }
}

Pmi2Client::~Pmi2Client() {
  api_->finalize();
  dlclose(api_->library);
}

void Pmi2Client::put(const std::string& key, std::span<const char> value) {
  const std::string base = pmi_key(key);
  const std::string hex = hex_encode(value);
  const size_t piece_chars = 2 * kPieceBytes;
  const size_t pieces = (hex.size() + piece_chars - 1) / piece_chars;
  const auto put_one = [&](const std::string& k, const std::string& v) {
    const int status = api_->put(k.c_str(), v.c_str());
    if (status != PMI2_SUCCESS) {
      throw CommError("rank " + std::to_string(rank_) + ": PMI2_KVS_Put of '" + key + "' failed (error " +
                      std::to_string(status) + ")");
    }
  };
  put_one(base, std::to_string(pieces));  // how many pieces follow
  for (size_t i = 0; i < pieces; ++i) put_one(base + "." + std::to_string(i), hex.substr(i * piece_chars, piece_chars));
}

void Pmi2Client::fence() {
  const int status = api_->fence();
  if (status != PMI2_SUCCESS) {
    throw CommError("rank " + std::to_string(rank_) + ": PMI2_KVS_Fence failed (error " + std::to_string(status) + ")");
  }
}

std::vector<char> Pmi2Client::get(const std::string& key) {
  const std::string base = pmi_key(key);
  std::vector<char> buffer(PMI2_MAX_VALLEN + 1, '\0');
  const auto get_one = [&](const std::string& k) {
    int length = 0;
    const int status = api_->get(nullptr, PMI2_ID_NULL, k.c_str(), buffer.data(), PMI2_MAX_VALLEN, &length);
    if (status != PMI2_SUCCESS) {
      throw CommError("rank " + std::to_string(rank_) + ": PMI2_KVS_Get of '" + key + "' failed (error " +
                      std::to_string(status) + "): did every task put it before the fence?");
    }
    return std::string(buffer.data(), strnlen(buffer.data(), PMI2_MAX_VALLEN));
  };
  const std::string count = get_one(base);
  char* end = nullptr;
  const unsigned long pieces = std::strtoul(count.c_str(), &end, 10);
  std::vector<char> out;
  for (unsigned long i = 0; i < pieces; ++i) {
    const std::string hex = get_one(base + "." + std::to_string(i));
    for (size_t j = 0; j + 1 < hex.size(); j += 2) {
      const int hi = hex_digit(hex[j]), lo = hex_digit(hex[j + 1]);
      if (hi < 0 || lo < 0) throw CommError("PMI-2 value of '" + key + "' is not hex");
      out.push_back(static_cast<char>(hi * 16 + lo));
    }
  }
  return out;
}

}  // namespace layerplan
