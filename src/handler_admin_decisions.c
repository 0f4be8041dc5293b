/* handler_admin_decisions.c: an application's decisions for operators
 * (doc/admin-api.md).
 *
 * GET /admin/v1/applications/{name}/decisions?since=&until=&cursor=&limit=
 * answers one page, oldest first, with an opaque cursor to the next;
 * GET .../decisions/export?since=&until= streams the whole range as JSON
 * lines, reading a page at a time so that neither the worker's memory
 * nor a read transaction grows with the range.  Each decision is written
 * by decision.c, as GET /v1/decisions/{id} writes it, with a member
 * challengers when challengers answered for it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "clock.h"
#include "decision.h"
#include "handlers.h"
#include "json_util.h"
#include "store.h"

#define LIMIT_DEFAULT	100
#define LIMIT_MAX	1000
#define EXPORT_PAGE	100
#define QUERY_MAX	256	/* bytes of one query parameter */
#define CURSOR_MAX	128	/* bytes of a decoded cursor */

/* One page of ids, read before any decision is (the page's statement is
 * done with by then).  About 48 KiB, so allocated, and checked (a 503)
 * as README.md's "Hacking" has a page of decisions be. */
struct page {
	size_t	n;
	struct {
		char	id[UUID7_LEN + 1];
		int64_t	ms;
	} rows[LIMIT_MAX + 1];
};

static void
page_add(const char *id, int64_t ms, void *arg)
{
	struct page *p = arg;

	if (p->n == sizeof(p->rows) / sizeof(p->rows[0]))
		return;
	snprintf(p->rows[p->n].id, sizeof(p->rows[0].id), "%s", id);
	p->rows[p->n++].ms = ms;
}

