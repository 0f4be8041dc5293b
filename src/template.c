/* template.c: a strict, bounded Mustache renderer for template versions.
 *
 * A body is parsed into a flat array of tokens: texts (pointing into the
 * body), interpolations and sections, each section holding the index of its
 * close.  Comments and delimiter changes leave no token; standalone lines
 * are trimmed while parsing.  Rendering walks the array with a context stack
 * of at most TEMPLATE_MAX_DEPTH + 1 frames, recursing once per section
 * level (so never deeper than TEMPLATE_MAX_DEPTH), into an output buffer
 * that refuses to grow past the caller's cap. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_util.h"
#include "template.h"
#include "utf8.h"

enum tok_kind {
	TOK_TEXT,
	TOK_VAR,		/* {{name}}: escaped when asked */
	TOK_RAW,		/* {{{name}}}, {{& name}}: never escaped */
	TOK_SECTION,		/* {{#name}} */
	TOK_INVERTED,		/* {{^name}} */
	TOK_CLOSE,		/* {{/name}} */
	TOK_COMMENT,		/* {{! ...}}: not stored */
	TOK_DELIM,		/* {{=<% %>=}}: not stored */
	TOK_REFUSED,		/* partials, inheritance: parse error */
	TOK__MAX
};

struct tok {
	enum tok_kind	 kind;
	size_t		 off;	/* offset in the body, for messages */
	const char	*text;	/* TOK_TEXT: borrowed from the body */
	size_t		 len;
	char		*name;	/* owned: the name, NUL, its segments each
				 * NUL-terminated; NULL for texts, closes */
	const char	*segs;	/* into name: the first segment */
	size_t		 nsegs;	/* 0 for the implicit iterator "." */
	int		 scoped;/* ".name": top frame only */
	unsigned long	 cost;	/* steps charged per key looked up, as
				 * hashing a key reads all of it */
	size_t		 end;	/* sections: index of the matching close */
};

struct tpl {
	struct buf	 b;	/* owns the tokens, with each token's name;
				 * capped at one per byte of the body */
	struct tok	*toks;	/* b.p as tokens, valid until b grows */
	size_t		 ntoks;
};

struct parser {
	const char	*body;	/* borrowed */
	size_t		 len;
	char		 otag[TEMPLATE_MAX_DELIM + 1];
	char		 ctag[TEMPLATE_MAX_DELIM + 1];
	size_t		 olen, clen;
	size_t		 open[TEMPLATE_MAX_DEPTH];	/* open sections */
	size_t		 depth;
	char		*why;	/* reason of a syntax error */
	size_t		 whylen;
};

#define PARSE_SYNTAX	(-1)
#define PARSE_NOMEM	(-2)

/* What follows the open delimiter decides the tag. */
static const struct tagdef {
	char		 sigil;
	enum tok_kind	 kind;
	const char	*closer;	/* expected just before the close delimiter */
	int		 standalone;	/* may stand alone on its line */
	const char	*refusal;
} tagdefs[] = {
	{ '#', TOK_SECTION,  "",  1, NULL },
	{ '^', TOK_INVERTED, "",  1, NULL },
	{ '/', TOK_CLOSE,    "",  1, NULL },
	{ '!', TOK_COMMENT,  "",  1, NULL },
	{ '=', TOK_DELIM,    "=", 1, NULL },
	{ '{', TOK_RAW,      "}", 0, NULL },
	{ '&', TOK_RAW,      "",  0, NULL },
	{ '>', TOK_REFUSED,  "",  0, "partials are not supported" },
	{ '<', TOK_REFUSED,  "",  0, "template inheritance is not supported" },
	{ '$', TOK_REFUSED,  "",  0, "template inheritance is not supported" },
};
static const struct tagdef vardef = { '\0', TOK_VAR, "", 0, NULL };

/* Declared variable types and the JSON types each accepts. */
static const struct vartype {
	const char	*name;
	unsigned	 mask;
} vartypes[] = {
	{ "string",  1u << json_type_string },
	{ "integer", 1u << json_type_int },
	{ "number",  1u << json_type_int | 1u << json_type_double },
	{ "boolean", 1u << json_type_boolean },
	{ "array",   1u << json_type_array },
	{ "object",  1u << json_type_object },
};

