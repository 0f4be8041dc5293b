/* expo_test.c: TAP tests of the Prometheus text format writer
 * (src/expo.c): HELP and TYPE lines, label values escaped (backslash,
 * double quote, line feed), histogram buckets cumulative with +Inf,
 * _sum and _count, floats that read back exactly, and a buffer that
 * fills keeping whole lines only. */
#include "config.h"

#include <string.h>

#include "expo.h"
#include "tap.h"

int
main(void)
{
	struct buf		 b;
	struct expo		 x;
	struct expo_label	 l[2] = { { "route", "/v1/x" },
				     { "schema", "a\\b\"c\nd" } };
	const double		 bounds[3] = { 0.005, 0.25, 1 };
	const uint64_t		 counts[4] = { 2, 0, 3, 1 };

	buf_init(&b, 1 << 16);
	expo_init(&x, &b);
	expo_family(&x, "t_total", "counter", "Help with \\ and\nline.");
	is_str(b.p, "# HELP t_total Help with \\\\ and\\nline.\n"
	    "# TYPE t_total counter\n", "HELP escapes backslash and line "
	    "feed; TYPE");
	buf_reset(&b);
	expo_sample(&x, "t_total", l, 2, 18446744073709551615ULL);
	is_str(b.p, "t_total{route=\"/v1/x\",schema=\"a\\\\b\\\"c\\nd\"} "
	    "18446744073709551615\n", "label values escaped; a 64-bit "
	    "count written exactly");
	buf_reset(&b);
	expo_sample(&x, "t_up", NULL, 0, 1);
	is_str(b.p, "t_up 1\n", "no labels: no braces");
	buf_reset(&b);
	expo_histogram(&x, "t_seconds", l, 1, bounds, 3, counts, 1.75);
	is_str(b.p,
	    "t_seconds_bucket{route=\"/v1/x\",le=\"0.005\"} 2\n"
	    "t_seconds_bucket{route=\"/v1/x\",le=\"0.25\"} 2\n"
	    "t_seconds_bucket{route=\"/v1/x\",le=\"1\"} 5\n"
	    "t_seconds_bucket{route=\"/v1/x\",le=\"+Inf\"} 6\n"
	    "t_seconds_sum{route=\"/v1/x\"} 1.75\n"
	    "t_seconds_count{route=\"/v1/x\"} 6\n",
	    "histogram: cumulative buckets, +Inf = _count, _sum");
	buf_reset(&b);
	expo_sample_double(&x, "t_f", NULL, 0, 0.1 + 0.2);
	is_str(b.p, "t_f 0.30000000000000004\n", "a float reads back "
	    "exactly, in as few digits as that takes");
	buf_reset(&b);
	expo_sample_double(&x, "t_f", NULL, 0, 0.000149);
	is_str(b.p, "t_f 0.000149\n", "and no more");
	ok(expo_ok(&x), "everything fitted");
	buf_free(&b);

	buf_init(&b, 40);
	expo_init(&x, &b);
	expo_sample(&x, "short", NULL, 0, 1);
	expo_sample(&x, "a_name_long_enough_to_pass_the_cap", l, 2, 1);
	is_str(b.p, "short 1\n", "a full buffer keeps whole lines only");
	ok(!expo_ok(&x), "and says it is full");
	buf_free(&b);
	return tap_done();
}
