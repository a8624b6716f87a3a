#include "cli/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <array>

#include "common/async_safe_write.h"

namespace layerplan {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)

void install_crash_report() {}  // the sanitizer's own report is better

#else

namespace {

constexpr std::array kFatalSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Only async-signal-safe calls below: write_async_safe, backtrace after its first call (which
// loads libgcc_s, done at installation), backtrace_symbols_fd and raise.

// Decimal digits of `value` into `out` (at least 21 bytes), without the heap.
const char* decimal(unsigned long value, char* out) {
  char digits[20];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  int at = 0;
  while (count > 0) out[at++] = digits[--count];
  out[at] = '\0';
  return out;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (aborted; glibc's message, if any, is above)";
    default:
      return "a fatal signal";
  }
}

void report_and_die(int sig) {
  char number[24];
  write_async_safe(STDERR_FILENO, "layerplan: process ");
  write_async_safe(STDERR_FILENO, decimal(static_cast<unsigned long>(::getpid()), number));
  write_async_safe(STDERR_FILENO, " got ");
  write_async_safe(STDERR_FILENO, signal_name(sig));
  write_async_safe(STDERR_FILENO,
                   "; call stack of the thread that got it (addr2line -f -C -e BINARY OFFSET names the frames):\n");
  std::array<void*, 64> frames{};
  const int depth = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  ::backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
  // SA_RESETHAND restored the default action; the signal, blocked while this handler
  // runs, ends the process as it would have once the handler returns.
  ::raise(sig);
}

}  // namespace

void install_crash_report() {
  // A stack overflow leaves no stack to run the handler on: it gets one of its own.
  static std::array<char, size_t{64} * 1024> alternate_stack;
  stack_t stack{};
  stack.ss_sp = alternate_stack.data();
  stack.ss_size = alternate_stack.size();
  ::sigaltstack(&stack, nullptr);
  std::array<void*, 1> warm_up{};
  ::backtrace(warm_up.data(), 1);  // its first call loads libgcc_s: not in a signal handler
  struct sigaction action {};
  action.sa_handler = report_and_die;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_ONSTACK;
  for (const int sig : kFatalSignals) ::sigaction(sig, &action, nullptr);
}

#endif

}  // namespace layerplan
