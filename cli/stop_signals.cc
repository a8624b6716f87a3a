#include "cli/stop_signals.h"

#include <cstring>
#include <initializer_list>

namespace layerplan {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void remember_signal(int sig) { g_stop_signal = sig; }

}  // namespace

const volatile std::sig_atomic_t* install_stop_signal_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // Gloo's and the loaders' system calls go on
  for (const int sig : {SIGTERM, SIGUSR1}) sigaction(sig, &action, nullptr);
  return &g_stop_signal;
}

}  // namespace layerplan
