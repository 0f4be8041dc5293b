/* expo.h: the Prometheus text exposition format, version 0.0.4
 * (what GET /metrics answers): families, samples, histograms.
 *
 * Pure: it appends text to a struct buf the caller owns.  Label values
 * are escaped as the format says (backslash, double quote, line feed);
 * names are the caller's constants.  A buffer that reaches its cap is
 * left as it was at the last whole line, and expo_ok() says so. */
#ifndef EVALGATE_EXPO_H
#define EVALGATE_EXPO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define EXPO_CONTENT_TYPE	"text/plain; version=0.0.4"

struct expo_label {
	const char	*name;
	const char	*value;	/* any bytes but NUL; escaped here */
};

/* The writer: the text so far in b (borrowed), and whether every line
 * fitted. */
struct expo {
	struct buf	*b;
	int		 full;
};

void	expo_init(struct expo *x, struct buf *b);
/* "# HELP name help" and "# TYPE name type" (counter, gauge,
 * histogram); help is escaped (backslash, line feed). */
void	expo_family(struct expo *x, const char *name, const char *type,
	    const char *help);
/* One sample: name{labels} value.  Integers are written exactly. */
void	expo_sample(struct expo *x, const char *name,
	    const struct expo_label *l, size_t nl, uint64_t value);
void	expo_sample_double(struct expo *x, const char *name,
	    const struct expo_label *l, size_t nl, double value);
/* A histogram's series: name_bucket{labels,le="bound"} cumulative, for
 * each of the nb bounds (seconds, increasing) then le="+Inf", name_sum
 * and name_count.  counts[] holds nb + 1 per-bucket counts (the last
 * past every bound), not cumulative; sum in the bounds' unit. */
void	expo_histogram(struct expo *x, const char *name,
	    const struct expo_label *l, size_t nl, const double *bounds,
	    size_t nb, const uint64_t *counts, double sum);
/* 1 when every line fitted in the buffer. */
int	expo_ok(const struct expo *x);

#endif