/* How a received value is named in messages. */
static const char *const jsontypes[] = {
	[json_type_null]    = "null",
	[json_type_boolean] = "boolean",
	[json_type_double]  = "number",
	[json_type_int]     = "integer",
	[json_type_object]  = "object",
	[json_type_array]   = "array",
	[json_type_string]  = "string",
};

static const char *const booleans[] = { "false", "true" };

static const char *const html[UCHAR_MAX + 1] = {
	['&']  = "&amp;",
	['<']  = "&lt;",
	['>']  = "&gt;",
	['"']  = "&quot;",
	['\''] = "&#39;",
};

static const char spaces[] = " \t\r\n\v\f";

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static int
is_space(char c)
{
	return c != '\0' && strchr(spaces, c) != NULL;
}

static size_t
line_of(const char *body, size_t off)
{
	size_t	 i, line = 1;

	for (i = 0; i < off && body[i] != '\0'; i++)
		line += body[i] == '\n';
	return line;
}

/* Where needle first occurs in hay[0..hlen), or NULL; C11 has no memmem. */
static const char *
find(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	size_t	 i;

	if (nlen == 0 || nlen > hlen)
		return NULL;
	for (i = 0; i <= hlen - nlen; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, nlen) == 0)
			return hay + i;
	return NULL;
}

static void
tpl_free(struct tpl *t)
{
	size_t	 i;

	for (i = 0; i < t->ntoks; i++)
		free(t->toks[i].name);
	buf_free(&t->b);
	t->toks = NULL;
	t->ntoks = 0;
}

/* Appends k, taking its name; on failure the name is freed.  Every token
 * takes at least one byte of the body, so the cap is never reached. */
static int
tpl_push(struct tpl *t, const struct tok *k)
{
	struct tok	*n;

	if ((n = buf_extend(&t->b, sizeof(*n), NULL)) == NULL) {
		free(k->name);
		return PARSE_NOMEM;
	}
	*n = *k;
	t->toks = (struct tok *)(void *)t->b.p;
	t->ntoks++;
	return 0;
}

static int __attribute__((format(printf, 3, 4)))
syntax(struct parser *p, size_t off, const char *fmt, ...)
{
	char	 reason[200];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(p->why, p->whylen, "line %zu: %s", line_of(p->body, off),
	    reason);
	return PARSE_SYNTAX;
}

/* Fills k's name from s[0..n): "." or segments separated by single dots,
 * optionally after one leading dot. */
static int
set_name(struct parser *p, struct tok *k, const char *s, size_t n)
{
	char	*c;
	size_t	 i;

	for (i = 0; i < n; i++)
		if (is_space(s[i]))
			return syntax(p, k->off, "name '%.*s' holds whitespace",
			    (int)(n > 64 ? 64 : n), s);
	if (n == 0)
		return syntax(p, k->off, "empty tag name");
	/* Sized by the tag in the body: checked. */
	if ((k->name = malloc(2 * n + 2)) == NULL)
		return PARSE_NOMEM;
	memcpy(k->name, s, n);
	k->name[n] = '\0';
	c = k->name + n + 1;
	k->segs = c;
	k->nsegs = 0;
	k->scoped = 0;
	k->cost = 1 + n / 32;
	if (n == 1 && s[0] == '.') {
		*c = '\0';
		return 0;
	}
	if (s[0] == '.') {
		k->scoped = 1;
		s++;
		n--;
	}
	k->nsegs = 1;
	for (i = 0; i < n; i++) {
		if (s[i] == '.' && (i == 0 || i + 1 == n || s[i + 1] == '.')) {
			free(k->name);
			k->name = NULL;
			return syntax(p, k->off, "bad dotted name '%.*s'",
			    (int)(n > 64 ? 64 : n), s);
		}
		c[i] = s[i] == '.' ? '\0' : s[i];
		k->nsegs += s[i] == '.';
	}
	c[n] = '\0';
	return 0;
}

/* {{=<% %>=}}: two delimiters separated by whitespace, each without
 * whitespace or '=' (the Mustache spec's rule). */
