/* log_test.c: TAP tests of the repetition step of src/log.c: the first
 * of identical lines is written, the rest counted, the count written
 * every LOG_REPEAT_S seconds, and a different line first settles the
 * count owed for the previous one; and the access log's logfmt pairs
 * (log_kv): quoted when needed, escaped, never cut in half. */
#include "config.h"

#include "log.h"
#include "tap.h"

#define S	1000000LL	/* microseconds */

int
main(void)
{
	struct log_repeat	 r = { "", 0, 0 };
	long			 owed, count, i, skipped = 0;

	ok(log_repeat_step(&r, "warning: disk full", 0, &owed, &count) ==
	    LOG_WRITE && owed == 0, "the first line is written");
	for (i = 1; i <= 1000; i++)
		skipped += log_repeat_step(&r, "warning: disk full", i * 1000,
		    &owed, &count) == LOG_SKIP;
	ok(skipped == 1000, "1000 repeats within a second are not written");
	ok(log_repeat_step(&r, "warning: disk full", LOG_REPEAT_S * S,
	    &owed, &count) == LOG_COUNT && count == 1001,
	    "after LOG_REPEAT_S the count is written");
	ok(log_repeat_step(&r, "warning: disk full", LOG_REPEAT_S * S + 1,
	    &owed, &count) == LOG_SKIP, "and counting starts again");
	ok(log_repeat_step(&r, "warning: disk full", LOG_REPEAT_S * S + 2,
	    &owed, &count) == LOG_SKIP, "still counting");
	ok(log_repeat_step(&r, "warning: database locked",
	    LOG_REPEAT_S * S + 3, &owed, &count) == LOG_WRITE && owed == 2,
	    "a different line is written, owing the 2 counted");
	ok(log_repeat_step(&r, "warning: disk full", LOG_REPEAT_S * S + 4,
	    &owed, &count) == LOG_WRITE && owed == 0,
	    "a line seen two lines ago is written again, nothing owed");
	ok(log_repeat_step(&r, "info: disk full", LOG_REPEAT_S * S + 5,
	    &owed, &count) == LOG_WRITE, "the level is part of the line");

	{
		char	 line[64] = "";

		log_kv(line, sizeof(line), "route", "/v1/systemone");
		log_kv(line, sizeof(line), "app", "");
		is_str(line, " route=/v1/systemone app=\"\"",
		    "logfmt: plain values bare, an empty one quoted");
		line[0] = '\0';
		log_kv(line, sizeof(line), "app", "a b=\"c\\\n\x01");
		is_str(line, " app=\"a b=\\\"c\\\\\\n\\x01\"",
		    "space, '=', quote, backslash, control: quoted, escaped");
		line[0] = '\0';
		log_kv(line, sizeof(line), "status", "200");
		log_kv(line, sizeof(line), "app",
		    "a value far too long to fit what is left of the line");
		is_str(line, " status=200", "a pair that does not fit is "
		    "left out whole");
	}
	return tap_done();
}
