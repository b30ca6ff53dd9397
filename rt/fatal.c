/* fatal.c: how the process ends when its job cannot end the usual way (see exec_priv.h).
 *
 * Three ways an operator's code can keep the job from ending the usual way, each of which used to
 * end sf-exec without a word of its own (exit() with status 0), or not at all, and leave the
 * sinks' temporary files behind:
 *   - a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS): the handler writes
 *     one line naming the operator the faulting thread was running, removes the temporary files
 *     (tempfiles.c), then restores the default action and raises the signal again, so the process
 *     still ends by that signal (exit status 128 + N: 139, 134) and dumps core as it would have;
 *   - exit() (or quick_exit()) called while the job runs: an on_exit hook writes a line naming the
 *     operator the calling thread was running and the status it gave, removes the temporary files
 *     and ends the process with status 1 (a failed job: never 0 for a job that did not complete);
 *   - an operator that does not return after the job stopped (a failure or a stop signal): the
 *     main thread gives the operators --stop-grace seconds (5) to return (exec_watch), then names
 *     those still running, removes the temporary files and ends the process with the job's status
 *     (128 + N after stop signal N, else 1); a stop signal that comes after that grace does the
 *     same from its handler (signals.c), for when the main thread itself is the one that does not
 *     return (an operator's open or close). SIGTERM drains, with no time limit: a stop signal
 *     after it starts the grace.
 * Checkpoints are left as they are: what a failure keeps stays for a restore. A child an operator
 * forks inherits the hooks and handlers: in it they do nothing (the executor's pid is kept).
 *
 * Which operator a thread runs is a RunSlot per thread (a group's, the main thread's), set by
 * fatal_enter around every call into an operator: a relaxed store of a pointer to the operator's
 * preformatted label (Node.label), so that a handler on any thread can write it without
 * formatting anything. Everything the handlers write is assembled with the async-signal-safe
 * helpers below into a buffer on the stack and written with one write(2).
 *
 * A build with AddressSanitizer or ThreadSanitizer leaves the fatal signals to the sanitizer, whose
 * report says more than one line could.
 *
 * Dispositions and the exit hook belong to the process: one job at a time, like signals.c. */
#include "exec_priv.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
enum { NFATAL = sizeof fatal_signals / sizeof fatal_signals[0], ALT_STACK_SIZE = 64 * 1024 };

_Thread_local RunSlot *fatal_slot;
static RunSlot main_slot;                /* the main thread's */
static atomic_bool running;              /* a job runs: exit() now is a failure */
static atomic_int job_pid;               /* the executor's process: a child that an operator forked
                                            inherits the hooks, and must neither speak for the job
                                            nor remove its files */
static Exec *_Atomic job;                /* its groups, once their threads started (for their slots) */
static atomic_llong grace_ns;            /* --stop-grace */
static char grace_text[32];              /* "5 s" */
static char sig_names[NSIG][24];         /* "SIGINT", ... (signals_name, made before any handler runs) */
static struct sigaction saved[NFATAL];   /* the dispositions fatal_job_start replaced */
static bool replaced;
static char main_alt_stack[ALT_STACK_SIZE]; /* the main thread's alternate signal stack */
static stack_t main_alt_saved;              /* the one it replaced */

/* ---- async-signal-safe output ---- */

typedef struct Line {
  char b[1024];
  size_t n;
} Line;

static void put(Line *l, const char *s) {
  while (s && *s && l->n < sizeof l->b - 1) l->b[l->n++] = *s++;
}

static void put_int(Line *l, long v) {
  char d[24];
  int k = 0;
  unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
  do d[k++] = (char)('0' + u % 10); while ((u /= 10) && k < (int)sizeof d);
  if (v < 0) put(l, "-");
  while (k > 0 && l->n < sizeof l->b - 1) l->b[l->n++] = d[--k];
}

