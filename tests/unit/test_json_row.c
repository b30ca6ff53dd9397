/* test_json_row.c: the JSON row codec of KafkaSource and KafkaSink's `format` = `json`
 * (rt/json_row.c): the exact text written (member order, escapes, the CSV writer's numbers and the
 * documented exceptions), values read back to the same bits (random doubles included), and the
 * exact message of every value refused. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_helper.h"
#include "json_row.h"
#include "sf.h"

static Attr attrs[] = {
  {.name = "s", .type = TYPE_STRING}, {.name = "i", .type = TYPE_INT},
  {.name = "d", .type = TYPE_DOUBLE}, {.name = "b", .type = TYPE_BOOL},
};
static const Schema schema = {.name = "Row", .attrs = attrs, .nattrs = 4};

/* The object of one row, as a malloc'd string. */
static char *put(const char *s, size_t sn, int64_t i, double d, bool b) {
  Value v[4];
  v[0] = value_string(s, sn);
  v[1] = value_int(i);
  v[2] = value_double(d);
  v[3] = value_bool(b);
  Buf out;
  buf_init(&out);
  json_row_put(&out, &schema, v, 4);
  return out.p;
}

START_TEST(test_put_text) {
  char *t = put("a\"b\\c/\n\t\x01\x1f\x7f\xc3\xa9", 13, -9223372036854775807 - 1, 0.1, true);
  ck_assert_str_eq(t, "{\"s\":\"a\\\"b\\\\c/\\n\\t\\u0001\\u001f\x7f\xc3\xa9\",\"i\":-9223372036854775808,\"d\":0.1,"
                      "\"b\":true}");
  free(t);
  static const struct {
    double d;
    const char *text;
  } doubles[] = {
    {1.0, "1"}, {-2.5, "-2.5"}, {1e21, "1e+21"}, {1e-7, "1e-7"}, {0.0, "0"}, {-0.0, "-0.0"},
    {123456789012.0, "123456789012"}, {9007199254740993.0, "9007199254740992"},
    {0x1p63, "9.223372036854776e+18"}, {-0x1p63, "-9.223372036854776e+18"}, {1e20, "1e+20"},
    {123456789012345678901.0, "1.2345678901234568e+20"}, {0x1p63 - 1024, "9223372036854775000"},
    {NAN, "\"NaN\""}, {INFINITY, "\"Infinity\""}, {-INFINITY, "\"-Infinity\""},
  };
  for (size_t k = 0; k < sizeof doubles / sizeof *doubles; k++) {
    t = put("", 0, 0, doubles[k].d, false);
    char want[128];
    snprintf(want, sizeof want, "{\"s\":\"\",\"i\":0,\"d\":%s,\"b\":false}", doubles[k].text);
    ck_assert_str_eq(t, want);
    free(t);
  }
}
END_TEST

/* Reads text into v with r, asserting it is refused with message `why` (NULL: read). */
static void expect(JsonRowReader *r, const char *text, size_t n, Value *v, const char *why) {
  char got[400] = "";
  int rc = json_row_read(r, text, n, v, got, sizeof got);
  if (why)
    ck_assert_msg(rc == -1 && !strcmp(got, why), "'%.*s': rc %d, '%s', expected '%s'", (int)n, text, rc, got, why);
  else
    ck_assert_msg(rc == 0, "'%.*s' refused: %s", (int)n, text, got);
}

START_TEST(test_read_values) {
  JsonRowReader *r = json_row_reader_new(&schema);
  Value v[4];
  const char *t = " {\"x\":[1,{\"s\":2}],\"b\":false,\"d\":-0.0,\"i\":-17,\"s\":\"\\u00e9\\ud83d\\ude00\\/\\u0000z\"}\r\n";
  expect(r, t, strlen(t), v, NULL);
  ck_assert_int_eq(v[0].type, TYPE_STRING);
  ck_assert_int_eq(v[0].s.n, 9);
  ck_assert(!memcmp(v[0].s.p, "\xc3\xa9\xf0\x9f\x98\x80/\0z", 9));
  ck_assert(v[1].type == TYPE_INT && v[1].i == -17);
  ck_assert(v[2].type == TYPE_DOUBLE && v[2].d == 0 && signbit(v[2].d));
  ck_assert(v[3].type == TYPE_BOOL && !v[3].b);
  t = "{\"s\":\"a\",\"s\":\"b\",\"i\":9223372036854775807,\"d\":18446744073709551614,\"b\":true}";
  expect(r, t, strlen(t), v, NULL); /* of a name twice, the last */
  ck_assert(v[0].s.n == 1 && v[0].s.p[0] == 'b' && v[1].i == INT64_MAX && v[2].d == 0x1p64 && v[3].b);
  t = "{\"s\":\"\",\"i\":0,\"d\":\"-Infinity\",\"b\":true}";
  expect(r, t, strlen(t), v, NULL);
  ck_assert(v[2].d == -INFINITY);
  t = "{\"s\":\"\",\"i\":0,\"d\":\"NaN\",\"b\":true}";
  expect(r, t, strlen(t), v, NULL);
  ck_assert(isnan(v[2].d));
  json_row_reader_free(r);
}
END_TEST

