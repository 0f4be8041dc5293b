/* shm_budget.c: argon2id budgets in the host's shared memory (see
 * shm_budget.h): a small table, the least recent entry giving way. */
#include "config.h"

#include "shm.h"
#include "shm_budget.h"
#include "shm_file.h"

int
shm_budget_take(struct shm *m, const char *key, int64_t now_ms, long limit)
{
	struct shm_budget	*b, *oldest;
	uint64_t		 h = shm_key_hash(key);
	int			 ok;

	if (m == NULL || shm_lock(m) == -1)
		return 1;
	oldest = &m->f->budgets[0];
	for (b = m->f->budgets; b < m->f->budgets + SHM_BUDGETS; b++) {
		if (b->key == h)
			break;
		if (b->key == 0 || b->since_ms < oldest->since_ms)
			oldest = b;
	}
	if (b == m->f->budgets + SHM_BUDGETS) {
		b = oldest;		/* the least recent budget gives way */
		b->runs = 0;
		b->since_ms = now_ms;
		b->key = h;
	}
	if (now_ms - b->since_ms >= 60000 || now_ms < b->since_ms) {
		b->since_ms = now_ms;	/* a new minute */
		b->runs = 0;
	}
	if ((ok = b->runs < limit))
		b->runs++;
	shm_unlock(m);
	return ok;
}
