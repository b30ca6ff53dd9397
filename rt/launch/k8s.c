/* k8s.c: a job's Kubernetes manifests, for `kubectl apply -k DIR` (sf-launch --emit kubernetes).
 *
 * sf-launch supervises executors itself; on Kubernetes the cluster does, so what sf-launch would
 * do at run time is written down instead, one object per file:
 *   kustomization.yaml  the list of the files below (kubectl apply -k DIR applies them all)
 *   configmap.yaml      ConfigMap sf-JOB-graph: the graph file, byte for byte (graph.xml)
 *   secret.yaml         Secret sf-JOB-tls: the job token and the TLS material of tools/sf-certs
 *                       (the CA certificate, each host's certificate and key); nothing secret is
 *                       anywhere else
 *   service.yaml        headless Service sf-JOB (clusterIP None, not-ready addresses published, as
 *                       executors connect to each other before any is ready): each pod is then
 *                       LABEL.sf-JOB in the namespace, a stable address across restarts
 *   volume.yaml         PersistentVolumeClaim sf-JOB-data (ReadWriteMany): the checkpoints, shared
 *                       by every executor as a shared file system is between hosts, and the
 *                       working directory where the graph's relative files are
 *   pod-LABEL.yaml      one Pod per host: sf-exec --host NAME, listening at 0.0.0.0:PORT (the
 *                       host's port in the graph) while the others reach it at LABEL.sf-JOB:PORT
 *                       (--hosts), the token from a file of the Secret, its own certificate and
 *                       key (no other host's) in SF_TLS_*, --checkpoint-dir on the volume and
 *                       --restore: a pod the kubelet restarts (restartPolicy OnFailure) continues
 *                       from the latest complete checkpoint, as do the others once their edges to
 *                       it broke, which is what sf-launch --restart does.
 * LABEL is the host's name as a DNS label (k8s_label). Strings are written double-quoted (names,
 * arguments) or as literal blocks (PEM; the graph where that keeps its bytes, else quoted). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "k8s.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#define MOUNT_GRAPH "/etc/streamfission/graph"
#define MOUNT_SECRET "/etc/streamfission/secret"
#define MOUNT_DATA "/var/lib/streamfission"

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

int k8s_label(const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  if (n == 0 || n > 63 || n >= cap) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c >= 'A' && c <= 'Z') c = (unsigned char)(c - 'A' + 'a');
    else if (c == '_' || c == '.') c = '-';
    else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return -1;
    out[i] = (char)c;
  }
  out[n] = 0;
  return out[0] == '-' || out[n - 1] == '-' ? -1 : 0;
}

/* a double-quoted YAML scalar: every byte kept (escapes for '"', '\' and control bytes) */
static void quoted(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\x%02x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void q(FILE *f, const char *s) { quoted(f, s, strlen(s)); }

/* whether text can be a literal block with its bytes unchanged: UTF-8 without control bytes but
 * tab and line end (no CR: YAML reads it as a line break), no space or tab opening a line after an
 * empty one (indentation is fixed by the indicator anyway), no trailing spaces that matter */
static bool block_safe(const char *s, size_t n) {
  if (n == 0 || s[0] == ' ' || s[0] == '\t') return false;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
      i++;
      continue;
    }
    int len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (c >= 0xf5 || len == 0 || i + (size_t)len > n) return false;
    for (int k = 1; k < len; k++)
      if (((unsigned char)s[i + (size_t)k] & 0xc0) != 0x80) return false;
    if (c == 0xef && (unsigned char)s[i + 1] == 0xbb && (unsigned char)s[i + 2] == 0xbf) return false; /* BOM */
    i += (size_t)len;
  }
  return true;
}

/* "KEY: VALUE" at indent 2 (a ConfigMap's data, a Secret's stringData): a literal block with an
 * explicit indentation and the chomping that keeps the text's own line ends, or quoted */