/* Writes the line with its line end, in one write(2). */
static void put_end(Line *l) {
  l->b[l->n++] = '\n';
  for (size_t off = 0; off < l->n;) {
    ssize_t w = write(STDERR_FILENO, l->b + off, l->n - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  l->n = 0;
}

static const char *label_of(const RunSlot *s) {
  return s ? atomic_load_explicit(&s->label, memory_order_relaxed) : NULL;
}

/* The job runs, in this process (not a child an operator forked). Async-signal-safe. */
static bool ours(void) {
  return atomic_load(&running) && getpid() == atomic_load(&job_pid);
}

/* ---- a fatal signal ---- */

static void on_fatal(int sig) {
  static atomic_flag reported = ATOMIC_FLAG_INIT;
  if (ours() && !atomic_flag_test_and_set(&reported)) { /* a second thread faulting meanwhile only dies */
    Line l = { .n = 0 };
    const char *label = label_of(fatal_slot);
    put(&l, "sf-exec: error: ");
    if (label) {
      put(&l, label);
      put(&l, ": ");
    }
    put(&l, "crashed with ");
    put(&l, sig_names[sig]);
    put_end(&l);
    tempfiles_unlink_all();
  }
  /* the default action, on the return from here (the signal is blocked until then): a fault's
   * instruction faults again, abort() raises again, and the process ends by this signal */
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig);
}

/* ---- exit() while the job runs ---- */

static void exited(const char *how, int status) {
  if (!ours()) return;
  Line l = { .n = 0 };
  const char *label = label_of(fatal_slot);
  put(&l, "sf-exec: error: ");
  if (label) {
    put(&l, label);
    put(&l, ": called ");
  }
  put(&l, how);
  if (status >= 0) {
    put(&l, "(");
    put_int(&l, status);
    put(&l, ")");
  } else {
    put(&l, "()");
  }
  put(&l, label ? " before the job completed" : " was called before the job completed");
  put_end(&l);
  tempfiles_unlink_all();
  _exit(1);
}

static void on_process_exit(int status, void *arg) {
  (void)arg;
  exited("exit", status);
}

static void on_quick_exit(void) {
  exited("quick_exit", -1);
}

/* ---- an operator that does not return ---- */

/* The lines naming the operators still running, the first after `first` (the job's failure):
 * "sf-exec: error: FIRST; operator 'x' did not return within 5 s: stopped". Async-signal-safe. */
static void write_stuck(const char *first) {
  Exec *x = atomic_load(&job);
  int ngroups = x ? x->groups.n : 0, named = 0;
  for (int i = -1; i < ngroups; i++) { /* the main thread's slot, then each group's */
    const char *label = label_of(i < 0 ? &main_slot : &((Group *)x->groups.items[i])->run);
    if (!label) continue;
    Line l = { .n = 0 };
    put(&l, "sf-exec: error: ");
    if (named++ == 0) {
      put(&l, first);
      put(&l, "; ");
      put(&l, label);
      put(&l, " did not return within ");
      put(&l, grace_text);
      put(&l, ": stopped");
    } else {
      put(&l, label);
      put(&l, " did not return either");
    }
    put_end(&l);
  }
  if (named == 0) { /* no operator: something else of the job (its transport) did not end */
    Line l = { .n = 0 };
    put(&l, "sf-exec: error: ");
    put(&l, first);
    put(&l, "; the job did not stop within ");
    put(&l, grace_text);
    put(&l, ": stopped");
    put_end(&l);
  }
}

_Noreturn void fatal_stuck(Exec *x) {
  char first[sizeof x->message];
  pthread_mutex_lock(&x->fail_mu);
  memcpy(first, x->message, sizeof first);
  int sig = x->stop_signal;
  pthread_mutex_unlock(&x->fail_mu);
  write_stuck(first); /* not through x->log: a thread that does not return may hold its lock */
  tempfiles_unlink_all();
  _exit(sig > 0 ? 128 + sig : 1);
}

void fatal_signal_again(int first, int64_t first_ns) {
  if (!ours() || first <= 0 || first >= NSIG) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  if (now - first_ns < atomic_load(&grace_ns)) return; /* the job is still stopping: let it */
  char first_text[64] = "interrupted by ";
  size_t k = strlen(first_text);
  for (const char *p = sig_names[first]; *p && k < sizeof first_text - 1; p++) first_text[k++] = *p;
  first_text[k] = 0;
  write_stuck(first_text);
  tempfiles_unlink_all();
  _exit(128 + first);
}

/* ---- the job ---- */

void fatal_job_start(Exec *x) {
  static bool hooked;
  double grace = x->o->stop_grace > 0 ? x->o->stop_grace : DEFAULT_STOP_GRACE;
  atomic_store(&grace_ns, (long long)(grace * 1e9));
  snprintf(grace_text, sizeof grace_text, "%g s", grace);
  for (int sig = 1; sig < NSIG; sig++) signals_name(sig, sig_names[sig], sizeof sig_names[sig]);
  if (!hooked) { /* exit hooks cannot be removed: registered once, they look at `running` */
    on_exit(on_process_exit, NULL);
    at_quick_exit(on_quick_exit);
    hooked = true;
  }
  fatal_slot = &main_slot;
  atomic_store_explicit(&main_slot.label, NULL, memory_order_relaxed);
  atomic_store(&job_pid, (int)getpid());
  if (SANITIZED) { /* the sanitizer's handlers and alternate stacks stay */
    atomic_store(&running, true);
    return;
  }
  stack_t alt = { .ss_sp = main_alt_stack, .ss_size = sizeof main_alt_stack };
  if (sigaltstack(&alt, &main_alt_saved) < 0) /* a stack overflow's SIGSEGV needs a stack for its handler */
    main_alt_saved = (stack_t){ .ss_flags = SS_DISABLE };
  struct sigaction sa = { .sa_handler = on_fatal, .sa_flags = SA_ONSTACK };
  sigfillset(&sa.sa_mask);
  for (int i = 0; i < NFATAL; i++) sigaction(fatal_signals[i], &sa, &saved[i]);
  replaced = true;
  atomic_store(&running, true);
}

void fatal_groups_started(Exec *x) {
  atomic_store(&job, x);
}

void fatal_job_end(void) {
  atomic_store(&running, false);
  atomic_store(&job, NULL);
  if (replaced) {
    for (int i = 0; i < NFATAL; i++) sigaction(fatal_signals[i], &saved[i], NULL);
    sigaltstack(&main_alt_saved, NULL);
  }
  replaced = false;
  fatal_slot = NULL;
}

void *fatal_thread_start(RunSlot *slot) {
  fatal_slot = slot;
  if (SANITIZED) return NULL;
  void *mem = malloc(ALT_STACK_SIZE);
  if (mem) {
    stack_t alt = { .ss_sp = mem, .ss_size = ALT_STACK_SIZE };
    if (sigaltstack(&alt, NULL) < 0) {
      free(mem);
      mem = NULL;
    }
  }
  return mem;
}

void fatal_thread_end(void *alt) {
  if (alt) {
    stack_t off = { .ss_flags = SS_DISABLE };
    sigaltstack(&off, NULL);
    free(alt);
  }
  fatal_slot = NULL;
}
