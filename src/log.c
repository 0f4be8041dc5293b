/* log.c: one line per message, prefixed with the program and pid, with
 * repeated lines counted instead of written (see log.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static struct log_repeat repeat;	/* this process's last line */

enum log_step
log_repeat_step(struct log_repeat *r, const char *line, int64_t now_us,
    long *owed, long *count)
{
	*owed = *count = 0;
	if (strcmp(line, r->last) == 0) {
		r->count++;
		if (now_us - r->since_us < (int64_t)LOG_REPEAT_S * 1000000)
			return LOG_SKIP;
		*count = r->count;
		r->count = 0;
		r->since_us = now_us;
		return LOG_COUNT;
	}
	*owed = r->count;
	snprintf(r->last, sizeof(r->last), "%s", line);
	r->count = 0;
	r->since_us = now_us;
	return LOG_WRITE;
}

/* Writes one message; a warning identical to the one before is counted
 * instead (info lines each mark one event, and are all written). */
static void __attribute__((format(printf, 3, 0)))
log_line(const char *level, int counted, const char *fmt, va_list ap)
{
	struct timespec	 ts;
	char		 text[LOG_LINE_MAX], line[sizeof(repeat.last)];
	long		 pid = (long)getpid(), owed, count;
	enum log_step	 step;

	vsnprintf(text, sizeof(text), fmt, ap);
	snprintf(line, sizeof(line), "%s: %s", level, text);
	if (!counted) {
		fprintf(stderr, "evalgate[%ld]: %s\n", pid, line);
		fflush(stderr);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	step = log_repeat_step(&repeat, line, (int64_t)ts.tv_sec * 1000000 +
	    ts.tv_nsec / 1000, &owed, &count);
	if (owed > 0)
		fprintf(stderr, "evalgate[%ld]: the line before came %ld more "
		    "time%s\n", pid, owed, owed == 1 ? "" : "s");
	if (step == LOG_WRITE)
		fprintf(stderr, "evalgate[%ld]: %s\n", pid, line);
	else if (step == LOG_COUNT)
		fprintf(stderr, "evalgate[%ld]: %s (%ld more times in the "
		    "last %d s)\n", pid, line, count, LOG_REPEAT_S);
	fflush(stderr);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("info", 0, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("warning", 1, fmt, ap);
	va_end(ap);
}

void
log_access(const char *line)
{
	fprintf(stderr, "evalgate[%ld]: access:%s\n", (long)getpid(), line);
	fflush(stderr);
}

void
log_kv(char *line, size_t size, const char *key, const char *value)
{
	size_t		 len = strlen(line), at;
	const char	*p;
	int		 quote = *value == '\0', n;

	for (p = value; *p != '\0' && !quote; p++)
		quote = *p == ' ' || *p == '=' || *p == '"' || *p == '\\' ||
		    (unsigned char)*p < 0x20 || *p == 0x7f;
	n = snprintf(line + len, size - len, " %s=%s", key, quote ? "\"" : "");
	if (n < 0 || (size_t)n >= size - len)
		goto cut;
	at = len + (size_t)n;
	for (p = value; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			n = snprintf(line + at, size - at, "\\%c", *p);
		else if (*p == '\n')
			n = snprintf(line + at, size - at, "\\n");
		else if (*p == '\t')
			n = snprintf(line + at, size - at, "\\t");
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			n = snprintf(line + at, size - at, "\\x%02x",
			    (unsigned char)*p);
		else
			n = snprintf(line + at, size - at, "%c", *p);
		if (n < 0 || (size_t)n >= size - at)
			goto cut;
		at += (size_t)n;
	}
	if (!quote || (size_t)snprintf(line + at, size - at, "\"") <
	    size - at)
		return;
cut:
	line[len] = '\0';
}
