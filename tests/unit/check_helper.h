/* check_helper.h: what every Check suite of tests/unit/ shares (tests/unit/check_helper.c, linked
 * into each test_*.c): running a suite as main does, adding a test in a test case of its own, graphs
 * that must parse and check, and the text a writer or a file gives.
 *
 * Every helper that can fail asserts with ck_assert_msg, so a failure fails the calling test with
 * a message naming what went wrong. Strings returned are malloc'd; the caller frees them. */
#ifndef SF_CHECK_HELPER_H
#define SF_CHECK_HELPER_H

#include <check.h>
#include <stdio.h>

#include "sf.h"

/* The graph language's schema in the source tree (graph_parse_* validate against it). */
#define XSD SF_SOURCE_DIR "/schema/graph.xsd"

/* ---- running suites ---- */

/* A new test case named `name`, added to s, with the checked fixture setup/teardown (run around
 * each of its tests, in its forked process; either may be NULL) unless both are NULL, and a
 * timeout of `seconds` unless it is 0 (Check's default then: 4 s, or $CK_DEFAULT_TIMEOUT). */
TCase *unit_case(Suite *s, const char *name, SFun setup, SFun teardown, double seconds);

/* Adds the test `test` (a START_TEST name) to s in a test case of its own named after it. */
#define UNIT_ADD(s, test, setup, teardown) tcase_add_test(unit_case((s), #test, (setup), (teardown), 0), test)
/* UNIT_ADD with a timeout of `seconds`. */
#define UNIT_ADD_TIMEOUT(s, test, setup, teardown, seconds) \
  tcase_add_test(unit_case((s), #test, (setup), (teardown), (seconds)), test)

/* main's work: runs every test of s with CK_NORMAL output (Check's environment applies: CK_FORK,
 * CK_RUN_CASE, CK_TAP_LOG_FILE_NAME, ...), frees the runner (and s with it), and returns main's
 * exit status: EXIT_SUCCESS when no test failed, else EXIT_FAILURE. */
int unit_run(Suite *s);

/* The runner unit_run is running (NULL before): for srunner_fork_status in a test. */
SRunner *unit_runner(void);

/* ---- graphs ---- */

/* The graph in text, named "t.xml" in diagnostics, parsed against XSD and checked (graph_check);
 * diagnostics go to stderr and the test fails unless there is none. */
Graph *unit_graph_text(const char *text);
/* The same for the graph file at path. */
Graph *unit_graph_file(const char *path);

/* ---- diagnostics in memory ---- */

/* A Diag whose messages collect in memory, for suites that compare them whole (one per fixture:
 * unit_diags_open in setup, unit_diags_close in teardown). */
typedef struct UnitDiags {
  Diag diag;       /* what the code under test reports into */
  FILE *file;      /* the memory stream diag writes to */
  char *text;      /* what file holds, NUL-terminated, as of its last fflush (NULL: nothing yet) */
  size_t len;      /* bytes in text */
  DiagOrder order; /* how unit_diags_text and unit_diags_close flush diag */
} UnitDiags;

/* Opens u: diag reports as `file` (the name in its messages) into a new memory stream. */
void unit_diags_open(UnitDiags *u, const char *file, DiagOrder order);
/* Everything reported so far (flushed in u->order), "" when nothing; valid until the next call. */
const char *unit_diags_text(UnitDiags *u);
/* Flushes what is left, closes the stream and frees its text. */
void unit_diags_close(UnitDiags *u);

/* ---- text ---- */

/* A writer of a graph (graph_emit_xml, graph_dot_input, ...): 0 on success. */
typedef int (*UnitWriter)(const Graph *g, FILE *out);

/* What w writes for g; the test fails unless w returns 0. */
char *unit_write_string(UnitWriter w, const Graph *g);

/* The bytes of the file at path, NUL-terminated (*len of them, when len is not NULL), or NULL when
 * it cannot be opened. */
char *unit_read_file(const char *path, size_t *len);

#endif