START_TEST(test_read_errors) {
  JsonRowReader *r = json_row_reader_new(&schema);
  Value v[4];
  static const char *const cases[][2] = {
    {"", "the record's value is empty (expected a JSON object)"},
    {" \n", "the record's value is empty (expected a JSON object)"},
    {"{\"s\":\"a\",\"i\":1", "the record's value is not valid JSON (it ends early)"},
    {"{\"s\":\"a\",}", "the record's value is not valid JSON (unexpected character at byte offset 9)"},
    {"{\"s\":\"a\"} {}", "the record's value is not valid JSON (unexpected character at byte offset 10)"},
    {"{\"s\":\"\xff\"}", "the record's value is not valid JSON (invalid utf-8 string at byte offset 6)"},
    {"[1,2]", "the record's value is an array, not a JSON object"},
    {"null", "the record's value is null, not a JSON object"},
    {"\"x\"", "the record's value is a string, not a JSON object"},
    {"12", "the record's value is a number, not a JSON object"},
    {"{\"i\":1,\"d\":1,\"b\":true}", "member 's' is missing"},
    {"{\"s\":null,\"i\":1,\"d\":1,\"b\":true}", "member 's' is null"},
    {"{\"s\":1,\"i\":1,\"d\":1,\"b\":true}", "member 's': 1 is not a string"},
    {"{\"s\":\"\",\"i\":\"1\",\"d\":1,\"b\":true}", "member 'i': \"1\" is not an int"},
    {"{\"s\":\"\",\"i\":1.0,\"d\":1,\"b\":true}", "member 'i': 1.0 is not an int"},
    {"{\"s\":\"\",\"i\":1e3,\"d\":1,\"b\":true}", "member 'i': 1e3 is not an int"},
    {"{\"s\":\"\",\"i\":9223372036854775808,\"d\":1,\"b\":true}", "member 'i' is an integer beyond the range of an int"},
    {"{\"s\":\"\",\"i\":1,\"d\":100000000000000000000,\"b\":true}",
     "member 'd': an integer of 2^63 or more in magnitude is not read exactly (write it with an exponent)"},
    {"{\"s\":\"\",\"i\":1,\"d\":-9223372036854775809,\"b\":true}",
     "member 'd': an integer of 2^63 or more in magnitude is not read exactly (write it with an exponent)"},
    {"{\"s\":\"\",\"i\":1,\"d\":NaN,\"b\":true}", "member 'd': NaN is not a finite double"},
    {"{\"s\":\"\",\"i\":1,\"d\":1e999,\"b\":true}", "member 'd': 1e999 is not a finite double"},
    {"{\"s\":\"\",\"i\":1,\"d\":\"nan\",\"b\":true}", "member 'd': \"nan\" is not a double"},
    {"{\"s\":\"\",\"i\":1,\"d\":[1],\"b\":true}", "member 'd': [1] is not a double"},
    {"{\"s\":\"\",\"i\":1,\"d\":1,\"b\":1}", "member 'b': 1 is not a bool"},
    {"{\"s\":\"\",\"i\":1,\"d\":1,\"b\":\"true\"}", "member 'b': \"true\" is not a bool"},
    {"{\"s\":{\"a\":\"0123456789012345678901234567890123456789\"},\"i\":1,\"d\":1,\"b\":true}",
     "member 's': {\"a\":\"0123456789012345678901234567890123... is not a string"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) expect(r, cases[k][0], strlen(cases[k][0]), v, cases[k][1]);
  expect(r, "{\"s\":\"a\"}\0 ", 11, v, "the record's value is not valid JSON (a NUL byte at offset 9)");
  json_row_reader_free(r);
}
END_TEST

/* Random doubles (random bits: every exponent, subnormals, NaNs), ints and strings of every byte
 * but those above 0x7f (UTF-8 is checked on reading): written, then read back to the same bits. */
START_TEST(test_round_trip) {
  JsonRowReader *r = json_row_reader_new(&schema);
  uint64_t x = 23;
  char s[32];
  for (int k = 0; k < 200000; k++) {
    uint64_t bits = x = x * 6364136223846793005u + 1442695040888963407u;
    bits ^= bits >> 29;
    double d;
    memcpy(&d, &bits, sizeof d);
    if (k % 7 == 0) d = (double)(int64_t)(bits >> (bits % 64)); /* integers of every size */
    int64_t i = (int64_t)(bits * 0x9e3779b97f4a7c15u) >> (bits % 64);
    size_t n = bits % sizeof s;
    for (size_t j = 0; j < n; j++) s[j] = (char)((bits >> (j % 57)) % 128);
    char *t = put(s, n, i, d, bits & 1);
    Value v[4];
    expect(r, t, strlen(t), v, NULL);
    ck_assert_msg(v[0].s.n == n && !memcmp(v[0].s.p, s, n), "%s: string", t);
    ck_assert_msg(v[1].i == i, "%s: int", t);
    ck_assert_msg(isnan(d) ? isnan(v[2].d) : !memcmp(&v[2].d, &d, sizeof d), "%s: double %a read as %a", t, d, v[2].d);
    ck_assert_msg(v[3].b == (bits & 1), "%s: bool", t);
    free(t);
  }
  json_row_reader_free(r);
}
END_TEST

static Suite *json_row_suite(void) {
  Suite *s = suite_create("json_row");
  UNIT_ADD(s, test_put_text, NULL, NULL);
  UNIT_ADD(s, test_read_values, NULL, NULL);
  UNIT_ADD(s, test_read_errors, NULL, NULL);
  UNIT_ADD_TIMEOUT(s, test_round_trip, NULL, NULL, 60);
  return s;
}

int main(void) {
  return unit_run(json_row_suite());
}
