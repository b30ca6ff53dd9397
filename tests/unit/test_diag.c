/* test_diag.c: the "did you mean" suggestion of xform/diag.c (diag_suggest): which candidate is
 * close enough to a misspelt name, the thresholds (a distance of a third of the name's length, at
 * least 1), case, swaps of adjacent characters, ties and empty candidate lists, and the
 * text DIAG_HINT appends to a message. */
#include "check_helper.h"
#include "sf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define N(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* diag_suggest's answer as a string, "(none)" for NULL, so ck_assert_str_eq can compare it. */
static const char *sug(const char *name, const char *const *c, int n) {
  const char *s = diag_suggest(name, c, n);
  return s ? s : "(none)";
}

static const char *const kinds[] = {"Beacon", "FileSource", "Functor", "Filter", "FlatMap", "Aggregate",
                                    "Dedup", "Work", "Custom", "FileSink", "Split", "Merge",
                                    "SocketSource", "SocketSink"};

START_TEST(test_case_only) {
  ck_assert_str_eq(sug("dedup", kinds, N(kinds)), "Dedup");
  ck_assert_str_eq(sug("FILESINK", kinds, N(kinds)), "FileSink");
  static const char *const p[] = {"window", "partitionBy"};
  ck_assert_str_eq(sug("partitionby", p, N(p)), "partitionBy");
  /* another case beats a closer edit: "ab" is 'AB' in another case, 'ac' one substitution away */
  static const char *const q[] = {"ac", "AB"};
  ck_assert_str_eq(sug("ab", q, N(q)), "AB");
  /* two candidates that differ from the name only in case tie */
  static const char *const r[] = {"Ab", "aB"};
  ck_assert_str_eq(sug("ab", r, N(r)), "(none)");
}
END_TEST

START_TEST(test_edits) {
  static const char *const a[] = {"celsius", "room", "seq"};
  ck_assert_str_eq(sug("celsus", a, N(a)), "celsius");   /* one deletion */
  ck_assert_str_eq(sug("celsiuss", a, N(a)), "celsius"); /* one insertion */
  ck_assert_str_eq(sug("celcius", a, N(a)), "celsius");  /* one substitution */
  ck_assert_str_eq(sug("clesius", a, N(a)), "celsius");  /* one swap of adjacent characters */
  ck_assert_str_eq(sug("selcius", a, N(a)), "celsius");  /* two substitutions */
  ck_assert_str_eq(sug("ecslius", a, N(a)), "celsius");  /* two swaps */
  ck_assert_str_eq(sug("rom", a, N(a)), "room");
  ck_assert_str_eq(sug("ssq", a, N(a)), "seq");
  /* case is ignored inside an edit too: 'FileSorce' is 'FileSource' less a 'u' */
  ck_assert_str_eq(sug("filesorce", kinds, N(kinds)), "FileSource");
}
END_TEST

START_TEST(test_thresholds) {
  static const char *const a[] = {"celsius", "room", "seq", "Aggregate"};
  /* 6 to 8 characters: distance 2 suggests, 3 does not; 5 characters: distance 2 does not */
  ck_assert_str_eq(sug("celsi", a, N(a)), "(none)");
  ck_assert_str_eq(sug("celsis", a, N(a)), "celsius");
  ck_assert_str_eq(sug("cels", a, N(a)), "(none)"); /* 4 characters, distance 3 */
  ck_assert_str_eq(sug("celxxus", a, N(a)), "celsius");
  ck_assert_str_eq(sug("cexxxus", a, N(a)), "(none)");
  ck_assert_str_eq(sug("agregat", a, N(a)), "Aggregate");
  ck_assert_str_eq(sug("agrgat", a, N(a)), "(none)");
  /* up to 5 characters: distance 1 suggests, 2 does not */
  ck_assert_str_eq(sug("rm", a, N(a)), "(none)");
  ck_assert_str_eq(sug("sq", a, N(a)), "seq");
  ck_assert_str_eq(sug("rooom", a, N(a)), "room"); /* the name's length decides, not the candidate's */
  ck_assert_str_eq(sug("rxxm", a, N(a)), "(none)");
  ck_assert_str_eq(sug("roxm", a, N(a)), "room");
  /* the Damerau distance: a swap is one edit, so 'eqs' (two edits from 'seq' either way) is not */
  ck_assert_str_eq(sug("sqe", a, N(a)), "seq");
  ck_assert_str_eq(sug("eqs", a, N(a)), "(none)");
}
END_TEST

