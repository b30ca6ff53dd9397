/* signals.c: the signals that stop a job (see rt.h).
 *
 * The handler may run on any thread, the main one or a worker, in the middle of anything, holding
 * whatever lock that thread holds: it only stores the signal in an atomic and writes one byte to
 * the executor's stop pipe (both async-signal-safe). Everything else happens in ordinary code:
 * the executor's threads see the stop with one atomic load (exec_stopping() takes no lock), waits on
 * files end through the stop pipe (rt_wait_fd), and the main thread, which holds no lock, records
 * the failure and wakes the queues. The handler is installed with SA_RESTART, so the system calls
 * of code that does not expect EINTR (gRPC's, a Custom operator's) go on; poll and sleeps return
 * early, and every such wait of the runtime looks at the stop before it waits again.
 *
 * The stop signals are those whose default action ends the process and that someone sends to ask
 * for an end: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
 * SIGXCPU, SIGIO, SIGPWR, SIGSTKFLT and the real-time signals (those glibc leaves to programs).
 * One that was ignored when the job started (nohup, a background job of a shell) stays ignored.
 * SIGPIPE and SIGXFSZ are the results of a write, not requests: they are ignored, so the write
 * fails with EPIPE or EFBIG and the operator reports it. The signals of a fault (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) are fatal.c's: a line naming the operator, the
 * temporary files removed, then their default action.
 *
 * A stop signal that comes --stop-grace seconds after the first, while the job still has not
 * stopped, ends the process without it (fatal.c: an operator that does not return); one sooner
 * is only the same request again (sf-launch's Ctrl-C reaches an executor twice).
 *
 * SIGTERM is not a stop but a drain (docs/language.md, "Stopping: drain and abort"): the handler
 * records it apart (signals_draining) and writes nothing to the stop pipe, since every wait would
 * then wake at once for good; sources look at it between reads (at least every 50 ms while they
 * wait) and end their input, and the job completes as if their input had ended. A stop signal
 * during a drain still stops the job.
 *
 * Dispositions belong to the process, so this state is the process's too: one job at a time. */
#include "exec_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int named_signals[] = {
  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPWR
  SIGPWR,
#endif
#ifdef SIGSTKFLT
  SIGSTKFLT,
#endif
};

static atomic_int caught;                 /* the first stop signal since signals_catch (0: none) */
static atomic_llong caught_ns;            /* when it came (CLOCK_MONOTONIC) */
static atomic_bool draining;              /* SIGTERM came since signals_catch */
static atomic_int wake_fd = -1;           /* written to when one comes (-1: none) */
static struct sigaction saved[NSIG];      /* dispositions signals_catch replaced */
static bool replaced[NSIG];               /* which */

static void on_signal(int sig) {
  int saved_errno = errno;
  atomic_store_explicit(&rt_halt_hint, true, memory_order_release); /* before what it hints at */
  if (sig == SIGTERM) {
    atomic_store(&draining, true);
    return;
  }
  int none = 0;
  if (atomic_compare_exchange_strong(&caught, &none, sig)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    atomic_store(&caught_ns, (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
  } else {
    fatal_signal_again(none, atomic_load(&caught_ns)); /* after the grace: the process ends */
  }
  int fd = atomic_load(&wake_fd);
  if (fd >= 0) (void)!write(fd, "", 1); /* non-blocking: a full pipe is readable anyway */
  errno = saved_errno;
}

static void catch_one(int sig) {
  struct sigaction old;
  if (sig <= 0 || sig >= NSIG || sigaction(sig, NULL, &old) < 0) return;
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) return; /* ignored at the start */
  struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
  sigfillset(&sa.sa_mask); /* one handler at a time per thread */
  if (sigaction(sig, &sa, &saved[sig]) == 0) replaced[sig] = true;
}

void signals_catch(int fd) {
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  atomic_store(&caught, 0);
  atomic_store(&draining, false);
  atomic_store(&wake_fd, fd);
  for (size_t i = 0; i < sizeof named_signals / sizeof named_signals[0]; i++) catch_one(named_signals[i]);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) catch_one(sig);
}

int signals_caught(void) {
  return atomic_load(&caught);
}

bool signals_draining(void) {
  return atomic_load(&draining);
}

void signals_release(void) {
  for (int sig = 1; sig < NSIG; sig++)
    if (replaced[sig]) {
      sigaction(sig, &saved[sig], NULL);
      replaced[sig] = false;
    }
  atomic_store(&wake_fd, -1);
}

const char *signals_name(int sig, char *buf, size_t cap) {
  const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;
  if (sig == SIGIO)
    abbrev = "IO"; /* glibc says POLL, its System V name */
  if (abbrev)
    snprintf(buf, cap, "SIG%s", abbrev);
  else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    snprintf(buf, cap, "SIGRTMIN+%d", sig - SIGRTMIN);
  else
    snprintf(buf, cap, "signal %d", sig);
  return buf;
}
