/* backend_lexical.c: the built-in offline backend, a deterministic
 * word-overlap baseline (doc/design.md, section 7.1).  It is not a model: it only
 * tells which outcome's words the state repeats.
 *
 * Words are runs of ASCII letters and digits and of bytes >= 0x80 (so UTF-8
 * text stays in one piece), compared bytewise after folding ASCII A-Z to
 * a-z.  A few English stop words ("the", "is", ...) are ignored when
 * matching, so that they do not decide between outcomes.
 *
 * The state's words go once into an open-addressing hash set (the kind
 * builds it once for all the questions of a call), each word hashed once
 * and looked up with that hash among the stop words too.  The overlap of
 * an outcome is the number of distinct state words found among the
 * outcome's words (each slot carries the stamp of the last outcome that
 * matched it, a new stamp per outcome, so a word repeated in an option
 * counts once).  Then:
 *
 *	choice	score_i = 1 + overlap(option key i and its description, if a
 *		string)
 *	score	score_i = 1 + overlap(level label i)
 *	noul	score_true = 1 + overlap("true" description), score_false =
 *		1 + overlap("false" description); with neither description a
 *		string, score_true = 1 + overlap(instructions, if a string),
 *		score_false = 1
 *
 * and p_i = score_i / sum_j score_j: a plain normalisation (no softmax),
 * so every probability is > 0 and no overlap is ever certain.  The
 * instructions do not enter choice and score scores: they are the same for
 * every option and would only flatten the distribution.
 *
 * At the end, the kind itself (struct backend_kind): the adapter from a
 * backend's call to these functions.  All of it is pure: no I/O, no
 * global state. */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "backend_lexical.h"
#include "error.h"
#include "question.h"

#define STOP_MASK	63	/* the stop-word table: STOP_MASK + 1 slots */

struct slot {
	const char	*w;	/* into the state text; NULL if free */
	size_t		 len;
	size_t		 mark;	/* stamp of the last outcome that matched */
};

/* The stop words, each in the slot of its hash() & STOP_MASK or, when
 * that is taken, in the next free one (linear probing, as the word set
 * does): "a", "an", "and", "are", "as", "at", "be", "by", "for", "from",
 * "has", "have", "in", "is", "it", "its", "of", "on", "or", "that",
 * "the", "this", "to", "was", "were", "will", "with".  The unit test
 * checks that each is ignored. */
static const struct slot stopwords[STOP_MASK + 1] = {
	[0] = { "be", 2 }, [1] = { "this", 4 }, [3] = { "has", 3 },
	[6] = { "an", 2 }, [7] = { "and", 3 }, [8] = { "of", 2 },
	[12] = { "a", 1 }, [13] = { "are", 3 }, [14] = { "as", 2 },
	[15] = { "that", 4 }, [16] = { "for", 3 }, [17] = { "were", 4 },
	[18] = { "will", 4 }, [20] = { "by", 2 }, [21] = { "is", 2 },
	[25] = { "its", 3 }, [27] = { "have", 4 }, [36] = { "or", 2 },
	[37] = { "to", 2 }, [40] = { "at", 2 }, [41] = { "with", 4 },
	[48] = { "it", 2 }, [49] = { "on", 2 }, [50] = { "was", 3 },
	[53] = { "from", 4 }, [60] = { "the", 3 }, [62] = { "in", 2 },
};

struct wordset {
	struct slot	*slots;	/* owned; NULL: the state has no words */
	size_t		 mask;	/* capacity - 1, capacity a power of 2 */
	size_t		 stamp;	/* the last outcome's stamp; 0 none yet */
	long		 words;	/* the state's words, stop words included */
};

struct scorer {
	void	(*score)(struct wordset *, json_object *criteria,
		    json_object *question, double *s, size_t n);
};

static void	 choice_score(struct wordset *, json_object *,
		    json_object *, double *, size_t);
static void	 score_score(struct wordset *, json_object *,
		    json_object *, double *, size_t);
static void	 noul_score(struct wordset *, json_object *,
		    json_object *, double *, size_t);

static const struct scorer scorers[Q__MAX] = {
	[Q_CHOICE] = { choice_score },
	[Q_SCORE] = { score_score },
	[Q_NOUL] = { noul_score },
};

/* Each byte folded as words compare it (A-Z to a-z), or 0 where it is
 * not a word's: one load per byte when scanning text. */
