/* log.h: one-line messages to stderr, which the web server keeps in its
 * error log (lighttpd: server.breakagelog; Apache: ErrorLog).  Never pass
 * a key, a secret or a state to these.
 *
 * A warning identical to the one before is not written again: the first
 * is written, then, while it repeats, one line every LOG_REPEAT_S seconds
 * saying how many times it came since (a full disk would otherwise write
 * thousands of lines a second).  A different warning first writes the
 * count still owed for the previous one.  Info lines each mark one event
 * (an argon2id run) and are all written. */
#ifndef EVALGATE_LOG_H
#define EVALGATE_LOG_H

#include <stddef.h>
#include <stdint.h>

#define LOG_LINE_MAX	1024	/* bytes of a message; longer is cut */
#define LOG_REPEAT_S	10	/* a repeated line is counted this long */

void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The access log (SERVICE_ACCESS_LOG=1): "evalgate[PID]: access: "
 * and line, a request's logfmt fields (log_kv()).  Every line is
 * written: one per request, never counted like repeated warnings
 * (doc/design.md, section 18.2). */
void	log_access(const char *line);
/* Appends " key=value" to the NUL-terminated line (size bytes), logfmt:
 * the value in double quotes, with backslash, double quote and control
 * characters escaped (\\, \", \n, \t, \xNN), when it is empty or holds
 * one of those, a space or '='.  A pair that does not fit is left out
 * whole.  Pure, for the unit test. */
void	log_kv(char *line, size_t size, const char *key, const char *value);

/* The repetition state of one process, and its step, pure for the unit
 * test.  Given the next message (level and text) at now_us (monotonic),
 * says what to write: *owed > 0 first asks for a line saying the
 * previous message came *owed more times; then LOG_WRITE the message,
 * LOG_COUNT the message with the count in *count, or LOG_SKIP nothing. */
struct log_repeat {
	char	 last[LOG_LINE_MAX + 16];	/* "level: text" written */
	long	 count;		/* times it came since, not written */
	int64_t	 since_us;	/* when it or its count was written */
};
enum log_step { LOG_WRITE, LOG_COUNT, LOG_SKIP };
enum log_step log_repeat_step(struct log_repeat *r, const char *line,
	    int64_t now_us, long *owed, long *count);

#endif