/* A cursor is base64url("<created_at_ms>.<id>") of a page's last row. */
static void
cursor_encode(int64_t ms, const char *id, char *out, size_t size)
{
	char plain[CURSOR_MAX];
	int  n = snprintf(plain, sizeof(plain), "%lld.%s", (long long)ms, id);

	sodium_bin2base64(out, size, (const unsigned char *)plain, (size_t)n,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static int
cursor_decode(const char *s, struct decision_range *q, struct error *e)
{
	char	 plain[CURSOR_MAX];
	char	*dot, *end;
	size_t	 len;

	if (sodium_base642bin((unsigned char *)plain, sizeof(plain) - 1, s,
	    strlen(s), NULL, &len, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
		goto bad;
	plain[len] = '\0';
	if ((dot = strchr(plain, '.')) == NULL || dot == plain ||
	    strspn(plain, "0123456789") != (size_t)(dot - plain) ||
	    !decision_id_canon(dot + 1, q->after_id))
		goto bad;
	q->after_ms = strtoll(plain, &end, 10);
	if (end == dot)
		return 0;
bad:
	return error_set(e, ERR_VALIDATION, "cursor",
	    "is not a cursor this listing gave");
}

/* An optional time parameter: RFC 3339 or YYYY-MM-DD.  0 or -1. */
static int
query_time(struct req *r, const char *name, int64_t *ms, struct error *e)
{
	char buf[QUERY_MAX];

	if (req_query(r, name, buf, sizeof(buf)) == NULL)
		return 0;
	if (clock_parse_rfc3339(buf, ms) == -1)
		return error_set(e, ERR_VALIDATION, name, "must be an RFC 3339 "
		    "time or a date YYYY-MM-DD, e.g. 2026-11-01");
	return 0;
}

static int
query_limit(struct req *r, int *limit, struct error *e)
{
	char	buf[QUERY_MAX];
	size_t	n;

	*limit = LIMIT_DEFAULT;
	if (req_query(r, "limit", buf, sizeof(buf)) == NULL)
		return 0;
	n = strlen(buf);
	if (n == 0 || n > 4 || strspn(buf, "0123456789") != n ||
	    (*limit = atoi(buf)) < 1 || *limit > LIMIT_MAX)
		return error_set(e, ERR_VALIDATION, "limit",
		    "must be an integer from 1 to %d", LIMIT_MAX);
	return 0;
}

/* The application named by the path, and the range of the query. */
static int
range(struct req *r, struct app *a, struct decision_range *q, int paged,
    struct error *e)
{
	char	buf[QUERY_MAX];
	int	rc;

	memset(q, 0, sizeof(*q));
	q->since_ms = INT64_MIN;
	q->until_ms = INT64_MAX;
	if ((rc = store_app_by_name(r->store, r->params[0], a, e)) != 1)
		return rc == -1 ? -1 : error_set(e, ERR_NOT_FOUND, NULL,
		    "no application named '%s'", r->params[0]);
	if (query_time(r, "since", &q->since_ms, e) == -1 ||
	    query_time(r, "until", &q->until_ms, e) == -1)
		return -1;
	if (q->until_ms <= q->since_ms)
		return error_set(e, ERR_VALIDATION, "until",
		    "must be later than since");
	if (paged && req_query(r, "cursor", buf, sizeof(buf)) != NULL &&
	    cursor_decode(buf, q, e) == -1)
		return -1;
	q->app_id = a->id;
	return 0;
}

/* The next page of q, at most limit rows, into p: 0 or -1. */
static int
next_page(struct req *r, const struct decision_range *q, int limit,
    struct page *p, struct error *e)
{
	p->n = 0;
	return store_decision_page(r->store, q, limit, page_add, p, e) == -1 ?
	    -1 : 0;
}

/* One challenger's answer into the list arg. */
static void
challenger_row(const struct challenger_answer *c, void *arg)
{
	json_object *o = ju_obj();

	ju_add_str(o, "backend", c->backend);
	ju_add(o, "answers", json_object_get(c->answers));
	ju_add(o, "latency_ms", ju_int(c->latency_ms));
	ju_add(o, "input_tokens", c->has_usage ? ju_int(c->input_tokens) :
	    NULL);
	ju_add(o, "output_tokens", c->has_usage ? ju_int(c->output_tokens) :
	    NULL);
	ju_add_str(o, "source", c->source);
	ju_add_time(o, "recorded_at", c->recorded_at_ms);
	ju_push(arg, o);
}

/* Decision i of p as JSON, with its challengers' answers when it has
 * some (README, "Challengers"); NULL with *rc 0 if it went meanwhile,
 * or -1. */
static json_object *
row_json(struct req *r, const struct app *a, const struct page *p,
    size_t i, int *rc, struct error *e)
{
	json_object *o = NULL, *list;

	*rc = decision_json(r->store, p->rows[i].id, a->id, a->log_state, &o,
	    e);
	if (o == NULL)
		return NULL;
	list = ju_arr();
	if (store_challenger_answers(r->store, p->rows[i].id, challenger_row,
	    list, e) == -1) {
		json_object_put(list);
		json_object_put(o);
		*rc = -1;
		return NULL;
	}
	if (json_object_array_length(list) > 0)
		ju_add(o, "challengers", list);
	else
		json_object_put(list);
	return o;
}

int
handle_admin_decisions(struct req *r, struct error *e)
{
	struct decision_range	 q;
	struct app		 a;
	struct page		*p;
	json_object		*list, *o, *body;
	char			 cursor[CURSOR_MAX * 2];
	size_t			 i, shown;
	int			 limit, rc = 0;

	if (range(r, &a, &q, 1, e) == -1 || query_limit(r, &limit, e) == -1)
		return -1;
	if ((p = malloc(sizeof(*p))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	/* One row more than asked tells whether another page follows. */
	if (next_page(r, &q, limit + 1, p, e) == -1) {
		free(p);
		return -1;
	}
	shown = p->n > (size_t)limit ? (size_t)limit : p->n;
	list = ju_arr();
	for (i = 0; i < shown && rc != -1; i++)
		if ((o = row_json(r, &a, p, i, &rc, e)) != NULL)
			ju_push(list, o);
	if (rc == -1) {
		json_object_put(list);
		free(p);
		return -1;
	}
	body = ju_obj();
	ju_add(body, "decisions", list);
	if (p->n > shown) {
		cursor_encode(p->rows[shown - 1].ms, p->rows[shown - 1].id,
		    cursor, sizeof(cursor));
		ju_add_str(body, "next_cursor", cursor);
	} else
		ju_add_str(body, "next_cursor", NULL);
	free(p);
	http_json(r, 200, body);
	json_object_put(body);
	return 0;
}

/* Writes o as one line: 0, or -1 when the client is gone. */
static int
write_line(struct req *r, json_object *o)
{
	const char	*text;
	size_t		 len;

	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	return http_write(r, text, len) == -1 || http_write(r, "\n", 1) == -1 ?
	    -1 : 0;
}

/* Once the 200 is sent, a failure can only be told in the stream: a
 * last line {"error": {...}} in the spec's format. */
int
handle_admin_export(struct req *r, struct error *e)
{
	struct decision_range	 q;
	struct app		 a;
	struct page		*p;
	json_object		*o;
	size_t			 i;
	int			 rc = 0, gone = 0;

	if (range(r, &a, &q, 0, e) == -1)
		return -1;
	if ((p = malloc(sizeof(*p))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (next_page(r, &q, EXPORT_PAGE, p, e) == -1) {
		free(p);
		return -1;
	}
	http_begin(r, 200, "application/x-ndjson");
	while (p->n > 0 && rc != -1 && !gone) {
		for (i = 0; i < p->n && rc != -1 && !gone; i++) {
			if ((o = row_json(r, &a, p, i, &rc, e)) != NULL)
				gone = write_line(r, o) == -1;
			json_object_put(o);
		}
		if (rc == -1 || gone || p->n < EXPORT_PAGE)
			break;
		q.after_ms = p->rows[p->n - 1].ms;
		memcpy(q.after_id, p->rows[p->n - 1].id, sizeof(q.after_id));
		rc = next_page(r, &q, EXPORT_PAGE, p, e);
	}
	if (rc == -1 && !gone) {
		o = http_error_body(e);
		write_line(r, o);
		json_object_put(o);
	}
	free(p);
	return 0;
}