#define WORD(c)	((c) >= 'A' && (c) <= 'Z' ? (c) - 'A' + 'a' : \
		 ((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') || \
		 (c) >= 0x80 ? (c) : 0)
#define WORD4(c)	WORD(c), WORD((c) + 1), WORD((c) + 2), WORD((c) + 3)
#define WORD16(c)	WORD4(c), WORD4((c) + 4), WORD4((c) + 8), \
			WORD4((c) + 12)
#define WORD64(c)	WORD16(c), WORD16((c) + 16), WORD16((c) + 32), \
			WORD16((c) + 48)
static const unsigned char word_byte[256] = {
	WORD64(0), WORD64(64), WORD64(128), WORD64(192),
};

static unsigned char
fold(unsigned char c)
{
	return word_byte[c];
}

/* The next word at or after s, its length in *len; NULL at the end. */
static const char *
next_word(const char *s, size_t *len)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 n = 0;

	while (word_byte[*u] == 0) {
		if (*u == '\0')
			return NULL;
		u++;
	}
	while (word_byte[u[n]] != 0)
		n++;
	*len = n;
	return (const char *)u;
}

static uint64_t
hash(const char *w, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= fold((unsigned char)w[i]);
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int
same(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t	 i;

	if (alen != blen)
		return 0;
	for (i = 0; i < alen; i++)
		if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
			return 0;
	return 1;
}

/* The index of the slot of slots (mask + 1 of them) holding w, whose
 * hash is h, or of the free slot where it belongs. */
static size_t
probe(const struct slot *slots, size_t mask, uint64_t h, const char *w,
    size_t len)
{
	size_t	 i;

	for (i = (size_t)h & mask; ; i = (i + 1) & mask)
		if (slots[i].w == NULL || same(slots[i].w, slots[i].len, w,
		    len))
			return i;
}

static int
is_stopword(uint64_t h, const char *w, size_t len)
{
	return stopwords[probe(stopwords, STOP_MASK, h, w, len)].w != NULL;
}

/* Fills ws with the distinct non-stop words of text (not NULL) and
 * counts its words.  Without words, ws stays empty and every overlap is
 * 0 (a uniform answer).  0, or -1 out of memory (the table is sized by
 * the state's words: README, Hacking). */
static int
wordset_build(struct wordset *ws, const char *text)
{
	const char	*w;
	size_t		 len, cap = 16;
	uint64_t	 h;
	struct slot	*sl;

	ws->slots = NULL;
	ws->mask = 0;
	ws->stamp = 0;
	ws->words = lexical_count_words(text);
	if (ws->words == 0)
		return 0;
	/* More slots than words, so that one is always free: at most half
	 * full when every word differs, and states repeat their words. */
	while (cap <= (size_t)ws->words && cap < SIZE_MAX / 4 / sizeof(*sl))
		cap *= 2;
	if ((ws->slots = calloc(cap, sizeof(*ws->slots))) == NULL)
		return -1;
	ws->mask = cap - 1;
	for (w = text; (w = next_word(w, &len)) != NULL; w += len) {
		h = hash(w, len);
		if (is_stopword(h, w, len))
			continue;
		sl = &ws->slots[probe(ws->slots, ws->mask, h, w, len)];
		if (sl->w == NULL) {
			sl->w = w;
			sl->len = len;
		}
	}
	return 0;
}

/* Distinct state words among the words of text not yet matched under
 * stamp (> 0, one per outcome). */
static size_t
overlap(struct wordset *ws, const char *text, size_t stamp)
{
	const char	*w;
	struct slot	*sl;
	size_t		 len, n = 0;
	uint64_t	 h;

	if (ws->slots == NULL || text == NULL)
		return 0;
	for (w = text; (w = next_word(w, &len)) != NULL; w += len) {
		h = hash(w, len);
		if (is_stopword(h, w, len))
			continue;
		sl = &ws->slots[probe(ws->slots, ws->mask, h, w, len)];
		if (sl->w != NULL && sl->mark != stamp) {
			sl->mark = stamp;
			n++;
		}
	}
	return n;
}

/* A text member that is a string, else NULL. */
static const char *
string_of(json_object *o)
{
	return json_object_is_type(o, json_type_string) ?
	    json_object_get_string(o) : NULL;
}

static const char *
member_string(json_object *obj, const char *key)
{
	json_object	*v;

	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return string_of(v);
}

static void
choice_score(struct wordset *ws, json_object *c, json_object *q,
    double *s, size_t n)
{
	size_t	 i = 0, o;

	(void)q;
	json_object_object_foreach(c, k, v) {
		if (i >= n)
			break;
		ws->stamp++;
		o = overlap(ws, k, ws->stamp) +
		    overlap(ws, string_of(v), ws->stamp);
		s[i] = 1 + (double)o;
		i++;
	}
}

static void
score_score(struct wordset *ws, json_object *c, json_object *q,
    double *s, size_t n)
{
	size_t	 i, o;

	(void)q;
	for (i = 0; i < n; i++) {
		o = overlap(ws, string_of(json_object_array_get_idx(c, i)),
		    ++ws->stamp);
		s[i] = 1 + (double)o;
	}
}

static void
noul_score(struct wordset *ws, json_object *c, json_object *q,
    double *s, size_t n)
{
	const char	*t, *f;
	size_t		 ot, of;

	(void)n;
	t = member_string(c, "true");
	f = member_string(c, "false");
	if (t == NULL && f == NULL)
		t = member_string(q, "instructions");
	ot = overlap(ws, t, ++ws->stamp);
	of = overlap(ws, f, ++ws->stamp);
	s[0] = 1 + (double)ot;
	s[1] = 1 + (double)of;
}

/* lexical_distribution() over the state's words, ws. */
static void
distribution(struct wordset *ws, json_object *question, double *p,
    size_t n)
{
	json_object	*c = NULL;
	enum qtype	 t;
	double		 sum = 0;
	size_t		 i;

	for (i = 0; i < n; i++)
		p[i] = 1;
	t = question_type(question);
	if (t != Q__MAX && n == question_arity(question)) {
		json_object_object_get_ex(question, "criteria", &c);
		scorers[t].score(ws, c, question, p, n);
	}
	for (i = 0; i < n; i++)
		sum += p[i];
	for (i = 0; i < n; i++)
		p[i] /= sum;
}

int
lexical_distribution(const char *state_text, json_object *question,
    double *p, size_t n)
{
	struct wordset	 ws;
	int		 rc;

	if (n == 0)
		return 0;
	/* Out of memory, ws is empty: a uniform p. */
	rc = wordset_build(&ws, state_text != NULL ? state_text : "");
	distribution(&ws, question, p, n);
	free(ws.slots);
	return rc;
}

int
lexical_count_words(const char *text)
{
	const unsigned char	*u = (const unsigned char *)text;
	size_t			 n = 0;
	unsigned		 in = 0, w;

	if (text == NULL)
		return 0;
	/* A word begins where a word's byte follows another byte. */
	for (; *u != '\0'; u++) {
		w = word_byte[*u] != 0;
		n += w & ~in;
		in = w;
	}
	return n < INT_MAX ? (int)n : INT_MAX;
}

/* Words of a free text member: a string, or the compact JSON of an object
 * or array. */
static long
text_words(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string:
		return lexical_count_words(json_object_get_string(o));
	case json_type_object:
	case json_type_array:
		return lexical_count_words(json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN));
	default:
		return 0;
	}
}

