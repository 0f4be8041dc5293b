/* shm_group.c: group commit in the host's shared memory (see shm_group.h):
 * each worker slot's record, the lead, and the hand-overs between them.
 *
 * A record moves through these states; the process named beside each is
 * the only one that may move it on (by compare-and-swap where two may
 * try), and it writes what the next reader needs before the state:
 *
 *	FREE	the owner's: it writes its bytes, then READY
 *	READY	waiting: a leader takes it (TAKEN), hands it the lead
 *		(LEAD), or the owner withdraws it (FREE)
 *	TAKEN	the leader named in taker writes it, then DONE, FAILED or
 *		ALONE; if that leader dies, the owner makes it ORPHAN
 *	ORPHAN	like READY, but perhaps committed: the next leader (or the
 *		owner, leading) looks first
 *	DONE, FAILED, ALONE, LEAD	for the owner to read, then FREE
 *
 * The owner sleeps on the state word (a futex in the shared mapping) and
 * is woken when a leader hands it on; every SHM_GROUP_CHECK_MS it looks
 * whether the leader it waits for is alive.  The lead is a token in the
 * file: the leader's pid and start time, 0 when nobody leads.  A leader
 * whose commit will be synced may await the records of workers still
 * serving a request on group_submits, which a submitter bumps and wakes
 * when group_awaiting says somebody sleeps there. */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "shm.h"
#include "shm_file.h"
#include "shm_group.h"

enum rec_state {
	REC_FREE, REC_READY, REC_TAKEN, REC_ORPHAN,
	REC_DONE, REC_FAILED, REC_ALONE, REC_LEAD
};

/* What a finished record tells its owner, by enum shm_group. */
static const uint32_t finished[] = {
	[SHM_GROUP_ALONE] = REC_ALONE,
	[SHM_GROUP_DONE] = REC_DONE,
	[SHM_GROUP_FAILED] = REC_FAILED,
};

static struct shm_record *
record(const struct shm *m, size_t i)
{
	return (struct shm_record *)(void *)((char *)m->f +
	    RECORDS_OFFSET(m->nslots) + i * (size_t)SHM_RECORD_SIZE);
}

/* Slot i's record state: the word its owner sleeps on. */
static uint32_t *
state_word(const struct shm *m, size_t i)
{
	return (uint32_t *)(void *)((char *)m->f + STATES_OFFSET(m->nslots)) +
	    i;
}

static size_t
self_index(const struct shm *m)
{
	return (size_t)(m->self - m->f->slots);
}

/* The slots ever taken: the looks over records stop there. */
static size_t
slots_used(struct shm *m)
{
	size_t n;

	shm_slots(m, &n);
	return n;
}

/* A process as the lead and the takers name it. */
static uint64_t
token(pid_t pid, uint64_t started)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)started;
}

static uint64_t
my_token(const struct shm *m)
{
	return token(m->self->pid, m->started);
}

static int
token_alive(uint64_t t)
{
	pid_t pid = (pid_t)(t >> 32);

	if (pid <= 0 || (kill(pid, 0) == -1 && errno == ESRCH))
		return 0;
	return (uint32_t)t == 0 ||
	    (uint32_t)shm_proc_started(pid) == (uint32_t)t;
}

static uint64_t
taker_of(struct shm_record *r)
{
	return __atomic_load_n(&r->taker, __ATOMIC_RELAXED);
}