static void text_entry(FILE *f, const char *key, const char *s, size_t n) {
  fprintf(f, "  %s: ", key);
  if (!block_safe(s, n)) {
    quoted(f, s, n);
    fputc('\n', f);
    return;
  }
  const char *chomp = s[n - 1] != '\n' ? "-" : n >= 2 && s[n - 2] == '\n' ? "+" : "";
  fprintf(f, "|2%s\n", chomp);
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
    if (len > 0) fprintf(f, "    %.*s\n", (int)len, s + i);
    else fputc('\n', f);
    i += len + 1;
  }
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail(err, errlen, "cannot read '%s': %s", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 4096 > cap) {
      cap = cap ? 2 * cap : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  bool bad = ferror(f) || !buf;
  fclose(f);
  if (bad) {
    free(buf);
    fail(err, errlen, "cannot read '%s'", path);
    return NULL;
  }
  *len = n;
  return buf;
}

typedef struct {
  const K8sJob *job;
  char job_label[64];
  char (*labels)[64]; /* per host */
  const char *tmp;    /* the directory being written */
  char *err;
  size_t errlen;
} Emit;

/* one file of the temporary directory from a memory stream's text; readable by its owner only,
 * as the directory (mkdtemp) is: the Secret's file holds every key of the job */
static int put(Emit *e, const char *name, char *text, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", e->tmp, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (fd >= 0 && !f) close(fd);
  int rc = 0;
  if (!f || fwrite(text, 1, len, f) != len) rc = -1;
  if (f && fclose(f) != 0) rc = -1;
  free(text);
  return rc < 0 ? fail(e->err, e->errlen, "cannot write '%s': %s", path, strerror(errno)) : 0;
}

static void metadata(FILE *f, Emit *e, const char *name_suffix, const char *host_label) {
  fprintf(f, "metadata:\n  name: sf-%s%s\n  labels:\n", e->job_label, name_suffix);
  fprintf(f, "    app.kubernetes.io/name: streamfission\n    app.kubernetes.io/instance: %s\n", e->job_label);
  if (host_label) fprintf(f, "    streamfission.io/host: %s\n", host_label);
}

static int configmap(Emit *e) {
  size_t n;
  char *graph = read_file(e->job->graph_path, &n, e->err, e->errlen);
  if (!graph) return -1;
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: v1\nkind: ConfigMap\n", f);
  metadata(f, e, "-graph", NULL);
  fputs("data:\n", f);
  text_entry(f, "graph.xml", graph, n);
  fclose(f);
  free(graph);
  return put(e, "configmap.yaml", text, len);
}

static int secret(Emit *e) {
  const K8sJob *j = e->job;
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: v1\nkind: Secret\n", f);
  metadata(f, e, "-tls", NULL);
  fputs("type: Opaque\nstringData:\n", f);
  fputs("  token: ", f);
  q(f, j->token);
  fputc('\n', f);
  text_entry(f, "ca.crt", j->ca, strlen(j->ca));
  for (int i = 0; i < j->nhosts; i++) {
    char key[300];
    snprintf(key, sizeof key, "%s.crt", j->hosts[i].name);
    text_entry(f, key, j->certs[i], strlen(j->certs[i]));
    snprintf(key, sizeof key, "%s.key", j->hosts[i].name);
    text_entry(f, key, j->keys[i], strlen(j->keys[i]));
  }
  fclose(f);
  return put(e, "secret.yaml", text, len);
}

static const char *port_of(const char *address) {
  const char *colon = strrchr(address, ':');
  return colon ? colon + 1 : "";
}

static int service(Emit *e) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: v1\nkind: Service\n", f);
  metadata(f, e, "", NULL);
  fputs("spec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n  selector:\n", f);
  fprintf(f, "    app.kubernetes.io/name: streamfission\n    app.kubernetes.io/instance: %s\n", e->job_label);
  fputs("  ports:\n", f);
  /* one entry per distinct port (a Service refuses the same port twice) */
  for (int i = 0; i < e->job->nhosts; i++) {
    const char *p = port_of(e->job->hosts[i].address);
    bool seen = false;
    for (int k = 0; k < i && !seen; k++) seen = strcmp(p, port_of(e->job->hosts[k].address)) == 0;
    if (!seen) fprintf(f, "    - name: sf-%s\n      port: %s\n      protocol: TCP\n", p, p);
  }
  fclose(f);
  return put(e, "service.yaml", text, len);
}

