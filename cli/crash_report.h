#pragma once
// What `layerplan` prints when it dies of a fatal signal (a segmentation fault, an abort from
// glibc's heap checks, ...): the signal, the process and the main thread's call stack, on
// standard error, before the process ends of that signal as it would have (same exit
// status, a core dump where the limits allow one). A rank that dies under `srun` or
// `layerplan launch` then leaves more than "Aborted" in the job's output.
//
// The stack is glibc's backtrace(): frames as "binary(+offset)", which
// `addr2line -f -C -e build/layerplan OFFSET` turns into functions and lines. Only the
// thread that took the signal is shown; a stack overflow is reported only on the main
// thread, the one with an alternate signal stack. Not installed in sanitizer builds, whose
// own reports are better.

namespace layerplan {

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT. Call once, early,
// from the main thread.
void install_crash_report();

}  // namespace layerplan