static int
set_delims(struct parser *p, size_t off, const char *s, size_t n)
{
	const char	*part[2];
	size_t		 plen[2], i = 0, np;

	for (np = 0; np < 3; np++) {
		while (i < n && is_space(s[i]))
			i++;
		if (i == n)
			break;
		if (np == 2)
			return syntax(p, off, "delimiter change takes two "
			    "delimiters");
		part[np] = s + i;
		while (i < n && !is_space(s[i]))
			i++;
		plen[np] = (size_t)(s + i - part[np]);
		if (plen[np] > TEMPLATE_MAX_DELIM)
			return syntax(p, off, "delimiter longer than %d bytes",
			    TEMPLATE_MAX_DELIM);
		if (memchr(part[np], '=', plen[np]) != NULL)
			return syntax(p, off, "a delimiter may not hold '='");
	}
	if (np != 2)
		return syntax(p, off, "delimiter change takes two delimiters");
	memcpy(p->otag, part[0], plen[0]);
	p->otag[plen[0]] = '\0';
	p->olen = plen[0];
	memcpy(p->ctag, part[1], plen[1]);
	p->ctag[plen[1]] = '\0';
	p->clen = plen[1];
	return 0;
}

/* Only spaces and tabs between the line start and pos, and pos is not
 * before from (the end of the previous tag). */
static int
blank_before(const char *b, size_t from, size_t pos, size_t *lstart)
{
	while (pos > from && (b[pos - 1] == ' ' || b[pos - 1] == '\t'))
		pos--;
	if (pos > 0 && b[pos - 1] != '\n')
		return 0;
	*lstart = pos;
	return 1;
}

/* Only spaces and tabs from pos to the end of the line or body; *next is
 * past the newline ("\n" or "\r\n"). */
static int
blank_after(const char *b, size_t len, size_t pos, size_t *next)
{
	while (pos < len && (b[pos] == ' ' || b[pos] == '\t'))
		pos++;
	if (pos == len)
		*next = pos;
	else if (b[pos] == '\n')
		*next = pos + 1;
	else if (b[pos] == '\r' && pos + 1 < len && b[pos + 1] == '\n')
		*next = pos + 2;
	else
		return 0;
	return 1;
}

static const struct tagdef *
tagdef_of(char c)
{
	size_t	 i;

	for (i = 0; i < NELEM(tagdefs); i++)
		if (tagdefs[i].sigil == c)
			return &tagdefs[i];
	return &vardef;
}

static int
push_text(struct tpl *t, const char *body, size_t from, size_t to)
{
	struct tok	 k;

	if (to <= from)
		return 0;
	memset(&k, 0, sizeof(k));
	k.kind = TOK_TEXT;
	k.off = from;
	k.text = body + from;
	k.len = to - from;
	return tpl_push(t, &k);
}

/* One named tag (interpolation, section, inverted, close) with its name
 * in s[0..n), already trimmed. */
static int
push_named(struct parser *p, struct tpl *t, enum tok_kind kind, size_t off,
    const char *s, size_t n)
{
	struct tok	 k, *open;
	int		 rc;

	memset(&k, 0, sizeof(k));
	k.kind = kind;
	k.off = off;
	if (kind == TOK_CLOSE) {
		if (p->depth == 0)
			return syntax(p, off, "close of '%.*s' without an open "
			    "section", (int)(n > 64 ? 64 : n), s);
		open = &t->toks[p->open[p->depth - 1]];
		if (strlen(open->name) != n || memcmp(open->name, s, n) != 0)
			return syntax(p, off, "'%.*s' closes section '%.64s'",
			    (int)(n > 64 ? 64 : n), s, open->name);
		open->end = t->ntoks;
		p->depth--;
		return tpl_push(t, &k);
	}
	if ((rc = set_name(p, &k, s, n)) != 0)
		return rc;
	if (kind == TOK_SECTION || kind == TOK_INVERTED) {
		if (p->depth == TEMPLATE_MAX_DEPTH) {
			free(k.name);
			return syntax(p, off, "sections nested deeper than %d",
			    TEMPLATE_MAX_DEPTH);
		}
		p->open[p->depth++] = t->ntoks;
	}
	return tpl_push(t, &k);
}

/* Parses p->body into t.  Returns 0, PARSE_SYNTAX (p->why set) or
 * PARSE_NOMEM; t is to be freed by the caller in every case. */
