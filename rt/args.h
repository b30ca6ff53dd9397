/* args.h: the checks of option values that sf-exec (rt/main.c) and sf-launch (rt/launch/) share,
 * so that sf-launch refuses exactly what sf-exec would refuse, with the same words.
 *
 * Each check returns true with *v set when TEXT is acceptable; otherwise it prints
 * "PROG: WHAT must be ..., got 'TEXT'" on stderr and returns false, and the caller exits 2 (with
 * args_try_help when it adds the "Try 'PROG --help'" line). Built into the small library sfargs,
 * which both programs link (sf-launch links nothing else of the runtime). */
#ifndef SF_ARGS_H
#define SF_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* an integer from MIN to MAX (decimal) */
bool args_int(const char *prog, const char *what, const char *text, long min, long max, long *v);
/* a number of bytes from 1 to 2^62, with K, M or G (either case) for 2^10, 2^20, 2^30 */
bool args_bytes(const char *prog, const char *what, const char *text, uint64_t *v);
/* a number of seconds from 0.01 to 86400, decimals allowed (--checkpoint-interval, --stop-grace) */
bool args_seconds(const char *prog, const char *what, const char *text, double *v);

/* "Try 'PROG --help' for more information." on stderr, then exit 2 */
_Noreturn void args_try_help(const char *prog);
/* "PROG: " and the message (printf FMT), the Try line, exit 2 */
_Noreturn void args_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