/* lexical_usage() of a state of state_words words. */
static void
usage(long state_words, json_object *questions, long *input_tokens,
    long *output_tokens)
{
	json_object	*c, *instr;
	long		 in = state_words;
	size_t		 i;

	*output_tokens = 0;
	if (json_object_is_type(questions, json_type_object)) {
		*output_tokens = json_object_object_length(questions);
		json_object_object_foreach(questions, name, q) {
			in += lexical_count_words(name);
			if (json_object_object_get_ex(q, "instructions",
			    &instr))
				in += text_words(instr);
			if (!json_object_object_get_ex(q, "criteria", &c))
				continue;
			if (json_object_is_type(c, json_type_object)) {
				json_object_object_foreach(c, k, v) {
					in += lexical_count_words(k);
					in += text_words(v);
				}
			} else if (json_object_is_type(c, json_type_array)) {
				for (i = 0; i < json_object_array_length(c);
				    i++)
					in += text_words(
					    json_object_array_get_idx(c, i));
			}
		}
	}
	*input_tokens = in;
}

void
lexical_usage(const char *state_text, json_object *questions,
    long *input_tokens, long *output_tokens)
{
	usage(lexical_count_words(state_text), questions, input_tokens,
	    output_tokens);
}

/* ---------------------------------------------------------------- kind */

/* The state as the kind reads it: a string as is, an object or an array
 * as compact JSON text (borrowed from state). */
static const char *
state_text(json_object *state)
{
	if (state == NULL)
		return NULL;
	if (json_object_is_type(state, json_type_string))
		return json_object_get_string(state);
	return json_object_to_json_string_ext(state,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* The state's words go into one word set for all the questions. */
static int
lexical_answer(const struct backend *b, json_object *state,
    json_object *questions, struct backend_answer *out, struct error *e)
{
	const char	*text = state_text(state);
	struct wordset	 ws;
	long		 in = 0, outn = 0;
	size_t		 i = 0;

	(void)b;
	if (wordset_build(&ws, text != NULL ? text : "") == -1 ||
	    backend_answer_alloc(out, questions) == -1) {
		free(ws.slots);
		error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		e->retry_after_ms = 1000;
		return -1;
	}
	json_object_object_foreach(questions, name, q) {
		(void)name;
		distribution(&ws, q, out->dist[i], question_arity(q));
		i++;
	}
	usage(ws.words, questions, &in, &outn);
	free(ws.slots);
	out->has_usage = 1;
	out->input_tokens = in;
	out->output_tokens = outn;
	return 0;
}

const struct backend_kind backend_kind_lexical = {
	.name		= "lexical",
	.remote		= 0,
	.answer		= lexical_answer,
};
