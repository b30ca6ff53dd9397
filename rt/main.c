/* main.c: sf-exec, the executor. Loads a graph (original or rewritten by sf-xform), checks it and
 * runs it: the whole graph in one process, or with --host NAME only that host's operators, talking
 * to the other hosts' executors. Exit status: 0 when everything completed, 1 when the graph is bad
 * or the job failed, 2 for bad usage, 128 + N when signal N stopped it (130: SIGINT) or crashed it
 * (fatal.c: 139, 134, after a line naming the operator); SIGTERM drains
 * the job (its sources stop taking input, the rest completes) and the status is then the job's. */
#include "args.h"
#include "metrics_http.h"
#include "rt.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: sf-exec [options] GRAPH.xml\n"
    "\n"
    "Runs a StreamFission graph: all of it in this process, or with --host only the operators\n"
    "placed on that host, exchanging tuples with the other hosts' executors over gRPC.\n"
    "\n"
    "options:\n"
    "      --host NAME           run only the operators placed on host NAME\n"
    "      --list-hosts          print the graph's hosts (name address, one per line) and exit\n"
    "      --hosts SPEC          NAME=HOST:PORT[,NAME=HOST:PORT...]: these hosts of the graph are at\n"
    "                            these addresses instead (a host replaced at a restart)\n"
    "      --token-file FILE     the job token (default: $SF_TOKEN); tools/sf-launch sets it\n"
    "      --insecure-plaintext  no TLS between hosts: the token and the tuples travel in clear\n"
    "                            (loopback addresses only, for development); otherwise $SF_TLS_CA,\n"
    "                            $SF_TLS_CERT and $SF_TLS_KEY hold the job's CA certificate, this\n"
    "                            host's certificate and its key, in PEM (tools/sf-launch sets them;\n"
    "                            tools/sf-certs makes them)\n"
    "      --listen HOST:PORT    with --host: listen there instead of at the host's own address,\n"
    "                            which the others still connect to (in a container: 0.0.0.0:PORT\n"
    "                            while the others reach it by a service's name)\n"
    "      --connect-timeout MS  give up on a peer that does not answer within MS ms (10000)\n"
    "      --batch N             tuples per batch between threads and between hosts (default:\n"
    "                            256 between threads, 1024 per message between hosts)\n"
    "      --queue N             batches a queue holds before its producer waits (8)\n"
    "      --merge-threads       give every Merge a thread of its own (by default a region's\n"
    "                            Merge, and what is fused after it, runs on its channels' threads\n"
    "                            when it hands nothing to another thread or host)\n"
    "      --stats               print per-operator counts and rates to stderr while running\n"
    "      --stats-interval S    seconds between stats lines (2)\n"
    "      --stats-json FILE     write the final per-operator counts and CPU times as JSON\n"
    "      --metrics HOST:PORT   serve Prometheus metrics at http://HOST:PORT/metrics while the\n"
    "                            job runs, and a live view of the graph at http://HOST:PORT/\n"
    "                            (127.0.0.1:PORT: this machine only; [::1]:PORT for IPv6)\n"
    "      --accept-unterminated read a CSV input's last row even without its line end (otherwise\n"
    "                            an error: a file cut short ends inside its last row)\n"
    "      --checkpoint-dir DIR  take consistent checkpoints into DIR (made if missing); a job\n"
    "                            restarted with --restore continues from the latest complete one.\n"
    "                            DIR is one job's: locked while it runs (DIR/LOCK; another job is\n"
    "                            refused), and another graph's checkpoints there are refused\n"
    "      --checkpoint-interval S  seconds between checkpoints (1; decimals allowed)\n"
    "      --restore             continue from the latest complete checkpoint in --checkpoint-dir\n"
    "                            (none yet: start from the beginning); the output is then the\n"
    "                            uninterrupted run's, byte for byte; refused when an operator\n"
    "                            changed since the checkpoint was taken\n"
    "      --remove-checkpoints  remove GRAPH's checkpoints and lock in --checkpoint-dir and exit\n"
    "                            (tools/sf-launch does this once a job completed): only what sf-exec\n"
    "                            wrote there; nothing while a job holds DIR/LOCK, or when DIR holds\n"
    "                            something else under sf's names (ckpt-N, REQUEST) or another\n"
    "                            graph's checkpoints\n"
    "      --max-state-memory BYTES  the keyed state of Functor, Aggregate and Dedup operators (their\n"
    "                            tables of keys) may take at most BYTES on this executor (K, M, G:\n"
    "                            times 2^10, 2^20, 2^30); a key beyond it fails the job: out of memory\n"
    "      --stop-grace S        once the job stopped (a failure, Ctrl-C), its operators get S\n"
    "                            seconds (5; decimals allowed) to return; then the process ends\n"
    "                            without them, naming them, its temporary files removed (a stop\n"
    "                            signal after those S seconds does the same)\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the version\n"
    "\n"
    "exit status: 0 the graph completed, 1 bad graph or failed job, 2 bad usage,\n"
    "128+N stopped by signal N (130 SIGINT, 129 SIGHUP) or crashed by it (139 SIGSEGV, 134\n"
    "SIGABRT: named, its temporary files removed); an operator calling exit() fails the job (1);\n"
    "SIGTERM drains the job: its sources stop taking input, what they read reaches the sinks,\n"
    "and the job completes (0)\n";

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  args_usage_error("sf-exec", fmt, arg);
}

