#include "cli/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace layerplan {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)

void install_crash_report() {}  // the sanitizer's own report is better

#else

namespace {

constexpr std::array kFatalSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Only async-signal-safe calls below: write(2), backtrace after its first call (which
// loads libgcc_s, done at installation), backtrace_symbols_fd and raise.
void write_text(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// Decimal digits of `value` into `out` (at least 21 bytes), without the heap.
const char* decimal(long value, char* out) {
  char digits[20];
  int count = 0;
  const bool negative = value < 0;
  unsigned long v = negative ? 0UL - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
  do {
    digits[count++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  int at = 0;
  if (negative) out[at++] = '-';
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
  write_text("layerplan: process ");
  write_text(decimal(static_cast<long>(::getpid()), number));
  write_text(" got ");
  write_text(signal_name(sig));
  write_text("; call stack of the thread that got it (addr2line -f -C -e BINARY OFFSET names the frames):\n");
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