static int
parse(struct parser *p, struct tpl *t)
{
	const struct tagdef	*d;
	const char		*o, *c, *s;
	char			 needle[2 + TEMPLATE_MAX_DELIM];
	size_t			 pos = 0, text = 0, tag, cstart, cend, after;
	size_t			 lstart, next, nlen, n;
	int			 alone, rc;

	while ((o = find(p->body + pos, p->len - pos, p->otag, p->olen))
	    != NULL) {
		tag = (size_t)(o - p->body);
		cstart = tag + p->olen;
		d = tagdef_of(p->body[cstart]);
		if (d != &vardef)
			cstart++;
		nlen = strlen(d->closer);
		memcpy(needle, d->closer, nlen);
		memcpy(needle + nlen, p->ctag, p->clen);
		nlen += p->clen;
		if (cstart > p->len || (c = find(p->body + cstart,
		    p->len - cstart, needle, nlen)) == NULL)
			return syntax(p, tag, "unclosed tag");
		cend = (size_t)(c - p->body);
		after = cend + nlen;
		if (d->kind == TOK_REFUSED)
			return syntax(p, tag, "%s", d->refusal);

		alone = d->standalone &&
		    blank_before(p->body, text, tag, &lstart) &&
		    blank_after(p->body, p->len, after, &next);
		if ((rc = push_text(t, p->body, text,
		    alone ? lstart : tag)) != 0)
			return rc;
		pos = text = alone ? next : after;

		/* The tag's content, trimmed. */
		s = p->body + cstart;
		n = cend - cstart;
		if (d->kind == TOK_COMMENT)
			continue;
		if (d->kind == TOK_DELIM) {
			if ((rc = set_delims(p, tag, s, n)) != 0)
				return rc;
			continue;
		}
		while (n > 0 && is_space(*s)) {
			s++;
			n--;
		}
		while (n > 0 && is_space(s[n - 1]))
			n--;
		if ((rc = push_named(p, t, d->kind, tag, s, n)) != 0)
			return rc;
	}
	if ((rc = push_text(t, p->body, text, p->len)) != 0)
		return rc;
	if (p->depth > 0)
		return syntax(p, t->toks[p->open[p->depth - 1]].off,
		    "unclosed section '%.64s'",
		    t->toks[p->open[p->depth - 1]].name);
	return 0;
}

static int
tpl_parse(const char *body, struct tpl *t, char *why, size_t whylen)
{
	struct parser	 p;

	memset(&p, 0, sizeof(p));
	p.body = body;
	p.len = strlen(body);
	memset(t, 0, sizeof(*t));
	buf_init(&t->b, p.len < SIZE_MAX / sizeof(struct tok) - 1 ?
	    (p.len + 1) * sizeof(struct tok) : SIZE_MAX);
	memcpy(p.otag, "{{", 3);
	memcpy(p.ctag, "}}", 3);
	p.olen = p.clen = 2;
	p.why = why;
	p.whylen = whylen;
	return parse(&p, t);
}

/* The first name looked up in the root context alone (outside every
 * section; an inverted section pushes no context) and not declared, or
 * NULL. */
static const struct tok *
undeclared(const struct tpl *t, json_object *decl)
{
	const struct tok	*k;
	size_t			 i, depth = 0, pushed = 0;
	unsigned char		 pushes[TEMPLATE_MAX_DEPTH];	/* per open */

	for (i = 0; i < t->ntoks; i++) {
		k = &t->toks[i];
		switch (k->kind) {
		case TOK_VAR:
		case TOK_RAW:
		case TOK_SECTION:
		case TOK_INVERTED:
			if (pushed == 0 && k->nsegs > 0 &&
			    !json_object_object_get_ex(decl, k->segs, NULL))
				return k;
			if (k->kind == TOK_VAR || k->kind == TOK_RAW)
				break;
			pushes[depth] = k->kind == TOK_SECTION;
			pushed += pushes[depth++];
			break;
		case TOK_CLOSE:
			pushed -= pushes[--depth];
			break;
		default:
			break;
		}
	}
	return NULL;
}

static const struct vartype *
vartype_of(const char *name)
{
	size_t	 i;

	for (i = 0; i < NELEM(vartypes); i++)
		if (strcmp(vartypes[i].name, name) == 0)
			return &vartypes[i];
	return NULL;
}

static const char *
jsontype_of(json_object *v)
{
	enum json_type	 t = json_object_get_type(v);

	return (size_t)t < NELEM(jsontypes) && jsontypes[t] != NULL ?
	    jsontypes[t] : "unknown";
}

/* Checks the declaration; on failure fills why and *var (a key of decl,
 * or NULL). */
