/* ports.c: a Custom operator with two input ports, for op.h ABI version 4's SF_IN2
 * (tests/op_ports.sh; part of libsf_test_ops.so), written against op.h only.
 *
 * sf_ports: for each input tuple emits one tuple (port, id, what): `port` the input port it came
 *   on (0 or 1), `id` its first attribute (an int on either port), and `what` a string naming the
 *   schema it was read with: the name and type of every attribute of its port's schema (SF_IN for
 *   port 0, SF_IN2 for port 1), joined by spaces, as NAME:TYPE. Model: state none, selectivity one.
 *   Errors (the job fails, naming the operator): an output without int `port`, int `id` and string
 *   `what`; a port's first attribute not an int. */
#include "op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ports {
  int port, id, what; /* output attributes */
  char text[2][512];  /* per port: its schema as text */
} Ports;

static const char *type_word(sf_type t) {
  return t == SF_INT ? "int" : t == SF_DOUBLE ? "double" : t == SF_STRING ? "string" : "bool";
}

static int ports_open(sf_op *op, void **state) {
  Ports *p = calloc(1, sizeof *p);
  if (!p) return sf_error(op, "out of memory");
  *state = p;
  p->port = sf_output_attr(op, "port");
  p->id = sf_output_attr(op, "id");
  p->what = sf_output_attr(op, "what");
  if (p->port < 0 || p->id < 0 || p->what < 0 || sf_attr_type(op, SF_OUT, p->port) != SF_INT ||
      sf_attr_type(op, SF_OUT, p->id) != SF_INT || sf_attr_type(op, SF_OUT, p->what) != SF_STRING)
    return sf_error(op, "needs output attributes int 'port', int 'id' and string 'what'");
  const int sides[2] = {SF_IN, SF_IN2};
  for (int s = 0; s < 2; s++) {
    int n = sf_attr_count(op, sides[s]);
    if (n < 1 || sf_attr_type(op, sides[s], 0) != SF_INT)
      return sf_error(op, "the first attribute of input port %d must be an int", s);
    size_t len = 0;
    for (int a = 0; a < n && len < sizeof p->text[s]; a++)
      len += (size_t)snprintf(p->text[s] + len, sizeof p->text[s] - len, "%s%s:%s", a ? " " : "",
                              sf_attr_name(op, sides[s], a), type_word(sf_attr_type(op, sides[s], a)));
  }
  return 0;
}

static int ports_process(sf_op *op, void *state, int port, const sf_tuple *in) {
  Ports *p = state;
  sf_tuple *out = sf_tuple_new(op);
  if (!out) return -1;
  sf_set_int(out, p->port, port);
  sf_set_int(out, p->id, sf_get_int(in, 0));
  sf_set_string(out, p->what, p->text[port ? 1 : 0], strlen(p->text[port ? 1 : 0]));
  return sf_emit(op, out);
}

static void ports_close(sf_op *op, void *state) {
  free(state);
}

SF_EXPORT const struct sf_operator sf_ports = {
  .abi_version = SF_OPERATOR_ABI,
  .open = ports_open,
  .process = ports_process,
  .close = ports_close,
};
