/* html.c: writing text into HTML (html.h). */
#include "config.h"

#include <stdio.h>

#include "html.h"

void
html_escape(FILE *f, const char *s)
{
	static const char *const entity[256] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
		['"'] = "&quot;", ['\''] = "&#39;",
	};
	const char	*x;

	for (; *s != '\0'; s++)
		if ((x = entity[(unsigned char)*s]) != NULL)
			fputs(x, f);
		else
			fputc(*s, f);
}
