/* check_helper.c: the helpers every Check suite shares (check_helper.h). */
#include "check_helper.h"

#include <stdlib.h>
#include <string.h>

static SRunner *running; /* the runner of unit_run */

TCase *unit_case(Suite *s, const char *name, SFun setup, SFun teardown, double seconds) {
  TCase *tc = tcase_create(name);
  if (setup || teardown) tcase_add_checked_fixture(tc, setup, teardown);
  if (seconds > 0) tcase_set_timeout(tc, seconds);
  suite_add_tcase(s, tc);
  return tc;
}

int unit_run(Suite *s) {
  running = srunner_create(s);
  srunner_run_all(running, CK_NORMAL);
  int failed = srunner_ntests_failed(running);
  srunner_free(running);
  running = NULL;
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

SRunner *unit_runner(void) {
  return running;
}

/* Checks g (NULL: it did not parse) with d, which reports to stderr; what is named `name`. */
static Graph *checked(Graph *g, Diag *d, const char *name) {
  diag_flush(d, DIAG_AS_REPORTED);
  ck_assert_msg(g != NULL, "graph '%s' does not parse", name);
  int errors = graph_check(g, d);
  diag_flush(d, DIAG_BY_PLACE);
  ck_assert_msg(errors == 0, "graph '%s' does not check: %d error%s", name, errors, errors == 1 ? "" : "s");
  return g;
}

Graph *unit_graph_text(const char *text) {
  Diag d;
  diag_init(&d, "t.xml", stderr);
  return checked(graph_parse_memory(text, strlen(text), "t.xml", XSD, &d), &d, "t.xml");
}

Graph *unit_graph_file(const char *path) {
  Diag d;
  diag_init(&d, path, stderr);
  return checked(graph_parse_file(path, XSD, &d), &d, path);
}

void unit_diags_open(UnitDiags *u, const char *file, DiagOrder order) {
  u->text = NULL;
  u->len = 0;
  u->order = order;
  u->file = open_memstream(&u->text, &u->len);
  ck_assert_ptr_nonnull(u->file);
  diag_init(&u->diag, file, u->file);
}

const char *unit_diags_text(UnitDiags *u) {
  diag_flush(&u->diag, u->order);
  fflush(u->file);
  return u->text ? u->text : "";
}

void unit_diags_close(UnitDiags *u) {
  diag_flush(&u->diag, u->order);
  fclose(u->file);
  free(u->text);
  u->text = NULL;
}

char *unit_write_string(UnitWriter w, const Graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(w(g, f), 0);
  ck_assert_int_eq(fclose(f), 0);
  return buf;
}

char *unit_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&buf, &n);
  ck_assert_ptr_nonnull(m);
  char chunk[4096];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, k, m);
  fclose(f);
  ck_assert_int_eq(fclose(m), 0);
  if (len) *len = n;
  return buf;
}