static int volume(Emit *e) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: v1\nkind: PersistentVolumeClaim\n", f);
  metadata(f, e, "-data", NULL);
  fputs("spec:\n  accessModes:\n    - ReadWriteMany\n  resources:\n    requests:\n      storage: ", f);
  q(f, e->job->storage ? e->job->storage : "1Gi");
  fputc('\n', f);
  fclose(f);
  return put(e, "volume.yaml", text, len);
}

static void secret_env(FILE *f, Emit *e, const char *var, const char *key) {
  fprintf(f, "        - name: %s\n          valueFrom:\n            secretKeyRef:\n", var);
  fprintf(f, "              name: sf-%s-tls\n              key: ", e->job_label);
  q(f, key);
  fputc('\n', f);
}

static int pod(Emit *e, int h) {
  const K8sJob *j = e->job;
  const char *name = j->hosts[h].name;
  char *text, *hosts_arg, *listen, file[128], key[300];
  size_t len, hlen;
  FILE *hf = open_memstream(&hosts_arg, &hlen);
  for (int i = 0; i < j->nhosts; i++)
    fprintf(hf, "%s%s=%s.sf-%s:%s", i ? "," : "", j->hosts[i].name, e->labels[i], e->job_label,
            port_of(j->hosts[i].address));
  fclose(hf);
  if (asprintf(&listen, "0.0.0.0:%s", port_of(j->hosts[h].address)) < 0) {
    free(hosts_arg);
    return fail(e->err, e->errlen, "out of memory");
  }
  char suffix[80];
  snprintf(suffix, sizeof suffix, "-%s", e->labels[h]);
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: v1\nkind: Pod\n", f);
  metadata(f, e, suffix, e->labels[h]);
  fprintf(f, "spec:\n  hostname: %s\n  subdomain: sf-%s\n  restartPolicy: OnFailure\n", e->labels[h], e->job_label);
  fputs("  containers:\n    - name: sf-exec\n      image: ", f);
  q(f, j->image);
  fputs("\n      workingDir: " MOUNT_DATA "/work\n      args:\n", f);
  const char *fixed[] = {"sf-exec", "--host", name, "--listen", listen, "--hosts", hosts_arg, "--token-file",
                         MOUNT_SECRET "/token", "--checkpoint-dir", MOUNT_DATA "/checkpoints", "--restore"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
    fputs("        - ", f);
    q(f, fixed[i]);
    fputc('\n', f);
  }
  if (j->checkpoint_interval) {
    fputs("        - \"--checkpoint-interval\"\n        - ", f);
    q(f, j->checkpoint_interval);
    fputc('\n', f);
  }
  for (int i = 0; i < j->nexec_args; i++) {
    fputs("        - ", f);
    q(f, j->exec_args[i]);
    fputc('\n', f);
  }
  fputs("        - \"" MOUNT_GRAPH "/graph.xml\"\n", f);
  fprintf(f, "      ports:\n        - containerPort: %s\n          protocol: TCP\n", port_of(j->hosts[h].address));
  fputs("      env:\n", f);
  secret_env(f, e, "SF_TLS_CA", "ca.crt");
  snprintf(key, sizeof key, "%s.crt", name);
  secret_env(f, e, "SF_TLS_CERT", key);
  snprintf(key, sizeof key, "%s.key", name);
  secret_env(f, e, "SF_TLS_KEY", key);
  fputs("      volumeMounts:\n", f);
  fputs("        - name: graph\n          mountPath: " MOUNT_GRAPH "\n          readOnly: true\n", f);
  fputs("        - name: token\n          mountPath: " MOUNT_SECRET "\n          readOnly: true\n", f);
  fputs("        - name: data\n          mountPath: " MOUNT_DATA "\n", f);
  fputs("  volumes:\n", f);
  fprintf(f, "    - name: graph\n      configMap:\n        name: sf-%s-graph\n", e->job_label);
  fprintf(f, "    - name: token\n      secret:\n        secretName: sf-%s-tls\n", e->job_label);
  fputs("        defaultMode: 256 # 0400: the token, for its owner only\n        items:\n          - key: token\n            path: token\n", f);
  fprintf(f, "    - name: data\n      persistentVolumeClaim:\n        claimName: sf-%s-data\n", e->job_label);
  fclose(f);
  free(hosts_arg);
  free(listen);
  snprintf(file, sizeof file, "pod-%s.yaml", e->labels[h]);
  return put(e, file, text, len);
}

