/* expo.c: the Prometheus text exposition format (see expo.h). */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

void
expo_init(struct expo *x, struct buf *b)
{
	x->b = b;
	x->full = 0;
}

int
expo_ok(const struct expo *x)
{
	return !x->full;
}

/* Appends s, escaping backslash and line feed, and the double quote
 * when quoted (a label value). */
static enum buf_rc
escaped(struct buf *b, const char *s, int quoted)
{
	enum buf_rc	 rc = BUF_OK;
	size_t		 n;

	while (rc == BUF_OK && *s != '\0') {
		n = strcspn(s, quoted ? "\\\"\n" : "\\\n");
		rc = buf_add(b, s, n);
		s += n;
		if (rc != BUF_OK || *s == '\0')
			break;
		rc = buf_adds(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" :
		    "\\\\");
		s++;
	}
	return rc;
}

/* Ends a line: keeps it if it all fitted, else cuts the buffer back to
 * where the line began and marks the writer full. */
static void
line_end(struct expo *x, size_t start, enum buf_rc rc)
{
	if (rc == BUF_OK)
		rc = buf_add(x->b, "\n", 1);
	if (rc != BUF_OK) {
		x->b->len = start;
		if (x->b->p != NULL)
			x->b->p[start] = '\0';
		x->full = 1;
	}
}

void
expo_family(struct expo *x, const char *name, const char *type,
    const char *help)
{
	size_t		 start = x->b->len;
	enum buf_rc	 rc;

	if ((rc = buf_adds(x->b, "# HELP ")) == BUF_OK &&
	    (rc = buf_adds(x->b, name)) == BUF_OK &&
	    (rc = buf_add(x->b, " ", 1)) == BUF_OK)
		rc = escaped(x->b, help, 0);
	line_end(x, start, rc);
	start = x->b->len;
	if ((rc = buf_adds(x->b, "# TYPE ")) == BUF_OK &&
	    (rc = buf_adds(x->b, name)) == BUF_OK &&
	    (rc = buf_add(x->b, " ", 1)) == BUF_OK)
		rc = buf_adds(x->b, type);
	line_end(x, start, rc);
}

/* name{l...,extra="value"} with the value text v. */
static void
sample(struct expo *x, const char *name, const char *suffix,
    const struct expo_label *l, size_t nl, const struct expo_label *extra,
    const char *v)
{
	size_t		 start = x->b->len, i, n = nl + (extra != NULL);
	enum buf_rc	 rc;
	const struct expo_label *at;

	if ((rc = buf_adds(x->b, name)) == BUF_OK)
		rc = buf_adds(x->b, suffix);
	for (i = 0; i < n && rc == BUF_OK; i++) {
		at = i < nl ? &l[i] : extra;
		if ((rc = buf_adds(x->b, i == 0 ? "{" : ",")) == BUF_OK &&
		    (rc = buf_adds(x->b, at->name)) == BUF_OK &&
		    (rc = buf_adds(x->b, "=\"")) == BUF_OK &&
		    (rc = escaped(x->b, at->value, 1)) == BUF_OK)
			rc = buf_add(x->b, "\"", 1);
	}
	if (rc == BUF_OK && n > 0)
		rc = buf_add(x->b, "}", 1);
	if (rc == BUF_OK && (rc = buf_add(x->b, " ", 1)) == BUF_OK)
		rc = buf_adds(x->b, v);
	line_end(x, start, rc);
}

void
expo_sample(struct expo *x, const char *name, const struct expo_label *l,
    size_t nl, uint64_t value)
{
	char	 v[32];

	snprintf(v, sizeof(v), "%" PRIu64, value);
	sample(x, name, "", l, nl, NULL, v);
}

/* A float as the format spells it: NaN, +Inf, -Inf, or the shortest
 * of %.15g, %.16g and %.17g that reads back exactly. */
static void
number(char *v, size_t size, double d)
{
	int	 digits;

	if (isnan(d))
		snprintf(v, size, "NaN");
	else if (isinf(d))
		snprintf(v, size, "%s", d > 0 ? "+Inf" : "-Inf");
	else
		for (digits = 15; digits <= 17; digits++) {
			snprintf(v, size, "%.*g", digits, d);
			if (strtod(v, NULL) == d)
				break;
		}
}

void
expo_sample_double(struct expo *x, const char *name,
    const struct expo_label *l, size_t nl, double value)
{
	char	 v[40];

	number(v, sizeof(v), value);
	sample(x, name, "", l, nl, NULL, v);
}

void
expo_histogram(struct expo *x, const char *name, const struct expo_label *l,
    size_t nl, const double *bounds, size_t nb, const uint64_t *counts,
    double sum)
{
	struct expo_label	 le = { "le", NULL };
	char			 bound[40], v[40];
	uint64_t		 total = 0;
	size_t			 i;

	for (i = 0; i <= nb; i++) {
		total += counts[i];
		if (i < nb)
			snprintf(bound, sizeof(bound), "%g", bounds[i]);
		else
			snprintf(bound, sizeof(bound), "+Inf");
		le.value = bound;
		snprintf(v, sizeof(v), "%" PRIu64, total);
		sample(x, name, "_bucket", l, nl, &le, v);
	}
	number(v, sizeof(v), sum);
	sample(x, name, "_sum", l, nl, NULL, v);
	snprintf(v, sizeof(v), "%" PRIu64, total);
	sample(x, name, "_count", l, nl, NULL, v);
}