/* an option's integer (args.c): exit 2 when refused */
static long int_arg(const char *text, long min, long max, const char *what) {
  long v;
  if (!args_int("sf-exec", what, text, min, max, &v)) exit(2);
  return v;
}

/* The token: first line of FILE, or $SF_TOKEN. Never taken from the command line. */
static char *read_token(const char *file) {
  if (!file) {
    const char *env = getenv("SF_TOKEN");
    return env ? strdup(env) : NULL;
  }
  FILE *f = fopen(file, "r");
  if (!f) {
    fprintf(stderr, "sf-exec: error: cannot open token file '%s': %s\n", file, strerror(errno));
    exit(1);
  }
  char line[512] = "";
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  line[strcspn(line, "\r\n")] = 0;
  return strdup(line);
}

/* --hosts: NAME=ADDRESS pairs, comma-separated, each naming a host of the graph, whose address
 * they replace. 0, or -1 after a message. */
static int override_hosts(Graph *g, const char *spec) {
  char *copy = strdup(spec), *save = NULL;
  int rc = 0;
  for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq || eq == item || !eq[1] || !strchr(eq + 1, ':')) {
      fprintf(stderr, "sf-exec: --hosts takes NAME=HOST:PORT[,NAME=HOST:PORT...], got '%s'\n", item);
      rc = -1;
      break;
    }
    *eq = 0;
    Host *h = graph_find_host(g, item);
    if (!h) {
      fprintf(stderr, "sf-exec: --hosts names host '%s', which the graph does not declare\n", item);
      rc = -1;
      break;
    }
    h->address = arena_strdup(g->arena, eq + 1);
  }
  free(copy);
  return rc;
}

