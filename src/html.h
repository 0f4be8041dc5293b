/* html.h: writing text into HTML.  The one escaping function every page
 * the gateway renders uses for every value that is not its own markup
 * (the calibration and comparison reports).  Pure: writes only to the
 * stream it is given. */
#ifndef EVALGATE_HTML_H
#define EVALGATE_HTML_H

#include <stdio.h>

/* Writes s (borrowed, NUL-terminated) to f with &, <, >, " and '
 * written as entities: safe as text and inside a quoted attribute. */
void	html_escape(FILE *f, const char *s);

#endif
