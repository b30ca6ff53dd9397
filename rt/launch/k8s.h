/* k8s.h: `sf-launch --emit kubernetes DIR GRAPH`, a job's Kubernetes manifests (k8s.c).
 *
 * Nothing here talks to a cluster: the files are written for `kubectl apply -k DIR`. What each
 * holds, and why, is at the top of k8s.c. */
#ifndef SF_LAUNCH_K8S_H
#define SF_LAUNCH_K8S_H

#include "launch.h"

#include <stddef.h>

typedef struct {
  const char *graph_path;          /* the graph file, copied into the ConfigMap byte for byte */
  const char *job;                 /* the job's name (made a DNS label: sf-JOB-...) */
  const char *image;               /* the container image, with sf-exec on its PATH */
  const LaunchHost *hosts;         /* the graph's hosts, in order; each pod listens on its PORT */
  int nhosts;
  const char *ca;                  /* PEM: the job CA's certificate (tools/sf-certs) */
  char *const *certs, *const *keys; /* PEM: each host's certificate and key */
  const char *token;               /* the job token */
  const char *checkpoint_interval; /* --checkpoint-interval's text (NULL: sf-exec's default) */
  const char *storage;             /* the checkpoint volume claim's size, e.g. "1Gi" */
  const char *const *exec_args;    /* further sf-exec options for every pod (--batch N, --stats...) */
  int nexec_args;
} K8sJob;

/* Writes the manifests into DIR, which must not exist yet or be an empty directory: first into a
 * new directory beside it, renamed to DIR once every file is complete, so that a failure leaves
 * nothing half-written. 0, or -1 with why in err. */
int k8s_emit(const char *dir, const K8sJob *job, char *err, size_t errlen);

/* NAME as a DNS label (RFC 1123: a-z, 0-9 and '-', starting and ending with a letter or a digit,
 * at most 63 bytes): capitals lowered, '_' and '.' made '-'. 0, or -1 when there is no such label
 * (another byte, empty, too long). */
int k8s_label(const char *name, char *out, size_t cap);

#endif