int main(int argc, char **argv) {
  static const struct option longs[] = {
    {"host", required_argument, 0, 'H'},       {"token-file", required_argument, 0, 'T'},
    {"connect-timeout", required_argument, 0, 'C'}, {"batch", required_argument, 0, 'b'},
    {"queue", required_argument, 0, 'q'},      {"stats", no_argument, 0, 's'},
    {"stats-interval", required_argument, 0, 'i'}, {"stats-json", required_argument, 0, 'j'},
    {"help", no_argument, 0, 'h'},             {"version", no_argument, 0, 'V'},
    {"list-hosts", no_argument, 0, 'L'},      {"insecure-plaintext", no_argument, 0, 'P'},
    {"accept-unterminated", no_argument, 0, 'U'}, {"checkpoint-dir", required_argument, 0, 'K'},
    {"checkpoint-interval", required_argument, 0, 'I'}, {"restore", no_argument, 0, 'R'},
    {"hosts", required_argument, 0, 'A'},      {"remove-checkpoints", no_argument, 0, 'X'},
    {"stop-grace", required_argument, 0, 'G'},
    {"max-state-memory", required_argument, 0, 'M'}, {"merge-threads", no_argument, 0, 'W'},
    {"listen", required_argument, 0, 'l'},     {"metrics", required_argument, 0, 'm'},
    {0, 0, 0, 0},
  };
  ExecOptions o = {0};
  const char *token_file = NULL, *hosts_spec = NULL;
  bool list_hosts = false, remove_checkpoints = false;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":hV", longs, NULL)) != -1) {
    switch (c) {
    case 'H': o.host = optarg; break;
    case 'T': token_file = optarg; break;
    case 'C': o.connect_timeout_ms = (int)int_arg(optarg, 1, 3600000, "--connect-timeout"); break;
    case 'b': o.batch = (int)int_arg(optarg, 1, 65536, "--batch"); break;
    case 'q': o.queue_batches = (int)int_arg(optarg, 1, 4096, "--queue"); break;
    case 'W': o.merge_threads = true; break;
    case 's': o.stats = true; break;
    case 'i': {
      char *end;
      o.stats_interval = strtod(optarg, &end);
      if (*end || !(o.stats_interval > 0)) usage_error("--stats-interval must be a positive number, got '%s'", optarg);
      o.stats = true;
      break;
    }
    case 'j': o.stats_json = optarg; break;
    case 'L': list_hosts = true; break;
    case 'P': o.plaintext = true; break;
    case 'U': o.accept_unterminated = true; break;
    case 'K': o.checkpoint_dir = optarg; break;
    case 'I':
      if (!args_seconds("sf-exec", "--checkpoint-interval", optarg, &o.checkpoint_interval)) args_try_help("sf-exec");
      break;
    case 'R': o.restore = true; break;
    case 'M':
      if (!args_bytes("sf-exec", "--max-state-memory", optarg, &o.max_state_memory)) exit(2);
      break;
    case 'G':
      if (!args_seconds("sf-exec", "--stop-grace", optarg, &o.stop_grace)) args_try_help("sf-exec");
      break;
    case 'A': hosts_spec = optarg; break;
    case 'l': {
      const char *colon = strrchr(optarg, ':');
      char *end;
      long port = colon ? strtol(colon + 1, &end, 10) : -1;
      if (!colon || colon == optarg || !colon[1] || *end || port < 1 || port > 65535)
        usage_error("--listen must be HOST:PORT (a port from 1 to 65535), got '%s'", optarg);
      o.listen = optarg;
      break;
    }
    case 'm': {
      char host[256];
      int port;
      if (!metrics_http_parse(optarg, host, sizeof host, &port))
        usage_error("--metrics must be HOST:PORT ([ADDRESS]:PORT for IPv6; a port from 1 to 65535), got '%s'", optarg);
      o.metrics = optarg;
      break;
    }
    case 'X': remove_checkpoints = true; break;
    case 'h': fputs(usage_text, stdout); return 0;
    case 'V': printf("sf-exec %s\n", SF_VERSION); return 0;
    case ':': usage_error("option '%s' needs an argument", argv[optind - 1]);
    default: usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind == argc) usage_error("%s", "no graph file given");
  if (optind + 1 < argc) usage_error("more than one graph file given ('%s')", argv[optind + 1]);
  o.graph_path = argv[optind];
  if ((o.restore || o.checkpoint_interval > 0) && !o.checkpoint_dir)
    usage_error("%s", o.restore ? "--restore needs --checkpoint-dir" : "--checkpoint-interval needs --checkpoint-dir");
  if (remove_checkpoints && !o.checkpoint_dir) usage_error("%s", "--remove-checkpoints needs --checkpoint-dir");
  if (o.listen && !o.host) usage_error("%s", "--listen needs --host");

  Diag d;
  diag_init(&d, o.graph_path, stderr);
  Graph *g = graph_parse_file(o.graph_path, sf_schema_path(), &d);
  diag_flush(&d, DIAG_AS_REPORTED);
  if (!g) return 1;
  int bad = graph_check(g, &d);
  diag_flush(&d, DIAG_BY_PLACE);
  if (bad != 0) {
    graph_free(g);
    return 1;
  }
  if (hosts_spec && override_hosts(g, hosts_spec) < 0) {
    graph_free(g);
    return 2;
  }
  if (list_hosts) {
    for (int i = 0; i < g->nhosts; i++) printf("%s %s\n", g->hosts[i]->name, g->hosts[i]->address);
    graph_free(g);
    return 0;
  }
  if (remove_checkpoints) {
    int rc = ckpt_remove_job(g, &o);
    graph_free(g);
    return rc;
  }
  char *token = read_token(token_file);
  o.token = token;
  /* the TLS material comes from the environment, like the token; the key leaves it at once, so
   * that nothing this process starts (a Custom operator's child) inherits it */
  char *tls_ca = getenv("SF_TLS_CA") ? strdup(getenv("SF_TLS_CA")) : NULL;
  char *tls_cert = getenv("SF_TLS_CERT") ? strdup(getenv("SF_TLS_CERT")) : NULL;
  char *tls_key = getenv("SF_TLS_KEY") ? strdup(getenv("SF_TLS_KEY")) : NULL;
  unsetenv("SF_TLS_KEY");
  o.tls_ca = tls_ca;
  o.tls_cert = tls_cert;
  o.tls_key = tls_key;
  int rc = exec_run(g, &o);
  free(token);
  free(tls_ca);
  free(tls_cert);
  if (tls_key) memset(tls_key, 0, strlen(tls_key));
  free(tls_key);
  graph_free(g);
  return rc;
}
