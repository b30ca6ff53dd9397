/* launch.h: sf-launch's backends, the ways an executor is started on its host, behind one small
 * interface; and the helpers the core (main.c) lends them.
 *
 * A backend starts one sf-exec for one host of the graph and hands back a process of this machine
 * (a child of sf-launch) that stands for that executor: its exit status is the executor's (0, 1,
 * 2, or 128 + N after signal N), a signal sent to it (SIGINT aborts, SIGTERM drains, SIGKILL)
 * reaches the executor, and everything the executor prints (stdout and stderr, merged) comes out of
 * one pipe, which the core reads, prefixes with "[HOST] " and copies to its standard output.  The
 * core does everything else: options, the job token and TLS material, the event loop, failures,
 * restarts.  The backends:
 *
 *   local   a process here (fork and exec), in --workdir; the secrets in its environment
 *           (backend_local.c)
 *   ssh     CMD ADDRESS 'shell command' (--ssh CMD, default ssh); the secrets on its standard
 *           input, read by the remote shell into the environment (backend_ssh.c)
 *   slurm   a task of a Slurm job step (backend_slurm.c)
 *
 * The secrets (the token, the job's CA certificate, the host's certificate and key) never appear
 * on a command line.  Without --via, a host whose address is on this machine is started by
 * `local`, any other by `ssh`; --via NAME starts every host with that backend.
 *
 * Adding a backend: a file backend_NAME.c defining `const LaunchBackend launch_NAME`, declared
 * below and listed in main.c's table.  Everything here is single-threaded: sf-launch has one
 * thread, and calls a backend only from it. */
#ifndef SF_LAUNCH_H
#define SF_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

/* One host of the graph, in the graph's order (sf-exec --list-hosts). */
typedef struct LaunchHost {
  char *name;
  char *address; /* HOST:PORT; a backend's prepare may replace it (malloc'd; the core frees it) */
} LaunchHost;

/* The launch, as every backend sees it: set up by the core before prepare, read-only after it
 * (except what prepare is allowed to change, below). */
typedef struct LaunchJob {
  const char *exec_path; /* sf-exec, an absolute path (the same on every machine) */
  const char *graph;     /* the graph, an absolute path */
  const char *workdir;   /* where executors run, an absolute path */
  const char *ssh_cmd;   /* --ssh CMD (default "ssh"), split into words as a shell would */
  bool plaintext;        /* --insecure-plaintext: no TLS material */
  int nhosts;
  LaunchHost *hosts;
  /* prepare sets it after changing addresses: every executor is then told every address
   * (--hosts NAME=HOST:PORT,... for all hosts) */
  bool hosts_changed;
} LaunchJob;

/* What an executor is handed besides its arguments (NUL-terminated texts). */
typedef struct LaunchSecrets {
  const char *token; /* SF_TOKEN */
  const char *ca;    /* SF_TLS_CA, SF_TLS_CERT, SF_TLS_KEY: PEM, NULL with --insecure-plaintext */
  const char *cert;
  const char *key;
} LaunchSecrets;

/* One executor to start. */
typedef struct LaunchStart {
  int host;                     /* index in job->hosts */
  char *const *args;            /* sf-exec's arguments after its name: --host NAME ... GRAPH,
                                   NULL-terminated */
  const LaunchSecrets *secrets;
} LaunchStart;

/* A started executor, as the core sees it. */
typedef struct LaunchProc {
  pid_t pid; /* a child of sf-launch standing for the executor (above) */
  int out;   /* read end of the pipe carrying its stdout and stderr; the core closes it */
} LaunchProc;

typedef struct LaunchBackend {
  const char *name; /* as --via says it */
  /* Once per launch, before the first start (NULL: nothing to do).  May check that the backend
   * can run at all, and replace host addresses (setting job->hosts_changed).  0, or -1 after a
   * message "sf-launch: error: ..." on stderr (sf-launch then exits 1). */
  int (*prepare)(LaunchJob *job);
  /* Starts one executor; 0 with *p set, or -1 after a message on stderr (the core then treats
   * the host as failed at once, status 127, the message's first line its reason).  Called again
   * for every restart. */
  int (*start)(const LaunchJob *job, const LaunchStart *s, LaunchProc *p);
} LaunchBackend;

extern const LaunchBackend launch_local, launch_ssh, launch_slurm;

/* ---- helpers the core lends the backends (spawn.c) ---- */

/* Forks and execs ARGV[0] (searched in PATH when it has no '/') with ARGV, in directory CWD
 * (NULL: sf-launch's), with ENV added to sf-launch's environment ("NAME=VALUE" strings,
 * NULL-terminated; may be NULL), and INPUT (may be NULL: /dev/null) written to its standard
 * input, then closed.  Its stdout and stderr go to one pipe (p->out).  In the child every signal
 * is unblocked and SIGINT, SIGTERM and SIGPIPE are at their defaults (the executor catches
 * them).  0 with *p set, or -1 after "sf-launch: error: cannot run 'ARGV0': ..." on stderr (also
 * when the exec itself failed: the child reports it before it exits 127). */
int launch_spawn(char *const *argv, char *const *env, const char *cwd, const char *input, LaunchProc *p);

/* The text a remote shell reads the secrets from (launch_remote_command's): the token's line,
 * then (with TLS) the CA certificate, the host's certificate and key, each PEM ending with its
 * -----END line.  malloc'd. */
char *launch_secrets_text(const LaunchSecrets *s);

/* A POSIX shell command that reads launch_secrets_text from its standard input into the
 * environment, goes to job->workdir and execs sf-exec with S's arguments (each quoted).
 * malloc'd. */
char *launch_remote_command(const LaunchJob *job, const LaunchStart *s);

/* WORD quoted for a POSIX shell ('...'), appended to the malloc'd string *BUF (or a new one). */
void launch_shell_quote(char **buf, const char *word);

/* job->ssh_cmd split into words (NULL-terminated, malloc'd; the words too), with N more slots
 * left NULL at the end for the caller to fill. */
char **launch_ssh_words(const LaunchJob *job, int n, int *count);

/* The host part of HOST:PORT (malloc'd): "10.0.0.1", "[::1]", "node7". */
char *launch_address_host(const char *address);

#endif
