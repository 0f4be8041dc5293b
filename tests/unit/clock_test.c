/* clock_test.c: TAP tests of clock_parse_rfc3339() (src/clock.c), the
 * parser of the dates clients and operators send (key expiry, decision
 * listings, prune): what it accepts, what it refuses, and that what
 * clock_rfc3339() writes reads back. */
#include "config.h"

#include <stdint.h>

#include "clock.h"
#include "tap.h"

/* 2026-11-21T12:00:00Z and its midnight, in epoch ms. */
#define NOON		1795262400000LL
#define MIDNIGHT	1795219200000LL

static const struct {
	const char	*text;
	int64_t		 ms;
} good[] = {
	{ "1970-01-01T00:00:00Z", 0 },
	{ "1970-01-01", 0 },
	{ "2026-11-21T12:00:00Z", NOON },
	{ "2026-11-21", MIDNIGHT },
	{ "2026-11-21t12:00:00z", NOON },
	{ "2026-11-21 12:00:00Z", NOON },
	{ "2026-11-21T12:00:00.5Z", NOON + 500 },
	{ "2026-11-21T12:00:00.05Z", NOON + 50 },
	{ "2026-11-21T12:00:00.123Z", NOON + 123 },
	{ "2026-11-21T12:00:00.123999Z", NOON + 123 },	/* cut, not rounded */
	{ "2026-11-21T14:00:00+02:00", NOON },
	{ "2026-11-21T06:30:00-05:30", NOON },
	{ "2026-11-21T12:00:00.250+00:00", NOON + 250 },
	{ "2026-11-21T00:00:00+23:59", MIDNIGHT - (23 * 60 + 59) * 60000LL },
	{ "2024-02-29", 1709164800000LL },		/* a leap day */
	{ "2026-12-31T23:59:59Z", 1798761599000LL },
	{ "2026-01-31", 1769817600000LL },
	{ "2026-04-30", 1777507200000LL },
};

static const char *const bad[] = {
	"",
	"2026",
	"2026-11",
	"2026-1-21",
	"2026-11-1",
	"26-11-21",
	"2026/11/21",
	"2026-11-21x",
	"2026-11-21T",
	"2026-11-21T12:00Z",
	"2026-11-21T12:00:00",		/* a time needs its zone */
	"2026-11-21T12:00:00Zx",
	"2026-11-21T12:00:00 Z",
	"2026-11-21X12:00:00Z",
	"2026-11-21T12:00:00+2:00",
	"2026-11-21T12:00:00+02",
	"2026-11-21T12:00:00+0200",
	"2026-11-21T12:00:00+24:00",
	"2026-11-21T12:00:00+02:60",
	"2026-11-21T24:00:00Z",
	"2026-11-21T12:60:00Z",
	"2026-11-21T12:00:61Z",
	"2026-00-21",
	"2026-13-21",
	"2026-11-00",
	"2026-11-32",
	"1969-12-31",
	"1969-12-31T23:59:59Z",
	" 2026-11-21",
	"+202-11-21",
	"2026-11-21 ",
	"abcd-ef-gh",
	/* What sscanf and timegm would have taken. */
	"2026-02-31",			/* a day February does not have */
	"2026-02-29",			/* not a leap year */
	"2026-04-31T00:00:00Z",
	"2026-11-21T-1:00:00Z",		/* a sign where digits belong */
	"2026-11-21T 1:00:00Z",
	"2026- 1-21",
	"2026-11-21T12:00:00.Z",	/* a fraction without a digit */
	"2026-11-21T12:00:00+-1:00",
};

int
main(void)
{
	int64_t	 ms, when[] = { 0, 1, 999, NOON, NOON + 7, MIDNIGHT - 1,
		    4102444799999LL };
	char	 buf[32];
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ms = -1;
		ok(clock_parse_rfc3339(good[i].text, &ms) == 0 &&
		    ms == good[i].ms, "accepts '%s' as %lld (got %lld)",
		    good[i].text, (long long)good[i].ms, (long long)ms);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 42;
		ok(clock_parse_rfc3339(bad[i], &ms) == -1 && ms == 42,
		    "refuses '%s', leaving the result alone", bad[i]);
	}
	for (i = 0; i < sizeof(when) / sizeof(when[0]); i++) {
		clock_rfc3339(when[i], buf);
		ok(clock_parse_rfc3339(buf, &ms) == 0 && ms == when[i],
		    "reads back what clock_rfc3339() writes: %s", buf);
	}
	return tap_done();
}
