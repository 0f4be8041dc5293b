/* backend_answer.c: a backend's answer, its allocation and release, and
 * the reason a kind's parser gives for an answer that does not fit.
 * Pure: no I/O, no global state, so that the unit tests and the fuzzer
 * build it with the kinds' parsers alone. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "question.h"

int
backend_answer_alloc(struct backend_answer *a, json_object *questions)
{
	size_t	 i = 0, n, arity;

	memset(a, 0, sizeof(*a));
	n = (size_t)json_object_object_length(questions);
	if (n == 0)
		return 0;
	/* Sized by the questions and their options: checked. */
	if ((a->dist = calloc(n, sizeof(*a->dist))) == NULL)
		return -1;
	a->nquestions = n;
	json_object_object_foreach(questions, name, q) {
		(void)name;
		arity = question_arity(q);
		if (i == n || (a->dist[i++] = calloc(arity > 0 ? arity : 1,
		    sizeof(double))) == NULL) {
			backend_answer_free(a);
			return -1;
		}
	}
	return 0;
}

void
backend_answer_free(struct backend_answer *a)
{
	size_t	 i;

	if (a->dist != NULL)
		for (i = 0; i < a->nquestions; i++)
			free(a->dist[i]);
	free(a->dist);
	free(a->label_mass);
	memset(a, 0, sizeof(*a));
}

int
backend_reason(char *why, size_t whylen, const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	if (why == NULL || whylen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	for (p = why; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -1;
}
