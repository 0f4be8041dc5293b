/* xalloc.h: allocations that do not fail, for the out-of-memory policy
 * of README.md ("Hacking").
 *
 * Memory sized by input (a body, a growing buffer, a report's rows,
 * argon2id's) is checked where it is allocated and refused with 503
 * service_unavailable and Retry-After.  Small fixed-size allocations go
 * through these (and the json-c constructors of json_util.h): if one
 * fails, the process writes one line to the error log and ends, like
 * redis's zmalloc OOM handler.  The web server starts another worker
 * and nothing acknowledged is lost, as a decision is committed before
 * it is answered.  Never use them for memory sized by input. */
#ifndef EVALGATE_XALLOC_H
#define EVALGATE_XALLOC_H

#include <stddef.h>

/* Ends the process (_exit(1)) with one line naming what was wanted. */
void	 xoom(const char *what) __attribute__((noreturn));
/* malloc() of n bytes (n > 0) the caller frees. */
void	*xmalloc(size_t n);
/* strdup() the caller frees. */
char	*xstrdup(const char *s);
/* asprintf() the caller frees. */
char	*xasprintf(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

#endif
