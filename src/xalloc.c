/* xalloc.c: allocations that do not fail: the process ends instead
 * (see xalloc.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

/* One line as log.c writes them, without stdio's buffers. */
void
xoom(const char *what)
{
	char	 line[200];
	int	 n;

	n = snprintf(line, sizeof(line), "evalgate[%ld]: warning: out of "
	    "memory (%s): the process ends\n", (long)getpid(), what);
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ?
		    (size_t)n : sizeof(line) - 1);
	_exit(1);
}

void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n)) == NULL)
		xoom("malloc");
	return p;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		xoom("strdup");
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;
	int	 rc;

	va_start(ap, fmt);
	rc = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (rc == -1)
		xoom("asprintf");
	return p;
}