static int
decl_check(json_object *decl, char *why, size_t whylen, const char **var)
{
	struct json_object_iterator	 it, end;
	const char			*name, *c;
	json_object			*type;

	*var = NULL;
	if (!json_object_is_type(decl, json_type_object)) {
		snprintf(why, whylen, "must be an object of variable types");
		return -1;
	}
	it = json_object_iter_begin(decl);
	end = json_object_iter_end(decl);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		type = json_object_iter_peek_value(&it);
		*var = name;
		if (*name == '\0') {
			snprintf(why, whylen, "empty variable name");
			return -1;
		}
		for (c = name; *c != '\0'; c++)
			if (*c == '.' || is_space(*c)) {
				snprintf(why, whylen, "variable '%.64s': name "
				    "holds '.' or whitespace", name);
				return -1;
			}
		if (!json_object_is_type(type, json_type_string) ||
		    vartype_of(json_object_get_string(type)) == NULL) {
			snprintf(why, whylen, "variable '%.64s': type is not "
			    "one of string, integer, number, boolean, array, "
			    "object", name);
			return -1;
		}
	}
	*var = NULL;
	return 0;
}

int
template_check(const char *body, json_object *decl, struct error *e)
{
	struct tpl		 t;
	const struct tok	*k;
	const char		*var;
	char			 why[256];
	int			 rc;

	if (decl_check(decl, why, sizeof(why), &var) == -1) {
		error_set(e, ERR_VALIDATION, "variables", "%s", why);
		if (var != NULL)
			error_detail(e, "variable", ju_string(var));
		return -1;
	}
	if (body == NULL)
		return error_set(e, ERR_VALIDATION, "body", "missing");
	if ((rc = tpl_parse(body, &t, why, sizeof(why))) != 0) {
		tpl_free(&t);
		if (rc == PARSE_NOMEM)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
		return error_set(e, ERR_VALIDATION, "body", "%s", why);
	}
	if ((k = undeclared(&t, decl)) != NULL) {
		error_set(e, ERR_VALIDATION, "body",
		    "line %zu: undeclared variable '%.64s'",
		    line_of(body, k->off), k->segs);
		error_detail(e, "variable", ju_string(k->segs));
		tpl_free(&t);
		return -1;
	}
	tpl_free(&t);
	return 0;
}

/* Rendering. */

enum render_status {
	R_OK,
	R_OVER,		/* output over the cap */
	R_COSTLY,	/* over TEMPLATE_MAX_STEPS */
	R_NOMEM,
	R__MAX
};

struct render {
	const struct tpl	*t;
	json_object		*ctx[TEMPLATE_MAX_DEPTH + 1];	/* borrowed */
	size_t			 nctx;
	int			 escape;
	unsigned long		 steps;
	size_t			 level;	/* render_range() calls open */
	const struct tok	*top;	/* the root-level tag being rendered,
					 * NULL while in root-level text */
	struct buf		 out;	/* capped at max_chars * 4 bytes */
	size_t			 chars, max_chars;
	enum render_status	 status;
};

static int
fail(struct render *r, enum render_status status)
{
	r->status = status;
	return -1;
}

/* Appends s[0..n), counting code points; refuses to pass max_chars
 * or the output's cap in bytes. */
static int
put(struct render *r, const char *s, size_t n)
{
	size_t	 cp = utf8_count(s, n);

	if (cp > r->max_chars - r->chars)
		return fail(r, R_OVER);
	switch (buf_add(&r->out, s, n)) {
	case BUF_OK:
		r->chars += cp;
		return 0;
	case BUF_TOO_LARGE:
		return fail(r, R_OVER);
	default:
		return fail(r, R_NOMEM);
	}
}

static int
put_escaped(struct render *r, const char *s, size_t n)
{
	const char	*entity;
	size_t		 i, run = 0;

	for (i = 0; i < n; i++) {
		if ((entity = html[(unsigned char)s[i]]) == NULL)
			continue;
		if (put(r, s + run, i - run) == -1 ||
		    put(r, entity, strlen(entity)) == -1)
			return -1;
		run = i + 1;
	}
	return put(r, s + run, n - run);
}

static int
charge(struct render *r, unsigned long steps)
{
	if ((r->steps += steps) > TEMPLATE_MAX_STEPS)
		return fail(r, R_COSTLY);
	return 0;
}

