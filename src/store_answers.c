/* store_answers.c: a decision's answers as the one JSON text both
 * engines keep in the decision's row (decisions.answers): an array, in
 * the order of the answer, of one object per question,
 *
 *	{"question":NAME,"type":TYPE,"distribution":D,"answer":A,
 *	 "label_mass":M}
 *
 * D the untempered distribution and A the answer as the client got it,
 * both JSON texts already (answer.c wrote them) and copied as they are;
 * "label_mass" only when the backend gave one.  Calibration, the
 * comparison and a decision's page read the members back by name. */
#include "config.h"

#include "buf.h"
#include "json_util.h"
#include "store_engine.h"

int
store_answers_add(struct buf *b, const struct answer_text *a)
{
	int	rc;

	rc = buf_adds(b, b->len == 0 ? "[{\"question\":" : ",{\"question\":");
	if (rc != BUF_OK || ju_write_str(b, a->name, a->name_len) == -1 ||
	    buf_adds(b, ",\"type\":") != BUF_OK ||
	    ju_write_str(b, a->type, a->type_len) == -1 ||
	    buf_adds(b, ",\"distribution\":") != BUF_OK ||
	    buf_add(b, a->dist, a->dist_len) != BUF_OK ||
	    buf_adds(b, ",\"answer\":") != BUF_OK ||
	    buf_add(b, a->answer, a->answer_len) != BUF_OK)
		return -1;
	if (a->label_mass != NULL && (buf_adds(b, ",\"label_mass\":") !=
	    BUF_OK || ju_write_num(b, *a->label_mass) == -1))
		return -1;
	return buf_add(b, "}", 1) == BUF_OK ? 0 : -1;
}

int
store_answers_end(struct buf *b)
{
	return buf_adds(b, b->len == 0 ? "[]" : "]") == BUF_OK ? 0 : -1;
}
