/* kept.c: the catalog rows a worker keeps between requests, for either
 * storage engine (see kept.h). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kept.h"
#include "xalloc.h"

#define KEPT_SLOTS	32	/* per kind: direct-mapped on the key */

static void
hold_version(void *row)
{
	json_object_get(((struct schema_version *)row)->questions);
}

static void
release_version(void *row)
{
	json_object_put(((struct schema_version *)row)->questions);
}

/* A backend's row has room for the longest options and for every
 * replica, kilobytes an evaluation does not use: kept_get() copies what
 * is used, the fields, the options up to their NUL and b->nurls URLs.
 * The rest of the copy is left as it was: nothing reads a string past
 * its NUL, nor urls[] past nurls. */
static void
copy_backend(void *out, const void *row)
{
	struct backend		*o = out;
	const struct backend	*b = row;
	size_t			 n;

	memcpy(o, b, offsetof(struct backend, options));
	n = strnlen(b->options, sizeof(b->options));
	memcpy(o->options, b->options, n < sizeof(b->options) ? n + 1 : n);
	memcpy(o->optval, b->optval, sizeof(b->optval));
	o->nurls = b->nurls < BACKEND_MAX_URLS ? b->nurls : BACKEND_MAX_URLS;
	memcpy(o->urls, b->urls, o->nurls * sizeof(b->urls[0]));
}

/* A version's challengers: n and the n rows, not the room past them. */
static void
copy_challengers(void *out, const void *row)
{
	struct challenger_list		*o = out;
	const struct challenger_list	*l = row;

	o->n = l->n < CHALLENGER_LIST_MAX ? l->n : CHALLENGER_LIST_MAX;
	memcpy(o->c, l->c, o->n * sizeof(l->c[0]));
}

/* What each kind keeps, how kept_get() copies it (NULL: all its bytes)
 * and how a copy shares what the row owns. */
static const struct {
	size_t	  size;
	void	(*copy)(void *out, const void *row);
	void	(*hold)(void *row);	/* a copy takes a reference */
	void	(*release)(void *row);	/* the kept row drops its own */
} kinds[KEPT__MAX] = {
	[KEPT_KEY] = { sizeof(struct key_row), NULL, NULL, NULL },
	[KEPT_APP] = { sizeof(struct app), NULL, NULL, NULL },
	[KEPT_MATCH] = { sizeof(struct schema_version), NULL, hold_version,
	    release_version },
	[KEPT_BACKEND] = { sizeof(struct backend), copy_backend, NULL,
	    NULL },
	[KEPT_CHALLENGERS] = { sizeof(struct challenger_list),
	    copy_challengers, NULL, NULL },
};

struct kept {
	int64_t	 generation;	/* of the rows kept; -1 none */
	int	 valid;		/* inside a snapshot of that generation */
	struct {
		char	 key[KEPT_KEY_MAX];
		void	*row;	/* owned: kinds[].size bytes, or NULL */
	} slots[KEPT__MAX][KEPT_SLOTS];
};

/* Drops every row. */
static void
flush(struct kept *m)
{
	size_t k, i;

	for (k = 0; k < KEPT__MAX; k++)
		for (i = 0; i < KEPT_SLOTS; i++) {
			if (m->slots[k][i].row != NULL && kinds[k].release)
				kinds[k].release(m->slots[k][i].row);
			free(m->slots[k][i].row);
			m->slots[k][i].row = NULL;
		}
	m->generation = -1;
}

struct kept *
kept_new(void)
{
	struct kept *m = xmalloc(sizeof(*m));

	memset(m, 0, sizeof(*m));
	m->generation = -1;
	return m;
}

void
kept_begin(struct kept *m, int64_t generation)
{
	m->valid = generation >= 0;
	if (generation < 0 || generation == m->generation)
		return;
	flush(m);
	m->generation = generation;
}

int64_t
kept_generation(const struct kept *m)
{
	return m != NULL ? m->generation : -1;
}

void
kept_end(struct kept *m)
{
	if (m != NULL)
		m->valid = 0;
}

void
kept_free(struct kept *m)
{
	if (m == NULL)
		return;
	flush(m);
	free(m);
}

/* FNV-1a of the key, for its slot. */
static size_t
slot(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h % KEPT_SLOTS;
}

int
kept_get(struct kept *m, enum kept_kind k, const char *key, void *out)
{
	size_t i = slot(key);

	if (m == NULL || !m->valid || m->slots[k][i].row == NULL ||
	    strcmp(m->slots[k][i].key, key) != 0)
		return 0;
	if (kinds[k].copy)
		kinds[k].copy(out, m->slots[k][i].row);
	else
		memcpy(out, m->slots[k][i].row, kinds[k].size);
	if (kinds[k].hold)
		kinds[k].hold(out);
	return 1;
}

void
kept_put(struct kept *m, enum kept_kind k, const char *key, const void *row)
{
	size_t		 i = slot(key);
	void		*copy;

	if (m == NULL || !m->valid || strlen(key) >= KEPT_KEY_MAX)
		return;
	copy = xmalloc(kinds[k].size);
	if (m->slots[k][i].row != NULL && kinds[k].release)
		kinds[k].release(m->slots[k][i].row);
	free(m->slots[k][i].row);
	memcpy(copy, row, kinds[k].size);
	if (kinds[k].hold)
		kinds[k].hold(copy);
	m->slots[k][i].row = copy;
	snprintf(m->slots[k][i].key, sizeof(m->slots[k][i].key), "%s", key);
}