static int
step(struct render *r)
{
	return charge(r, 1);
}

/* Shortest "%.*g" that reads back as d. */
static void
format_double(double d, char *buf, size_t sz)
{
	int	 prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sz, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

/* Member key of o, charging the lookup of k's name to the work bound. */
static int
get(struct render *r, const struct tok *k, json_object *o, const char *key,
    json_object **v)
{
	if (charge(r, k->cost) == -1)
		return -1;
	return json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, key, v);
}

/* The value k names into *v, NULL for null and for a miss.  Returns 0,
 * or -1 past the work bound. */
static int
lookup(struct render *r, const struct tok *k, json_object **v)
{
	const char	*seg = k->segs;
	size_t		 i;
	int		 rc = 0;

	*v = NULL;
	if (k->nsegs == 0) {
		*v = r->ctx[r->nctx - 1];
		return 0;
	}
	if (k->scoped)
		rc = get(r, k, r->ctx[r->nctx - 1], seg, v);
	else
		for (i = r->nctx; i > 0 && rc == 0; i--)
			rc = get(r, k, r->ctx[i - 1], seg, v);
	for (i = 1; i < k->nsegs && rc == 1; i++) {
		seg += strlen(seg) + 1;
		rc = get(r, k, *v, seg, v);
	}
	if (rc == 0)
		*v = NULL;
	return rc == -1 ? -1 : 0;
}

static int
falsy(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return 1;
	case json_type_boolean:
		return !json_object_get_boolean(v);
	case json_type_array:
		return json_object_array_length(v) == 0;
	default:
		return 0;
	}
}

static int
interpolate(struct render *r, const struct tok *k)
{
	json_object	*v;
	const char	*s;
	char		 num[40];
	size_t		 n;

	if (lookup(r, k, &v) == -1)
		return -1;
	switch (json_object_get_type(v)) {
	case json_type_null:
		return 0;
	case json_type_boolean:
		s = booleans[json_object_get_boolean(v) != 0];
		n = strlen(s);
		break;
	case json_type_double:
		format_double(json_object_get_double(v), num, sizeof(num));
		s = num;
		n = strlen(s);
		break;
	case json_type_string:
		s = json_object_get_string(v);
		n = (size_t)json_object_get_string_len(v);
		break;
	default:	/* integers, objects, arrays: their JSON text */
		s = json_object_to_json_string_length(v,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &n);
		if (s == NULL)
			return fail(r, R_NOMEM);
		break;
	}
	if (r->escape && k->kind == TOK_VAR)
		return put_escaped(r, s, n);
	return put(r, s, n);
}

static int	render_range(struct render *, size_t, size_t);

/* Renders toks[from..to) with v on top of the context stack. */
static int
render_with(struct render *r, json_object *v, size_t from, size_t to)
{
	int	 rc;

	if (r->nctx == NELEM(r->ctx))
		return fail(r, R_COSTLY);	/* not reached: parse bounds */
	r->ctx[r->nctx++] = v;
	rc = render_range(r, from, to);
	r->nctx--;
	return rc;
}

static int
section(struct render *r, const struct tok *k, size_t i)
{
	json_object	*v;
	size_t		 j, n;

	if (lookup(r, k, &v) == -1)
		return -1;
	if (falsy(v))
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return render_with(r, v, i + 1, k->end);
	n = json_object_array_length(v);
	for (j = 0; j < n; j++)
		if (step(r) == -1 || render_with(r,
		    json_object_array_get_idx(v, j), i + 1, k->end) == -1)
			return -1;
	return 0;
}

/* Renders toks[from..to); sections recurse, at most TEMPLATE_MAX_DEPTH. */
static int
render_range(struct render *r, size_t from, size_t to)
{
	const struct tok	*k;
	json_object		*v;
	size_t			 i = from;
	int			 rc = 0;

	r->level++;
	while (i < to && rc == 0) {
		k = &r->t->toks[i];
		if (r->level == 1)
			r->top = k->kind == TOK_TEXT ? NULL : k;
		if ((rc = step(r)) == -1)
			break;
		switch (k->kind) {
		case TOK_TEXT:
			rc = put(r, k->text, k->len);
			i++;
			break;
		case TOK_VAR:
		case TOK_RAW:
			rc = interpolate(r, k);
			i++;
			break;
		case TOK_SECTION:
			rc = section(r, k, i);
			i = k->end + 1;
			break;
		case TOK_INVERTED:
			if ((rc = lookup(r, k, &v)) == 0 && falsy(v))
				rc = render_range(r, i + 1, k->end);
			i = k->end + 1;
			break;
		default:
			i++;
			break;
		}
	}
	r->level--;
	return rc;
}

