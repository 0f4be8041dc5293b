/* html.h: writing HTML text safely.  html_esc() is the one function that
 * escapes a value for HTML (text and quoted attributes alike); every
 * value the operator's console (handler_console*.c) and the calibration
 * page (calibration_render.c) write goes through it, directly or through
 * html_printf()'s conversions.  Pure: writes only to the FILE it is
 * given. */
#ifndef EVALGATE_HTML_H
#define EVALGATE_HTML_H

#include <stdint.h>
#include <stdio.h>

/* Writes s with & < > " ' as character references; NULL writes
 * nothing. */
void	html_esc(FILE *f, const char *s);

/* Writes fmt, whose literal text is the caller's markup, with these
 * conversions (and no others; an unknown one is written as it is):
 *	%s	a string (const char *), escaped by html_esc(); NULL is ""
 *	%u	a string percent-encoded as one URI component, then escaped
 *		(for a path segment or a query value in an href)
 *	%d	an int
 *	%D	an int64_t
 *	%f	a double, "%.3f" ("-" when it is not finite)
 *	%%	a '%'
 * No string reaches the page unescaped, so a name, an id or a state
 * chosen by a client cannot open a tag or leave an attribute. */
void	html_printf(FILE *f, const char *fmt, ...);

/* Writes s percent-encoded as one URI component (RFC 3986 unreserved
 * characters as they are, every other byte as %XX): safe as it is in
 * HTML text and attributes. */
void	html_uri_component(FILE *f, const char *s);

#endif
