/* tgkill.c: sf-tgkill SIGNAL PID TID sends signal number SIGNAL to the thread TID of process PID
 * (tgkill(2)). kill(1) cannot: it signals the process, and the kernel then usually hands the signal
 * to the main thread. tests/stop.sh signals each thread of an executor this way.
 * Exit status: 0 sent, 1 not sent (the thread is gone, say; the reason is printed), 2 bad usage. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long number(const char *text) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  return errno || end == text || *end || v <= 0 ? -1 : v;
}

int main(int argc, char **argv) {
  long sig = argc == 4 ? number(argv[1]) : -1, pid = argc == 4 ? number(argv[2]) : -1,
       tid = argc == 4 ? number(argv[3]) : -1;
  if (sig < 0 || pid < 0 || tid < 0) {
    fprintf(stderr, "usage: sf-tgkill SIGNAL PID TID (numbers)\n");
    return 2;
  }
  if (syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, (int)sig) < 0) {
    fprintf(stderr, "sf-tgkill: cannot signal thread %ld of process %ld: %s\n", tid, pid, strerror(errno));
    return 1;
  }
  return 0;
}