/* ERR_TEMPLATE_RENDER with details {"variable": variable or null,
 * "reason": reason}. */
static int
render_error(struct error *e, const char *variable, const char *reason)
{
	if (variable != NULL)
		error_set(e, ERR_TEMPLATE_RENDER, NULL, "variable '%.64s': %s",
		    variable, reason);
	else
		error_set(e, ERR_TEMPLATE_RENDER, NULL, "%s", reason);
	error_detail(e, "variable",
	    variable != NULL ? ju_string(variable) : NULL);
	error_detail(e, "reason", ju_string(reason));
	return -1;
}

/* Every declared variable present and of its type; the root context holds
 * them and nothing else. */
static int
bind_values(json_object *decl, json_object *values, json_object **root,
    struct error *e)
{
	struct json_object_iterator	 it, end;
	const struct vartype		*vt;
	const char			*name;
	json_object			*v;
	char				 why[128];

	*root = NULL;
	it = json_object_iter_begin(decl);
	end = json_object_iter_end(decl);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		vt = vartype_of(json_object_get_string(
		    json_object_iter_peek_value(&it)));
		if (!json_object_object_get_ex(values, name, &v))
			return render_error(e, name, "missing");
		if ((vt->mask & 1u << json_object_get_type(v)) == 0) {
			snprintf(why, sizeof(why), "expected %s, got %s",
			    vt->name, jsontype_of(v));
			return render_error(e, name, why);
		}
	}
	*root = ju_obj();
	it = json_object_iter_begin(decl);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		json_object_object_get_ex(values, name, &v);
		ju_add(*root, name, json_object_get(v));
	}
	return 0;
}

int
template_render(const char *body, json_object *decl, json_object *values,
    int escape_html, size_t max_chars, char **out, size_t *outlen,
    struct error *e)
{
	struct render		 r;
	struct tpl		 t;
	const struct tok	*k;
	json_object		*root;
	const char		*var, *culprit;
	char			 why[256];
	int			 rc;

	*out = NULL;
	if (outlen != NULL)
		*outlen = 0;
	if (decl_check(decl, why, sizeof(why), &var) == -1)
		return render_error(e, var, why);
	if (!json_object_is_type(values, json_type_object))
		return render_error(e, NULL, "variables must be an object");
	if (body == NULL)
		return render_error(e, NULL, "template body missing");
	if (bind_values(decl, values, &root, e) == -1)
		return -1;
	if ((rc = tpl_parse(body, &t, why, sizeof(why))) != 0) {
		tpl_free(&t);
		json_object_put(root);
		if (rc == PARSE_NOMEM)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
		return render_error(e, NULL, why);
	}
	if ((k = undeclared(&t, decl)) != NULL) {
		rc = render_error(e, k->segs, "not declared");
		tpl_free(&t);
		json_object_put(root);
		return rc;
	}

	memset(&r, 0, sizeof(r));
	r.t = &t;
	r.ctx[r.nctx++] = root;
	r.escape = escape_html != 0;
	r.max_chars = max_chars;
	buf_init(&r.out, max_chars > (SIZE_MAX - 1) / 4 ? SIZE_MAX - 1 :
	    max_chars * 4);
	if (render_range(&r, 0, t.ntoks) == 0 &&
	    (*out = buf_take(&r.out, outlen)) == NULL)
		r.status = R_NOMEM;
	culprit = r.top != NULL && r.top->nsegs > 0 ? r.top->segs : NULL;

	switch (r.status) {
	case R_OK:
		rc = 0;
		break;
	case R_OVER:
		snprintf(why, sizeof(why), "rendered text over %zu characters",
		    max_chars);
		rc = render_error(e, culprit, why);
		break;
	case R_COSTLY:
		snprintf(why, sizeof(why), "rendering takes over %d steps",
		    TEMPLATE_MAX_STEPS);
		rc = render_error(e, culprit, why);
		break;
	default:
		rc = error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		break;
	}
	buf_free(&r.out);
	tpl_free(&t);
	json_object_put(root);
	return rc;
}
