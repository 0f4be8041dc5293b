/* clock.c: wall and monotonic time, RFC 3339 formatting and parsing. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#ifdef EVALGATE_TEST_HOOKS
static char clock_file[4096];	/* "" = real time */

void
clock_use_file(const char *path)
{
	snprintf(clock_file, sizeof(clock_file), "%s", path ? path : "");
}

/* The time in the clock file: 1, or 0 for none (real time). */
static int
clock_from_file(int64_t *ms)
{
	FILE		*f;
	long long	 v;
	int		 n;

	if (clock_file[0] == '\0' || (f = fopen(clock_file, "r")) == NULL)
		return 0;
	n = fscanf(f, "%lld", &v);
	fclose(f);
	if (n != 1)
		return 0;
	*ms = v;
	return 1;
}
#endif

int64_t
clock_now_ms(void)
{
	struct timespec	 ts;
#ifdef EVALGATE_TEST_HOOKS
	int64_t		 ms;

	if (clock_from_file(&ms))
		return ms;
#endif
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
utc(int64_t ms, struct tm *tm)
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);

	gmtime_r(&t, tm);
}

void
clock_rfc3339(int64_t ms, char buf[32])
{
	struct tm	tm;
	char		date[24];

	utc(ms, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 32, "%.19s.%03dZ", date,
	    (int)(((ms % 1000) + 1000) % 1000));
}

void
clock_utc_day(int64_t ms, char buf[11])
{
	struct tm	tm;

	utc(ms, &tm);
	strftime(buf, 11, "%Y-%m-%d", &tm);
}

int64_t
clock_ms_to_next_day(int64_t ms)
{
	const int64_t day = 86400000;

	return day - (((ms % day) + day) % day);
}

/* Whether s begins with shape: 'd' a digit, anything else itself. */
static int
shaped(const char *s, const char *shape)
{
	for (; *shape != '\0'; s++, shape++)
		if (*shape == 'd' ? *s < '0' || *s > '9' : *s != *shape)
			return 0;
	return 1;
}

static int
days_in_month(int y, int mo)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[mo - 1] + (mo == 2 && leap);
}

int
clock_parse_rfc3339(const char *s, int64_t *ms)
{
	struct tm	 tm;
	int		 y, mo, d, h = 0, mi = 0, sec = 0, n = 0, oh, om;
	long		 frac = 0, scale = 1;
	char		 sign;
	int64_t		 offset = 0;
	time_t		 t;

	memset(&tm, 0, sizeof(tm));
	/* sscanf's %2d would take a sign or a space: the digits are
	 * checked first. */
	if (!shaped(s, "dddd-dd-dd") ||
	    sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -1;
	s += n;
	if (*s != '\0') {
		if ((*s != 'T' && *s != 't' && *s != ' ') ||
		    !shaped(s + 1, "dd:dd:dd") ||
		    sscanf(s + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) != 3 ||
		    n != 8)
			return -1;
		s += 1 + n;
		if (*s == '.' && !shaped(s + 1, "d"))
			return -1;	/* a fraction needs a digit */
		if (*s == '.') {
			for (s++; *s >= '0' && *s <= '9'; s++)
				if (scale < 1000) {
					frac = frac * 10 + (*s - '0');
					scale *= 10;
				}
			while (scale < 1000) {
				frac *= 10;
				scale *= 10;
			}
		}
		if (*s == 'Z' || *s == 'z')
			s++;
		else if ((*s == '+' || *s == '-') && shaped(s + 1, "dd:dd") &&
		    sscanf(s, "%c%2d:%2d%n", &sign, &oh, &om, &n) == 3 &&
		    n == 6 && oh < 24 && om < 60) {
			offset = ((int64_t)oh * 60 + om) * 60000;
			if (sign == '-')
				offset = -offset;
			s += n;
		} else
			return -1;
		if (*s != '\0')
			return -1;
	}
	/* A day the month does not have is refused, not rolled over into
	 * the next month as timegm() would. */
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) ||
	    h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -1;
	*ms = (int64_t)t * 1000 + frac - offset;
	return 0;
}