static uint32_t
state_of(uint32_t *w)
{
	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

static void
state_set(uint32_t *w, uint32_t s)
{
	__atomic_store_n(w, s, __ATOMIC_RELEASE);
}

static int
state_move(uint32_t *w, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(w, &from, to, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Sleeps while the word in the mapping is still v, us at most: 1 if
 * the time ran out, 0 if woken (or the word had moved). */
static int
futex_sleep(uint32_t *word, uint32_t v, int64_t us)
{
	struct timespec ts;

	if (us <= 0)
		return 1;
	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000L;
	return syscall(SYS_futex, word, FUTEX_WAIT, v, &ts, NULL, 0) == -1 &&
	    errno == ETIMEDOUT;
}

static void
futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Sleeps while the record's state w is still s, ms at most: 1 if the
 * time ran out. */
static int
sleep_on(uint32_t *w, uint32_t s, int64_t ms)
{
	return futex_sleep(w, s, ms * 1000);
}

/* Takes the lead if nobody has it or, with check, if its holder died. */
static int
lead_claim(struct shm *m, int check)
{
	uint64_t held = __atomic_load_n(&m->f->group_leader, __ATOMIC_ACQUIRE);

	if (held != 0 && (!check || token_alive(held)))
		return 0;
	return __atomic_compare_exchange_n(&m->f->group_leader, &held,
	    my_token(m), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void *
shm_group_buffer(struct shm *m, size_t *size)
{
	struct shm_record	*r;
	uint32_t		*w, s;
	int			 tries;

	if (m == NULL || m->f == NULL || m->self == NULL)
		return NULL;
	r = record(m, self_index(m));
	w = state_word(m, self_index(m));
	/* What the slot's last owner left: a record still taken by a live
	 * leader is waited for, a while; the rest is forgotten. */
	for (tries = 0; (s = state_of(w)) != REC_FREE; tries++) {
		if (s == REC_TAKEN && token_alive(taker_of(r))) {
			if (tries == 3)
				return NULL;
			sleep_on(w, s, SHM_GROUP_CHECK_MS);
		} else
			state_move(w, s, REC_FREE);
	}
	*size = SHM_RECORD_SIZE - offsetof(struct shm_record, data);
	return r->data;
}

enum shm_group
shm_group_submit(struct shm *m, size_t len, int64_t wait_ms, int *written,
    struct error *e)
{
	struct shm_record	*r = record(m, self_index(m));
	uint32_t		*w = state_word(m, self_index(m)), s;
	int64_t			 until = clock_mono_us() + wait_ms * 1000, left;
	int			 check = 0;	/* a sleep ran its time out:
						 * look whether the leader
						 * lives (a look at /proc, not
						 * made at every wake) */

	r->len = (uint32_t)len;
	state_set(w, REC_READY);
	/* A leader awaiting records is woken (shm_group_await).  The fence
	 * orders our READY before our look at its flag, as its fence
	 * orders its flag before its look at the records: one of us sees
	 * the other. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&m->f->group_awaiting, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&m->f->group_submits, 1, __ATOMIC_RELEASE);
		futex_wake(&m->f->group_submits);
	}
	for (;;) {
		switch (s = state_of(w)) {
		case REC_DONE:
		case REC_ALONE:
		case REC_LEAD:
			state_set(w, REC_FREE);
			/* Alone after a leader took it: it may have been
			 * written before that leader died. */
			*written = s == REC_ALONE;
			return s == REC_DONE ? SHM_GROUP_DONE : s == REC_LEAD ?
			    SHM_GROUP_LEAD : SHM_GROUP_ALONE;
		case REC_FAILED:
			error_set(e, (enum err_code)r->err_code, NULL, "%s",
			    r->err_message);
			e->retry_after_ms = (long)r->err_retry_ms;
			/* The leader's transaction failed: the database's
			 * failure, whatever it was. */
			e->unavailable = EU_DATABASE;
			state_set(w, REC_FREE);
			return SHM_GROUP_FAILED;
		case REC_READY:
		case REC_ORPHAN:
			/* Leading, the record is ours again. */
			if (lead_claim(m, check)) {
				if (state_move(w, s, REC_FREE)) {
					*written = s == REC_ORPHAN;
					return SHM_GROUP_LEAD;
				}
				shm_group_leave(m);	/* it moved on */
				continue;
			}
			left = (until - clock_mono_us()) / 1000;
			if (s == REC_READY && left <= 0) {
				if (!state_move(w, s, REC_FREE))
					continue;
				error_set(e, ERR_UNAVAILABLE, NULL, "the database "
				    "is not available (busy); try again");
				e->retry_after_ms = 1000;
				e->unavailable = EU_DATABASE;
				return SHM_GROUP_FAILED;
			}
			check = sleep_on(w, s, s == REC_READY &&
			    left < SHM_GROUP_CHECK_MS ? left :
			    SHM_GROUP_CHECK_MS);
			break;
		case REC_TAKEN:
			/* Being written: no withdrawing it now. */
			if (check && !token_alive(taker_of(r)))
				state_move(w, s, REC_ORPHAN);
			else
				check = sleep_on(w, s, SHM_GROUP_CHECK_MS);
			break;
		default:
			/* Not a state of ours: the record's memory went
			 * under us (the file cut short, shm_guard), perhaps
			 * after a leader took it: look before writing. */
			*written = 1;
			return SHM_GROUP_ALONE;
		}
	}
}

/* The next slot after the cursor, other than ours, whose record is in
 * state a or b; nslots when none. */
static size_t
next_waiting(struct shm *m, uint32_t a, uint32_t b)
{
	size_t	n = slots_used(m), self = self_index(m), i, k;
	uint32_t s;

	for (k = 0; k < n; k++) {
		i = (m->cursor + k) % n;
		if (i != self && ((s = state_of(state_word(m, i))) == a ||
		    s == b))
			return i;
	}
	return (size_t)m->nslots;
}

int
shm_group_take(struct shm *m, const void **data, size_t *len, int *written)
{
	struct shm_record	*r;
	size_t			 i;
	uint32_t		*w, s;

	while (m->taken < SHM_GROUP_MAX && (i = next_waiting(m, REC_READY,
	    REC_ORPHAN)) < m->nslots) {
		r = record(m, i);
		w = state_word(m, i);
		s = state_of(w);
		__atomic_store_n(&r->taker, my_token(m), __ATOMIC_RELAXED);
		if ((s != REC_READY && s != REC_ORPHAN) ||
		    !state_move(w, s, REC_TAKEN))
			continue;	/* withdrawn, or taken over */
		m->cursor = i + 1;
		m->taken++;
		*data = r->data;
		*len = r->len < SHM_RECORD_SIZE -
		    offsetof(struct shm_record, data) ? r->len : 0;
		*written = s == REC_ORPHAN;
		return (int)i;
	}
	return -1;
}

/* Whether the owner of slot i is to submit a decision soon: it serves
 * a request, waits neither on a backend nor in a queue (behind us,
 * perhaps), has no record in, and its pid runs.  Only that is asked of
 * the kernel (kill 0), not whether the pid is still the owner's (a look
 * at /proc at every commit): a pid given to another process costs each
 * commit at most its await, until the slot is found free
 * (shm_maintain). */
static int
pending(struct shm *m, size_t i)
{
	struct shm_worker	*w = &m->f->slots[i];
	pid_t			 pid = __atomic_load_n(&w->pid,
				    __ATOMIC_RELAXED);

	return pid != 0 && __atomic_load_n(&w->serving, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&w->backend_id, __ATOMIC_RELAXED) == 0 &&
	    !__atomic_load_n(&w->queued, __ATOMIC_RELAXED) &&
	    state_of(state_word(m, i)) == REC_FREE &&
	    !(kill(pid, 0) == -1 && errno == ESRCH);
}

int
shm_group_await(struct shm *m, int64_t until_us)
{
	size_t		 n = slots_used(m), self = self_index(m), i;
	int64_t		 left = until_us - clock_mono_us();
	uint32_t	 seen;

	if (left <= 0)
		return 0;
	seen = __atomic_load_n(&m->f->group_submits, __ATOMIC_ACQUIRE);
	__atomic_store_n(&m->f->group_awaiting, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < n && (i == self || !pending(m, i)); i++)
		;
	if (i < n && next_waiting(m, REC_READY, REC_ORPHAN) ==
	    (size_t)m->nslots)
		futex_sleep(&m->f->group_submits, seen, left);
	__atomic_store_n(&m->f->group_awaiting, 0, __ATOMIC_RELAXED);
	return i < n;
}

void
shm_serving(struct shm *m, int on)
{
	if (m != NULL && m->self != NULL)
		__atomic_store_n(&m->self->serving, (uint32_t)on,
		    __ATOMIC_RELAXED);
}

void
shm_group_leave(struct shm *m)
{
	struct shm_worker	*w;
	uint64_t		 me = my_token(m), to;
	uint32_t		*s;
	size_t			 i;

	m->taken = 0;
	for (;;) {
		/* Hand it to an owner waiting: it begins the next
		 * transaction while ours syncs. */
		if ((i = next_waiting(m, REC_READY, REC_READY)) <
		    m->nslots) {
			w = &m->f->slots[i];
			s = state_word(m, i);
			to = token(w->pid, w->started);
			__atomic_store_n(&m->f->group_leader, to,
			    __ATOMIC_RELEASE);
			if (state_move(s, REC_READY, REC_LEAD)) {
				futex_wake(s);
				return;
			}
			/* Withdrawn meanwhile: the lead is ours again,
			 * unless an owner took it from the one named. */
			if (!__atomic_compare_exchange_n(&m->f->group_leader,
			    &to, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return;
			continue;
		}
		__atomic_store_n(&m->f->group_leader, 0, __ATOMIC_RELEASE);
		/* An owner that found us leading just before may sleep
		 * until we look again. */
		if (next_waiting(m, REC_READY, REC_READY) == m->nslots ||
		    !lead_claim(m, 0))
			return;
	}
}

void
shm_group_finish(struct shm *m, int h, enum shm_group how,
    const struct error *e)
{
	struct shm_record	*r = record(m, (size_t)h);
	uint32_t		*w = state_word(m, (size_t)h);

	if (how == SHM_GROUP_FAILED) {
		r->err_code = (int32_t)e->code;
		r->err_retry_ms = e->retry_after_ms;
		snprintf(r->err_message, sizeof(r->err_message), "%s",
		    e->message);
	}
	state_set(w, finished[how]);
	futex_wake(w);
}