START_TEST(test_ties) {
  /* 'Merge' and 'Split' are far; 'Work' is one from 'Wor', so is nothing else */
  ck_assert_str_eq(sug("Wor", kinds, N(kinds)), "Work");
  /* 'Filer' is one edit from 'Filter' and two from 'Fil...': the closest one wins */
  ck_assert_str_eq(sug("Filer", kinds, N(kinds)), "Filter");
  /* equally close: no suggestion */
  static const char *const t[] = {"price", "prize"};
  ck_assert_str_eq(sug("prixe", t, N(t)), "(none)");
  static const char *const u[] = {"a1", "a2", "b"};
  ck_assert_str_eq(sug("a", u, N(u)), "(none)");
  /* the same candidate offered twice (an attribute and a state variable of one name) is one */
  static const char *const v[] = {"total", "other", "total"};
  ck_assert_str_eq(sug("totl", v, N(v)), "total");
  /* a closer candidate breaks a tie between farther ones */
  static const char *const w[] = {"pricey", "prices", "price"};
  ck_assert_str_eq(sug("pricx", w, N(w)), "price");
}
END_TEST

START_TEST(test_empty_and_odd) {
  ck_assert_str_eq(sug("dedup", NULL, 0), "(none)");
  static const char *const a[] = {NULL, "dedup", "", NULL};
  ck_assert_str_eq(sug("dedup", a, N(a)), "(none)"); /* the name itself is no suggestion */
  ck_assert_str_eq(sug("dedu", a, N(a)), "dedup");   /* NULL candidates are skipped */
  ck_assert_str_eq(sug("", a, N(a)), "(none)");      /* an empty name has nothing to be close to */
  ck_assert_str_eq(sug("x", a, N(a)), "(none)");     /* '' is one edit from 'x', but means nothing */
  /* a long name gets its suggestion up to 128 characters, none beyond (the distance is quadratic) */
  char longer[3001], other[3001];
  for (int i = 0; i < 3000; i++) longer[i] = other[i] = 'a' + i % 26;
  longer[128] = other[128] = 0;
  other[64] = '#';
  const char *const b[] = {other};
  ck_assert_str_eq(sug(longer, b, 1), other);
  longer[128] = other[128] = 'y';
  longer[3000] = other[3000] = 0;
  ck_assert_str_eq(sug(longer, b, 1), "(none)");
}
END_TEST

START_TEST(test_hint_text) {
  char buf[128];
  const char *hint = "celsius";
  snprintf(buf, sizeof buf, "unknown name '%s'" DIAG_HINT_FMT, "celsus", DIAG_HINT(hint));
  ck_assert_str_eq(buf, "unknown name 'celsus'; did you mean 'celsius'?");
  hint = NULL;
  snprintf(buf, sizeof buf, "unknown name '%s'" DIAG_HINT_FMT, "x", DIAG_HINT(hint));
  ck_assert_str_eq(buf, "unknown name 'x'");
}
END_TEST

static Suite *diag_suite(void) {
  Suite *s = suite_create("diag");
  TCase *tc = tcase_create("suggest");
  tcase_add_test(tc, test_case_only);
  tcase_add_test(tc, test_edits);
  tcase_add_test(tc, test_thresholds);
  tcase_add_test(tc, test_ties);
  tcase_add_test(tc, test_empty_and_odd);
  tcase_add_test(tc, test_hint_text);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return unit_run(diag_suite());
}
