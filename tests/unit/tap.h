/* tap.h: a minimal Test Anything Protocol emitter for the unit tests.
 *
 *	ok(cond, "name %d", i);		one test point
 *	is_str(got, want, "name");	string equality, shows both on failure
 *	is_num(got, want, eps, "name");	numeric equality within eps
 *	return tap_done();		prints the plan, exit status
 *	json_object *o = parse("{...}");	test JSON, aborts if malformed
 */
#ifndef EVALGATE_TAP_H
#define EVALGATE_TAP_H

#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

static int tap_n, tap_failed;

static int __attribute__((format(printf, 2, 3), unused))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

static int __attribute__((unused))
is_str(const char *got, const char *want, const char *name)
{
	int same = got != NULL && want != NULL ? strcmp(got, want) == 0 :
	    got == want;

	if (!ok(same, "%s", name))
		printf("#   got:  '%s'\n#   want: '%s'\n",
		    got ? got : "(null)", want ? want : "(null)");
	return same;
}

static int __attribute__((unused))
is_num(double got, double want, double eps, const char *name)
{
	int same = fabs(got - want) <= eps;

	if (!ok(same, "%s", name))
		printf("#   got:  %.17g\n#   want: %.17g\n", got, want);
	return same;
}

static int __attribute__((unused))
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}

/* Test JSON: a new reference, or NULL for "null"; anything that does
 * not parse is a mistake in the test, which stops there. */
static json_object *parse(const char *) __attribute__((unused));
static json_object *
parse(const char *text)
{
	json_object	*o = json_tokener_parse(text);

	if (o == NULL && strcmp(text, "null") != 0) {
		printf("# bad test JSON: %s\n", text);
		abort();
	}
	return o;
}

#endif