static int kustomization(Emit *e) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  fputs("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n", f);
  fputs("  - configmap.yaml\n  - secret.yaml\n  - service.yaml\n  - volume.yaml\n", f);
  for (int i = 0; i < e->job->nhosts; i++) fprintf(f, "  - pod-%s.yaml\n", e->labels[i]);
  fclose(f);
  return put(e, "kustomization.yaml", text, len);
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  char path[8192];
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path)
      unlink(path);
  closedir(d);
  rmdir(dir);
}

static bool empty_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *de;
  bool empty = true;
  while (empty && (de = readdir(d))) empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
  closedir(d);
  return empty;
}

int k8s_emit(const char *dir, const K8sJob *job, char *err, size_t errlen) {
  if (job->nhosts < 1) return fail(err, errlen, "the graph names no hosts");
  Emit e = {.job = job, .err = err, .errlen = errlen};
  if (k8s_label(job->job, e.job_label, sizeof e.job_label - 12) < 0) /* room for sf-, -graph, -LABEL */
    return fail(err, errlen, "the job name '%s' is not a DNS label (a-z, 0-9, '-'; capitals, '_' and '.' are made so; "
                "at most 50 bytes): name it with --job", job->job);
  e.labels = calloc((size_t)job->nhosts, sizeof *e.labels);
  if (!e.labels) return fail(err, errlen, "out of memory");
  int rc = 0;
  for (int i = 0; i < job->nhosts && rc == 0; i++) {
    if (k8s_label(job->hosts[i].name, e.labels[i], sizeof e.labels[i]) < 0 ||
        strlen(e.labels[i]) + strlen(e.job_label) > 58) /* a pod's name sf-JOB-LABEL: at most 63 */
      rc = fail(err, errlen, "host '%s' has no Kubernetes name: a DNS label of at most %zu bytes, with the job's "
                "'%s', is needed", job->hosts[i].name, 58 - strlen(e.job_label), e.job_label);
    for (int k = 0; k < i && rc == 0; k++)
      if (strcmp(e.labels[i], e.labels[k]) == 0)
        rc = fail(err, errlen, "hosts '%s' and '%s' would both be '%s' on Kubernetes", job->hosts[k].name,
                  job->hosts[i].name, e.labels[i]);
    const char *p = port_of(job->hosts[i].address);
    if (rc == 0 && (!*p || strspn(p, "0123456789") != strlen(p)))
      rc = fail(err, errlen, "host '%s' has no port in its address '%s'", job->hosts[i].name, job->hosts[i].address);
  }
  struct stat st;
  if (rc == 0 && stat(dir, &st) == 0 && !(S_ISDIR(st.st_mode) && empty_dir(dir)))
    rc = fail(err, errlen, "'%s' exists and is not an empty directory", dir);
  char tmp[4096];
  if (rc == 0) {
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", dir);
    if (strlen(dir) + 12 >= sizeof tmp || !mkdtemp(tmp))
      rc = fail(err, errlen, "cannot make a directory beside '%s': %s", dir, strerror(errno));
  }
  if (rc < 0) {
    free(e.labels);
    return -1;
  }
  e.tmp = tmp;
  rc = configmap(&e);
  if (rc == 0) rc = secret(&e);
  if (rc == 0) rc = service(&e);
  if (rc == 0) rc = volume(&e);
  for (int i = 0; i < job->nhosts && rc == 0; i++) rc = pod(&e, i);
  if (rc == 0) rc = kustomization(&e);
  if (rc == 0) {
    rmdir(dir); /* an empty one: rename needs it gone */
    if (rename(tmp, dir) < 0) rc = fail(err, errlen, "cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
  }
  if (rc < 0) remove_tree(tmp);
  free(e.labels);
  return rc;
}
