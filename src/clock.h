/* clock.h: wall-clock time for everything that dates or counts.  In a
 * build configured with --enable-test-hooks, tests may point
 * SERVICE_TEST_CLOCK_FILE at a file holding epoch milliseconds to move
 * the clock (the UTC day boundary of quotas, key expiry). */
#ifndef EVALGATE_CLOCK_H
#define EVALGATE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef EVALGATE_TEST_HOOKS
void	 clock_use_file(const char *path);	/* NULL or "": real time */
#endif
int64_t	 clock_now_ms(void);			/* wall clock, epoch ms */
int64_t	 clock_mono_us(void);			/* monotonic, for latency */
/* Formats epoch ms as RFC 3339 UTC: "2026-11-21T16:25:51.123Z". */
void	 clock_rfc3339(int64_t ms, char buf[32]);
/* Parses RFC 3339 ("2026-12-31T23:59:59Z", "+02:00" offsets, optional
 * fraction) or a bare date "YYYY-MM-DD" (midnight UTC) into epoch ms.
 * A day its month does not have (2026-02-29, 2026-04-31) is refused. */
int	 clock_parse_rfc3339(const char *s, int64_t *ms);
/* The UTC day of ms, "YYYY-MM-DD", and the ms until the next one. */
void	 clock_utc_day(int64_t ms, char buf[11]);
int64_t	 clock_ms_to_next_day(int64_t ms);

#endif
