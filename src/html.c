/* html.c: the one HTML escaper and the formatter built on it (see
 * html.h). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "html.h"

/* The characters escaped, and their references. */
static const struct {
	char		 c;
	const char	*ref;
} refs[] = {
	{ '&', "&amp;" },
	{ '<', "&lt;" },
	{ '>', "&gt;" },
	{ '"', "&quot;" },
	{ '\'', "&#39;" },
};
#define NREFS (sizeof(refs) / sizeof(refs[0]))

void
html_esc(FILE *f, const char *s)
{
	size_t i, n;

	if (s == NULL)
		return;
	while (*s != '\0') {
		n = strcspn(s, "&<>\"'");
		fwrite(s, 1, n, f);
		if (s[n] == '\0')
			break;
		for (i = 0; i < NREFS; i++)
			if (refs[i].c == s[n])
				fputs(refs[i].ref, f);
		s += n + 1;
	}
}

void
html_uri_component(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	if (s == NULL)
		return;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			fputc(*p, f);
		else
			fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
}

void
html_printf(FILE *f, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;
	double	 d;

	va_start(ap, fmt);
	while (*fmt != '\0') {
		n = strcspn(fmt, "%");
		fwrite(fmt, 1, n, f);
		fmt += n;
		if (*fmt == '\0')
			break;
		switch (fmt[1]) {
		case 's':
			html_esc(f, va_arg(ap, const char *));
			break;
		case 'u':
			html_uri_component(f, va_arg(ap, const char *));
			break;
		case 'd':
			fprintf(f, "%d", va_arg(ap, int));
			break;
		case 'D':
			fprintf(f, "%lld", (long long)va_arg(ap, int64_t));
			break;
		case 'f':
			d = va_arg(ap, double);
			if (isfinite(d))
				fprintf(f, "%.3f", d);
			else
				fputc('-', f);
			break;
		case '%':
			fputc('%', f);
			break;
		default:
			/* Not a conversion: the '%' as it is. */
			fputc('%', f);
			fmt += 1;
			continue;
		}
		fmt += 2;
	}
	va_end(ap);
}
