/* log.c: one line per message, prefixed with the program and pid. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

static void
log_line(const char *level, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "evalgate[%ld]: %s: %s\n", (long)getpid(), level,
	    line);
	fflush(stderr);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("warning", fmt, ap);
	va_end(ap);
}
