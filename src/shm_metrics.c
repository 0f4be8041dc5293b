/* shm_metrics.c: the metrics' cells and label names in the host's
 * shared memory (see shm_metrics.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "shm.h"
#include "shm_file.h"
#include "shm_metrics.h"

struct shm_metrics *
shm_metrics_self(struct shm *m)
{
	if (m == NULL || m->f == NULL || m->self == NULL)
		return NULL;
	return metrics_of(m, (size_t)(m->self - m->f->slots));
}

struct shm_metrics *
shm_metrics_retired(struct shm *m)
{
	return metrics_of(m, m->nslots);
}

struct shm_metrics *
shm_metrics_at(struct shm *m, size_t i)
{
	return metrics_of(m, i < m->nslots ? i : m->nslots);
}

uint64_t *
shm_minute_cells(struct shm *m, int64_t minute)
{
	struct shm_minute	*e;
	int64_t			 at;

	if (m == NULL || m->f == NULL || minute <= 0)
		return NULL;
	e = &m->f->minutes[minute % SHM_MINUTES];
	if ((at = __atomic_load_n(&e->minute, __ATOMIC_ACQUIRE)) == minute)
		return e->cell;
	if (shm_lock(m) == -1)
		return NULL;
	/* Another process may have emptied it since. */
	if (e->minute != minute) {
		memset(e->cell, 0, sizeof(e->cell));
		__atomic_store_n(&e->minute, minute, __ATOMIC_RELEASE);
	}
	shm_unlock(m);
	return e->cell;
}

const struct shm_minute *
shm_minute_at(struct shm *m, size_t i)
{
	return &m->f->minutes[i % SHM_MINUTES];
}

int
shm_metric_name(struct shm *m, enum shm_names t, const char *name)
{
	struct shm_name_table	*nt;
	uint32_t		 i, n;

	if (m == NULL || m->f == NULL || t >= SHM_NAMES__MAX ||
	    strlen(name) >= SHM_METRIC_NAME_SIZE)
		return -1;
	nt = &m->f->names[t];
	n = __atomic_load_n(&nt->n, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < SHM_METRIC_NAMES; i++)
		if (strcmp(nt->name[i], name) == 0)
			return (int)i;
	if (n >= SHM_METRIC_NAMES || shm_lock(m) == -1)
		return -1;
	/* Another process may have added it since. */
	n = nt->n < SHM_METRIC_NAMES ? nt->n : SHM_METRIC_NAMES;
	for (i = 0; i < n && strcmp(nt->name[i], name) != 0; i++)
		;
	if (i == n && n < SHM_METRIC_NAMES) {
		snprintf(nt->name[i], sizeof(nt->name[i]), "%s", name);
		__atomic_store_n(&nt->n, n + 1, __ATOMIC_RELEASE);
	}
	shm_unlock(m);
	return i < SHM_METRIC_NAMES ? (int)i : -1;
}

const char
(*shm_metric_names(struct shm *m, enum shm_names t, size_t *n))
    [SHM_METRIC_NAME_SIZE]
{
	struct shm_name_table	*nt = &m->f->names[t];

	*n = nt->n < SHM_METRIC_NAMES ? nt->n : SHM_METRIC_NAMES;
	return (const char (*)[SHM_METRIC_NAME_SIZE])nt->name;
}
