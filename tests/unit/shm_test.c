/* shm_test.c: TAP tests of the host's shared memory (src/shm.c) with
 * real processes: the file is made with the mode asked, each process
 * gets its own slot, a process killed while holding the mutex does not
 * stall the others, the slot of a killed process is freed, a deleted or
 * replaced file is noticed and mapped anew by everyone, a file of
 * another layout is replaced, not reused, and the metrics of a process
 * killed -9 survive its slot being taken again (folded into the retired
 * figures, never counted twice); the write-lock queues (a holder killed
 * hands the queue on, a waiter killed takes nothing, a wait is bounded)
 * and the admission table (exact, rebuilt, evicted); shm_join maps only
 * a file the workers made; group commit (records taken once, each
 * owner told, the lead handed on, a wait bounded, a dead leader's records
 * taken over; a leader awaits the records of workers serving, woken by
 * the submission, and nobody else's); SERVICE_CPU_AFFINITY (workers
 * spread evenly over the CPUs they may use, each kept to its own, a
 * freed CPU taken by the next, the CPU kept in a file made anew). */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "metrics.h"
#include "shm.h"
#include "shm_admit.h"
#include "shm_budget.h"
#include "shm_file.h"
#include "shm_flight.h"
#include "shm_group.h"
#include "shm_metrics.h"
#include "shm_probe.h"
#include "shm_queue.h"
#include "shm_streak.h"
#include "tap.h"

static char path[256];

/* The monotonic clock in ms, as the in-flight counts take it. */
static int64_t
now_ms(void)
{
	return clock_mono_us() / 1000;
}

/* Forks a child that runs body(fd, arg), writing to fd what it has
 * done; its pid once it wrote the first byte, if that is want, else -1.
 * With rd, what it writes next is read there (the caller closes it). */
static pid_t
spawn(void (*body)(int, const void *), const void *arg, char want, int *rd)
{
	int	 fds[2];
	pid_t	 pid;
	char	 c = 0;

	if (pipe(fds) == -1 || (pid = fork()) == -1)
		abort();
	if (pid == 0) {
		close(fds[0]);
		body(fds[1], arg);
		_exit(0);
	}
	close(fds[1]);
	(void)read(fds[0], &c, 1);
	if (rd != NULL)
		*rd = fds[0];
	else
		close(fds[0]);
	return c == want ? pid : -1;
}

/* A child that attaches, says so ('x'), then does *what = 'w' (wait to
 * be killed), 'l' (takes the lock, then waits), 'i' (takes the in-flight
 * count of backend 7, limit 1, then waits), 'm' (counts 5 in metrics
 * cell 0 and 3 in cell 7 of its slot, then waits), 'q' (takes the
 * database's write-lock queue, then waits) or 'Q' (says so, then waits
 * in that queue for a minute, then waits). */
static void
child_body(int fd, const void *arg)
{
	char		 what = *(const char *)arg;
	struct error	 e = { 0 };
	struct shm	*m = shm_attach(path, 4, 0600, &e);

	if (m == NULL || (what == 'l' && shm_lock(m) == -1) ||
	    (what == 'i' && shm_inflight_take(m, 7, 1, 0, now_ms()) != 1) ||
	    (what == 'm' && shm_metrics_self(m) == NULL) ||
	    (what == 'q' && shm_queue_enter(m, SHM_QUEUE_DB, 1000) != 1))
		_exit(1);
	if (what == 'm') {
		shm_metrics_self(m)->cell[0] += 5;
		shm_metrics_self(m)->cell[7] += 3;
	}
	(void)write(fd, "x", 1);
	if (what == 'Q')
		(void)shm_queue_enter(m, SHM_QUEUE_DB, 60000);
	pause();
}

static pid_t
child(char what)
{
	return spawn(child_body, &what, 'x', NULL);
}

static void
kill_wait(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Charges one unit; *arg is told the new total. */
static void
bump(struct shm_admission *a, void *arg)
{
	static int64_t	now;

	a->used++;
	a->tat_ms = ++now;
	*(size_t *)arg = (size_t)a->used;
}

/* How many slots are taken. */
static size_t
taken(struct shm *m)
{
	struct shm_worker	*w;
	size_t			 i, n, k = 0;

	if (shm_lock(m) == -1)
		return (size_t)-1;
	w = shm_slots(m, &n);
	for (i = 0; i < n; i++)
		k += w[i].pid != 0;
	shm_unlock(m);
	return k;
}

/* Cell c summed over every slot and the retired figures, as
 * metrics_collect() sums them; *retired gets the retired figure. */
static uint64_t
cell_sum(struct shm *m, size_t c, uint64_t *retired)
{
	size_t		 i, n;
	uint64_t	 v = 0;

	if (shm_lock(m) == -1)
		return (uint64_t)-1;
	shm_slots(m, &n);
	for (i = 0; i < n; i++)
		v += shm_metrics_at(m, i)->cell[c];
	*retired = shm_metrics_retired(m)->cell[c];
	shm_unlock(m);
	return v + *retired;
}

static void
test_metrics(void)
{
	struct error	 e = { 0 };
	struct shm	*m;
	pid_t		 dead, kids[SHM_SLOTS(4)], last;
	uint64_t	 retired;
	size_t		 k = 0, i, n;
	char		 name[32];

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	ok(m != NULL && shm_metrics_self(m) != NULL,
	    "metrics: this process has cells");
	shm_metrics_self(m)->cell[0] += 1;
	dead = child('m');
	ok(dead > 0, "a child counted 5 and 3 in its slot");
	kill_wait(dead);
	ok(cell_sum(m, 0, &retired) == 6 && retired == 0 &&
	    cell_sum(m, 7, &retired) == 3,
	    "killed -9: its figures are still summed (6, 3), in its slot");
	/* Every other slot taken, then one more process: it takes the
	 * dead one's slot, whose figures are folded first. */
	n = SHM_SLOTS(4);
	for (i = 0; i + 2 < n; i++)
		if ((kids[k] = child('w')) > 0)
			k++;
	ok(k == n - 2 && taken(m) == n, "every slot taken (%zu)", n);
	last = child('w');
	ok(last > 0, "one more process: it reaps the dead one's slot");
	ok(cell_sum(m, 0, &retired) == 6 && retired == 5 &&
	    cell_sum(m, 7, &retired) == 3 && retired == 3,
	    "the figures were folded into the retired ones: nothing lost, "
	    "nothing counted twice");
	kill_wait(last);
	for (i = 0; i < k; i++)
		kill_wait(kids[i]);

	ok(shm_metric_name(m, SHM_NAMES_BACKEND, "alpha") == 0 &&
	    shm_metric_name(m, SHM_NAMES_BACKEND, "beta") == 1 &&
	    shm_metric_name(m, SHM_NAMES_BACKEND, "alpha") == 0 &&
	    shm_metric_name(m, SHM_NAMES_SCHEMA, "beta") == 0,
	    "label names: an index each, per table, stable");
	for (i = 2; i < SHM_METRIC_NAMES; i++) {
		snprintf(name, sizeof(name), "b%zu", i);
		if (shm_metric_name(m, SHM_NAMES_BACKEND, name) != (int)i)
			break;
	}
	ok(i == SHM_METRIC_NAMES && shm_metric_name(m, SHM_NAMES_BACKEND,
	    "one-too-many") == -1 && shm_metric_name(m, SHM_NAMES_BACKEND,
	    "b9") == 9, "a full table refuses new names (-1: \"other\"), "
	    "keeps the old");
	ok(shm_metric_name(NULL, SHM_NAMES_BACKEND, "x") == -1 &&
	    shm_metrics_self(NULL) == NULL, "no mapping: no cells");
	shm_detach(m);
	unlink(path);
}

/* The last hour's ring: a minute's entry is emptied when a later
 * minute takes it, never counted in by an earlier one; the sum of the
 * last hour holds the minutes of the last SHM_MINUTES only, beside the
 * totals, which it leaves as they were. */
static void
test_minutes(void)
{
	struct error		 e = { 0 };
	struct metrics_snapshot	*s = calloc(1, sizeof(*s));
	struct shm		*m;
	uint64_t		*c, *c2;
	int64_t			 now;

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	c = shm_minute_cells(m, 1000);
	ok(c != NULL && c[0] == 0, "minutes: an entry for minute 1000");
	if (c == NULL || s == NULL)
		goto out;
	c[0] += 5;
	ok(shm_minute_cells(m, 1000) == c && c[0] == 5,
	    "the same minute: the same cells, as counted");
	c2 = shm_minute_cells(m, 1000 + SHM_MINUTES);
	ok(c2 == c && c[0] == 0, "an hour later: the entry, emptied");
	c[1] += 2;
	ok(shm_minute_cells(m, 1000) == c && c[1] == 0,
	    "an hour earlier (the clock stepped back): emptied again");
	ok(shm_minute_cells(NULL, 1000) == NULL && shm_minute_cells(m, 0) ==
	    NULL, "no mapping, no minute: no cells");

	shm_set_host(m);
	/* Counted and summed in the same minute. */
	if ((now = clock_now_ms()) % 60000 > 55000)
		usleep((useconds_t)(60000 - now % 60000 + 100) * 1000);
	now = clock_now_ms();
	metrics_request(3, 200, 1000);
	metrics_request(3, 404, 3000);
	metrics_request(3, 503, 2000);
	metrics_backend("bk", MO_OK, 500);
	metrics_backend("bk", MO_HTTP_429, 500);
	metrics_backend("bk", MO_TIMEOUT, 500);
	ok(metrics_collect(m, now, s) == 0 && s->recent.route[3].n == 3 &&
	    s->recent.route[3].client == 1 && s->recent.route[3].server == 1 &&
	    s->recent.route[3].us == 6000,
	    "the last hour: a route's requests, 4xx, 5xx, their time");
	ok(s->nbackends == 1 && s->recent.backend[0].n == 3 &&
	    s->recent.backend[0].client == 1 &&
	    s->recent.backend[0].server == 1,
	    "a backend's calls, refused, failed");
	ok(metrics_collect(m, now + 59 * 60000, s) == 0 &&
	    s->recent.route[3].n == 3, "59 minutes on: still counted");
	ok(metrics_collect(m, now + SHM_MINUTES * 60000, s) == 0 &&
	    s->recent.route[3].n == 0 && s->recent.backend[0].n == 0 &&
	    s->sum.requests[3][0] == 1 && s->sum.backend[0][MO_OK] == 1,
	    "an hour on: out of the last hour, still in the totals");
	ok(metrics_collect(m, now - 60000, s) == 0 &&
	    s->recent.route[3].n == 0, "a minute not yet come: not counted");
	shm_set_host(NULL);
out:
	free(s);
	shm_detach(m);
	unlink(path);
}

/* Group commit: a child that submits the one-letter record *arg (its
 * wait: 200 ms for 'w', else 10 s), saying 'x' just before, and exits
 * with what it was told: 0 DONE, 1 ALONE, 2 LEAD, 3 LEAD with the record
 * perhaps written by a dead leader, 4 FAILED, 9 no buffer. */
static void
submitter_body(int fd, const void *arg)
{
	static const int code[] = { [SHM_GROUP_DONE] = 0,
	    [SHM_GROUP_ALONE] = 1, [SHM_GROUP_LEAD] = 2,
	    [SHM_GROUP_FAILED] = 4 };
	const char	*text = arg;
	struct error	 e = { 0 };
	struct shm	*m = shm_attach(path, 4, 0600, &e);
	size_t		 size;
	char		*buf;
	enum shm_group	 g;
	int		 written = 0;

	if (m == NULL || (buf = shm_group_buffer(m, &size)) == NULL)
		_exit(9);
	memcpy(buf, text, 2);
	(void)write(fd, "x", 1);
	g = shm_group_submit(m, 2, text[0] == 'w' ? 200 : 10000, &written,
	    &e);
	_exit(code[g] + (g == SHM_GROUP_LEAD && written));
}

static pid_t
submitter(const char *text)
{
	return spawn(submitter_body, text, 'x', NULL);
}

/* A child that leads, says 'l', takes one record (waiting up to a
 * second), says 't', then waits to be killed. */
static void
leader_body(int fd, const void *arg)
{
	struct error	 e = { 0 };
	struct shm	*m = shm_attach(path, 4, 0600, &e);
	const void	*data;
	size_t		 size, len;
	int		 w, tries;

	(void)arg;
	if (m == NULL || shm_group_buffer(m, &size) == NULL ||
	    shm_group_submit(m, 1, 1000, &w, &e) != SHM_GROUP_LEAD)
		_exit(1);
	(void)write(fd, "l", 1);
	for (tries = 0; tries < 1000 &&
	    shm_group_take(m, &data, &len, &w) < 0; tries++)
		usleep(1000);
	(void)write(fd, "t", 1);
	pause();
}

static int
exit_code(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Takes records, for up to a second, until n are taken; their texts are
 * joined into got (sorted by the caller's choice of texts: each is one
 * letter) and their handles into h. */
static int
take_n(struct shm *m, int n, int *h, char *got, int *written)
{
	const void	*data;
	size_t		 len;
	int		 k = 0, w, tries;

	for (tries = 0; k < n && tries < 1000; tries++) {
		if ((h[k] = shm_group_take(m, &data, &len, &w)) < 0) {
			usleep(1000);
			continue;
		}
		got[((const char *)data)[0] - 'a'] = ((const char *)data)[0];
		*written |= w;
		k++;
	}
	return k;
}

static void
test_group(void)
{
	struct error	 e = { 0 };
	struct shm	*m;
	const void	*data;
	size_t		 size, len;
	pid_t		 kids[3], f, l;
	char		*buf, got[4] = "---", c = 0;
	int		 h[4], i, w = 0, written = 1, fails = 0, rd = -1;

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	buf = shm_group_buffer(m, &size);
	ok(buf != NULL && size + 1024 > SHM_RECORD_SIZE && size <
	    SHM_RECORD_SIZE, "group: a record buffer of %zu bytes", size);
	memcpy(buf, "own", 4);
	ok(shm_group_submit(m, 4, 1000, &written, &e) == SHM_GROUP_LEAD &&
	    written == 0, "alone on the host: it leads");
	ok(shm_group_take(m, &data, &len, &w) == -1, "nobody else waits");

	/* Three owners submit while we lead: we take the three, each
	 * once, then finish them; each hears DONE. */
	kids[0] = submitter("a");
	kids[1] = submitter("b");
	kids[2] = submitter("c");
	ok(take_n(m, 3, h, got, &w) == 3 && strcmp(got, "abc") == 0 &&
	    w == 0, "the leader takes the three records waiting (%s)", got);
	ok(shm_group_take(m, &data, &len, &w) == -1, "each once");
	shm_group_leave(m);
	for (i = 0; i < 3; i++)
		shm_group_finish(m, h[i], SHM_GROUP_DONE, NULL);
	for (i = 0; i < 3; i++)
		fails += exit_code(kids[i]) != 0;
	ok(fails == 0, "each owner is told DONE");

	/* Leaving while one waits hands it the lead. */
	ok(shm_group_submit(m, 4, 1000, &written, &e) == SHM_GROUP_LEAD,
	    "the lead is free again");
	f = submitter("a");
	usleep(50000);
	shm_group_leave(m);
	ok(exit_code(f) == 2, "leaving hands the lead to an owner waiting");

	/* An owner told ALONE writes its own; one told FAILED hears why. */
	ok(shm_group_submit(m, 4, 1000, &written, &e) == SHM_GROUP_LEAD,
	    "leading again");
	kids[0] = submitter("a");
	kids[1] = submitter("b");
	memset(got, '-', 3);
	ok(take_n(m, 2, h, got, &w) == 2, "two taken");
	shm_group_leave(m);
	error_set(&e, ERR_UNAVAILABLE, NULL, "disk on fire");
	shm_group_finish(m, h[0], SHM_GROUP_ALONE, NULL);
	shm_group_finish(m, h[1], SHM_GROUP_FAILED, &e);
	error_clear(&e);
	i = exit_code(kids[0]) + exit_code(kids[1]);
	ok(i == 1 + 4, "told ALONE and FAILED (%d)", i);

	/* A record nobody takes is withdrawn after its wait, then free. */
	ok(shm_group_submit(m, 4, 1000, &written, &e) == SHM_GROUP_LEAD,
	    "leading, taking nothing");
	f = submitter("w");
	ok(exit_code(f) == 4, "an owner that waited its time hears FAILED");
	ok(shm_group_take(m, &data, &len, &w) == -1,
	    "and its record is withdrawn");
	shm_group_leave(m);

	/* A leader killed holding a record: its owner finds it gone,
	 * leads, and is told the record may be written. */
	l = spawn(leader_body, NULL, 'l', &rd);
	f = submitter("a");
	ok(l > 0 && read(rd, &c, 1) == 1 && c == 't',
	    "a child leads and takes the record waiting");
	close(rd);
	kill_wait(l);
	i = exit_code(f);
	ok(i == 3, "the leader killed: the owner leads within %d ms, told "
	    "to look whether it was written (%d)", SHM_GROUP_CHECK_MS, i);
	shm_detach(m);
	unlink(path);
}

/* A child that attaches, serves a request and says 'x', then does
 * *what = 's' (submits its record after 100 ms and exits 0 once told
 * DONE), 'b' (waits on backend 7, then waits), 'q' (waits in the
 * database's write-lock queue, exits 0 once it has it) or 'p'
 * (waits). */
static void
server_body(int fd, const void *arg)
{
	char		 what = *(const char *)arg;
	struct error	 e = { 0 };
	struct shm	*m = shm_attach(path, 4, 0600, &e);
	size_t		 size;
	char		*buf;
	int		 w;

	if (m == NULL || (buf = shm_group_buffer(m, &size)) == NULL ||
	    (what == 'b' && shm_inflight_take(m, 7, 5, 0, now_ms()) != 1))
		_exit(9);
	shm_serving(m, 1);
	(void)write(fd, "x", 1);
	if (what == 'q')
		_exit(shm_queue_enter(m, SHM_QUEUE_DB, 10000) == 1 ? 0 : 1);
	if (what != 's')
		pause();
	usleep(100000);
	memcpy(buf, "s", 2);
	_exit(shm_group_submit(m, 2, 10000, &w, &e) == SHM_GROUP_DONE ? 0 : 1);
}

static pid_t
server(char what)
{
	return spawn(server_body, &what, 'x', NULL);
}

/* Awaits until now + ms; 1 or 0 as shm_group_await, *took the ms it
 * took. */
static int
await_ms(struct shm *m, int64_t ms, int64_t *took)
{
	int64_t t0 = clock_mono_us();
	int	rc = shm_group_await(m, t0 + ms * 1000);

	*took = (clock_mono_us() - t0) / 1000;
	return rc;
}

static void
test_await(void)
{
	struct error	 e = { 0 };
	struct shm	*m;
	const void	*data;
	size_t		 size, len;
	pid_t		 f, g;
	int64_t		 took;
	int		 h, w = 0, written, rc;

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	shm_serving(m, 1);
	ok(shm_group_buffer(m, &size) != NULL &&
	    shm_group_submit(m, 4, 1000, &written, &e) == SHM_GROUP_LEAD,
	    "await: leading");
	rc = await_ms(m, 5000, &took);
	ok(rc == 0 && took < 1000,
	    "nobody else serving: no wait (%lld ms)", (long long)took);

	/* One serving submits after 100 ms: the leader wakes then. */
	f = server('s');
	rc = await_ms(m, 5000, &took);
	ok(rc == 1 && took < 2000,
	    "a worker serving: awaited until it submits (%lld ms)",
	    (long long)took);
	ok((h = shm_group_take(m, &data, &len, &w)) >= 0 &&
	    strcmp(data, "s") == 0, "and its record is there to take");
	rc = await_ms(m, 5000, &took);
	ok(rc == 0 && took < 1000,
	    "its record in: not awaited again (%lld ms)", (long long)took);
	shm_group_finish(m, h, SHM_GROUP_DONE, NULL);
	ok(exit_code(f) == 0, "its owner is told DONE");

	/* Waiting on a backend, it will not submit soon. */
	f = server('b');
	rc = await_ms(m, 5000, &took);
	ok(rc == 0 && took < 1000,
	    "a worker waiting on a backend: not awaited (%lld ms)",
	    (long long)took);

	/* Waiting in the queue we hold, it cannot submit before we are
	 * done. */
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 1000) == 1, "holding the queue");
	g = server('q');
	usleep(100000);		/* asleep in the queue */
	rc = await_ms(m, 5000, &took);
	ok(rc == 0 && took < 1000,
	    "a worker waiting in the queue: not awaited (%lld ms)",
	    (long long)took);
	shm_queue_leave(m, SHM_QUEUE_DB);
	ok(exit_code(g) == 0, "it has the queue once we leave it");

	/* One serving that never submits: awaited until the time given,
	 * then no more; killed, not at all. */
	g = server('p');
	rc = await_ms(m, 300, &took);
	ok(rc == 1 && took >= 250 && took < 2000,
	    "a worker serving that does not submit: awaited as long as "
	    "asked (%lld ms)", (long long)took);
	rc = await_ms(m, 0, &took);
	ok(rc == 0, "then not again");
	kill_wait(g);
	rc = await_ms(m, 5000, &took);
	ok(rc == 0 && took < 1000,
	    "a worker killed serving: not awaited (%lld ms)",
	    (long long)took);
	kill_wait(f);
	shm_group_leave(m);
	shm_detach(m);
	unlink(path);
}

/* A child that attaches and spreads, then tells (after its 'x') the CPU
 * it keeps to, whether that is the one CPU it may run on, and the CPU
 * its slot names; with *arg 'n', in a file made anew after it spread.
 * Then waits to be killed. */
static void
spread_body(int fd, const void *arg)
{
	struct error	 e = { 0 };
	struct shm	*m = shm_attach(path, 4, 0600, &e);
	cpu_set_t	 now;
	int		 told[3];

	if (m == NULL)
		_exit(9);
	told[0] = shm_spread(m);
	told[1] = sched_getaffinity(0, sizeof(now), &now) == 0 &&
	    CPU_COUNT(&now) == 1 && told[0] >= 0 && CPU_ISSET(told[0], &now);
	if (*(const char *)arg == 'n' && (unlink(path) == -1 ||
	    shm_maintain(m) == -1))
		_exit(9);
	if (shm_lock(m) == -1)
		_exit(9);
	told[2] = shm_self(m)->cpu;
	shm_unlock(m);
	(void)write(fd, "x", 1);
	(void)write(fd, told, sizeof(told));
	pause();
}

/* Starts a spreading child; told as spread_body tells it. */
static pid_t
spreader(char what, int told[3])
{
	int	 rd;
	pid_t	 pid = spawn(spread_body, &what, 'x', &rd);

	if (pid == -1 || read(rd, told, 3 * sizeof(int)) !=
	    (ssize_t)(3 * sizeof(int)))
		told[0] = told[1] = told[2] = -2;
	close(rd);
	return pid;
}

static void
test_spread(void)
{
	struct error	 e = { 0 };
	struct shm	*m;
	cpu_set_t	 allowed;
	pid_t		 kids[32];
	int		 told[32][3], per[CPU_SETSIZE] = { 0 };
	int		 ncpu, k, i, mine, kept = 1, named = 1, lo, hi;

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	if (m == NULL || sched_getaffinity(0, sizeof(allowed), &allowed) ==
	    -1)
		abort();
	ncpu = CPU_COUNT(&allowed);
	k = 2 * (ncpu < 16 ? ncpu : 16);	/* two to a CPU */
	for (i = 0; i < k; i++) {
		kids[i] = spreader('w', told[i]);
		kept &= told[i][1] == 1;
		named &= told[i][2] == told[i][0];
		if (told[i][0] >= 0 && told[i][0] < CPU_SETSIZE &&
		    CPU_ISSET(told[i][0], &allowed))
			per[told[i][0]]++;
	}
	ok(kept, "spread: each of %d workers keeps to one CPU it may use", k);
	ok(named, "spread: each slot names its worker's CPU");
	for (i = 0, lo = k, hi = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed)) {
			lo = per[i] < lo ? per[i] : lo;
			hi = per[i] > hi ? per[i] : hi;
		}
	ok(ncpu <= 16 ? lo == 2 && hi == 2 : hi == 1,
	    "spread: evenly over the %d CPUs (%d to %d a CPU)", ncpu, lo, hi);

	/* One killed, its slot reaped: the next worker takes its CPU. */
	mine = told[0][0];
	kill_wait(kids[0]);
	ok(shm_lock(m) == 0 && shm_reap(m) == 1, "spread: one killed");
	shm_unlock(m);
	kids[0] = spreader('w', told[0]);
	ok(ncpu > 16 || told[0][0] == mine,
	    "spread: the next takes the CPU it freed (%d, was %d)",
	    told[0][0], mine);

	/* The file deleted under a spread worker: its new slot names the
	 * CPU it keeps to, the highest (as a slot new and zeroed would
	 * not, but on a host of one CPU). */
	for (i = 0, hi = 0; i < k; i++)
		hi = told[i][0] > told[hi][0] ? i : hi;
	mine = told[hi][0];
	kill_wait(kids[hi]);
	ok(shm_lock(m) == 0 && shm_reap(m) == 1, "spread: another killed");
	shm_unlock(m);
	kids[hi] = spreader('n', told[hi]);
	ok(told[hi][0] == mine && told[hi][2] == mine,
	    "spread: a file made anew names the CPU kept (%d, %d)",
	    told[hi][0], told[hi][2]);
	for (i = 0; i < k; i++)
		kill_wait(kids[i]);
	shm_detach(m);
	unlink(path);
}

/* Stops the test, saying why (a step of the test itself failed). */
static void
die(const char *what)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s: %s\n", path, what, strerror(errno));
	exit(2);
}

/* Writes len bytes of value v at off into the file at path. */
static void
scribble(off_t off, int v, size_t len)
{
	char	buf[256];
	FILE	*f = fopen(path, "r+");

	memset(buf, v, sizeof(buf));
	if (f == NULL || fseeko(f, off, SEEK_SET) != 0 ||
	    fwrite(buf, 1, len < sizeof(buf) ? len : sizeof(buf), f) == 0)
		die("scribble");
	fclose(f);
}

/* Marks the file m maps (a metrics cell of its slot), so that anew()
 * tells a file made since (the inode number may be given again). */
static void
mark(struct shm *m)
{
	shm_metrics_self(m)->cell[3] = 1;
}

static int
anew(struct shm *m)
{
	return shm_metrics_self(m) != NULL &&
	    shm_metrics_self(m)->cell[3] == 0 && taken(m) == 1 &&
	    shm_workers(m) == 1;
}

/* The file damaged in place or replaced under a process that maps it:
 * a copy put in its place (a restore, an rsync) is not reused, a file
 * cut short (to nothing, to one page with its header whole) neither,
 * and a process touching its mapping when it was cut short lives on
 * (shm_guard); a lock word scribbled on costs a bounded wait, a slot
 * count scribbled on is never used; each time the file is made anew. */
static void
test_damage(void)
{
	struct error	 e = { 0 };
	struct shm	*m, *other;
	struct stat	 sb, after;
	char		 copy[300], cmd[1300];
	int64_t		 t0;
	uint64_t	 huge = (uint64_t)1 << 40;
	FILE		*f;

	unlink(path);
	m = shm_attach(path, 4, 0600, &e);
	shm_set_host(m);
	ok(m != NULL && shm_guard() == 0, "damage: attached, SIGBUS caught");

	/* A copy moved into place, as a restore or an rsync does. */
	mark(m);
	snprintf(copy, sizeof(copy), "%s.copy", path);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && mv -f '%s' '%s'", path,
	    copy, copy, path);
	if (system(cmd) != 0)
		die(cmd);
	ok(shm_maintain(m) == 0 && anew(m),
	    "a copy moved into its place: not reused (its pids and lead "
	    "are another file's), a new file made");

	/* Cut short in place, between requests. */
	mark(m);
	if (truncate(path, 0) != 0)
		die("truncate");
	ok(shm_maintain(m) == 0 && anew(m),
	    "truncated to nothing: a new file made");
	mark(m);
	if (truncate(path, 4096) != 0)
		die("truncate");
	ok(shm_maintain(m) == 0 && anew(m),
	    "truncated to one page, its header whole: a new file made");

	/* Cut short, then mapped by another process before this one
	 * looked: set up again in place, the file would be shared with
	 * processes that keep their slots (and the lead) in its old
	 * header. */
	if (stat(path, &sb) != 0 || truncate(path, 0) != 0)
		die("truncate");
	other = shm_attach(path, 4, 0600, &e);
	ok(other != NULL && stat(path, &after) == 0 &&
	    after.st_ino != sb.st_ino, "cut short, then attached by another "
	    "process: a new file, not the one cut short set up again");
	ok(shm_maintain(m) == 0 && taken(other) == 2 &&
	    shm_workers(other) == 2, "and the process that mapped the old "
	    "one maps the new one, in a slot of its own");
	shm_detach(other);

	/* Cut short while in use: the next touch of the mapping faults. */
	if (truncate(path, 0) != 0)
		die("truncate");
	mark(m);
	ok(shm_lock(m) == -1, "cut short under a process that touches its "
	    "mapping: it lives on, the mapping lost");
	ok(shm_maintain(m) == 0 && anew(m),
	    "and maps a new file between requests");

	/* The mutex's word scribbled on. */
	mark(m);
	scribble((off_t)offsetof(struct shm_file, lock), 0x5a,
	    sizeof(pthread_mutex_t));
	t0 = clock_mono_us();
	ok(shm_lock(m) == -1 && clock_mono_us() - t0 < 10 * 1000000,
	    "a lock word scribbled on: the lock is refused within 10 s "
	    "(%lld ms)", (long long)((clock_mono_us() - t0) / 1000));
	ok(shm_maintain(m) == 0 && anew(m), "the file is made anew, and "
	    "its lock taken");

	/* The slot count scribbled on: never used for an offset. */
	mark(m);
	if ((f = fopen(path, "r+")) == NULL || fseeko(f, (off_t)offsetof(
	    struct shm_file, nslots), SEEK_SET) != 0 ||
	    fwrite(&huge, sizeof(huge), 1, f) != 1)
		die("overwrite");
	fclose(f);
	ok(taken(m) == 1 && shm_metrics_retired(m) != NULL,
	    "a slot count scribbled on: looks over the slots keep to the "
	    "count mapped");
	ok(shm_maintain(m) == 0 && anew(m),
	    "and the file is made anew between requests");

	shm_set_host(NULL);
	shm_detach(m);
	unlink(path);
	unlink(copy);
}

int
main(void)
{
	struct error	 e = { 0 };
	struct shm	*m, *m2, *j;
	struct stat	 sb;
	size_t		 n;
	int		 i;
	char		 other[300];
	pid_t		 a, b;
	FILE		*f;

	snprintf(path, sizeof(path), "/tmp/evalgate-shm-test-%ld",
	    (long)getpid());
	unlink(path);

	m = shm_attach(path, 4, 0600, &e);
	ok(m != NULL, "attach creates the file");
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600,
	    "mode 0600, as asked");
	ok(shm_lock(m) == 0 && shm_self(m) != NULL &&
	    shm_self(m)->pid == getpid() && shm_slots(m, &n) != NULL &&
	    n == 1, "a slot of its own, the only one ever taken: the looks "
	    "over the slots stop there");
	shm_unlock(m);
	ok(shm_workers(m) == 1, "one worker counted");

	a = child('w');
	b = child('w');
	ok(a > 0 && b > 0 && taken(m) == 3 && shm_workers(m) == 3,
	    "two more processes: three slots, three workers");
	kill_wait(a);
	ok(shm_lock(m) == 0 && shm_reap(m) == 1, "a killed process's slot "
	    "is reaped");
	shm_unlock(m);
	ok(taken(m) == 2 && shm_workers(m) == 2, "two slots left, two "
	    "workers counted");

	a = child('l');
	ok(a > 0, "a child holds the mutex");
	kill_wait(a);
	ok(shm_lock(m) == 0, "killed while holding it: the mutex is "
	    "recovered, not stuck");
	shm_unlock(m);
	ok(shm_lock(m) == 0, "and usable again");
	shm_unlock(m);
	kill_wait(b);
	ok(shm_lock(m) == 0 && shm_reap(m) == 2, "both killed children are reaped");
	shm_unlock(m);

	/* The file deleted: everyone maps a new one at the next check. */
	m2 = shm_attach(path, 4, 0600, &e);
	ok(m2 != NULL && taken(m) == 2, "a second handle, a second slot");
	unlink(path);
	ok(shm_maintain(m) == 0 && shm_maintain(m2) == 0,
	    "deleted: both notice and map anew");
	ok(access(path, F_OK) == 0 && taken(m) == 2 && taken(m2) == 2,
	    "one new file, the same two slots in it");
	ok(shm_maintain(m) == 0 && taken(m) == 2,
	    "unchanged: nothing is mapped again");
	shm_detach(m2);
	ok(taken(m) == 1, "detach frees the slot");

	/* The counters. */
	a = child('i');
	ok(a > 0, "a child calls backend 7 (limit 1)");
	ok(shm_inflight_take(m, 7, 1, 0, now_ms()) == 0, "limit 1: a second "
	    "call to 7 is refused");
	ok(shm_inflight_take(m, 8, 1, 0, now_ms()) == 1,
	    "another backend is not");
	shm_inflight_give(m, SHM_CALL_OTHER, 0);
	ok(shm_inflight_take(m, 7, 2, 0, now_ms()) == 1,
	    "limit 2: the second is let in");
	shm_inflight_give(m, SHM_CALL_OTHER, 0);
	ok(shm_inflight_take(m, 7, 1, 60000, now_ms()) == 1,
	    "limit 1 counting calls over 60 s old: the child's, younger, "
	    "does not count");
	shm_inflight_give(m, SHM_CALL_OTHER, 0);
	usleep(30000);
	ok(shm_inflight_take(m, 7, 1, 20, now_ms()) == 0,
	    "counting calls over 20 ms old: 30 ms later, it does");
	kill_wait(a);
	usleep(110000);		/* the owners of a full backend are asked
				 * at most every 100 ms */
	ok(shm_inflight_take(m, 7, 1, 0, now_ms()) == 1, "the child killed "
	    "in its call: its count is freed");
	shm_inflight_give(m, SHM_CALL_OTHER, 0);
	ok(shm_inflight_take(NULL, 7, 1, 0, now_ms()) == 1,
	    "no mapping: allowed");
	{
		struct shm_flight_view v;

		shm_inflight_view(m, 9, &v);
		ok(v.in_flight == 0 && v.latency_us == 0 && !v.failing &&
		    v.workers == 1, "a backend never called: nothing known, "
		    "one worker");
		shm_inflight_take(m, 9, 1, 0, now_ms());
		shm_inflight_view(m, 9, &v);
		ok(v.in_flight == 1, "in flight: counted");
		shm_inflight_give(m, SHM_CALL_ANSWERED, 8000);
		shm_inflight_take(m, 9, 1, 0, now_ms());
		shm_inflight_give(m, SHM_CALL_ANSWERED, 16000);
		shm_inflight_view(m, 9, &v);
		ok(v.in_flight == 0 && v.latency_us == 9000 && !v.failing,
		    "answered in 8 then 16 ms: latency 8 + 8/8 = 9 ms");
		shm_inflight_take(m, 9, 1, 0, now_ms());
		shm_inflight_give(m, SHM_CALL_FAILED, 3000000);
		shm_inflight_view(m, 9, &v);
		ok(v.failing && v.latency_us == 9000, "a failure: failing, "
		    "the latency of answers kept");
		shm_inflight_take(m, 9, 1, 0, now_ms());
		shm_inflight_give(m, SHM_CALL_ANSWERED, 9000);
		shm_inflight_view(m, 9, &v);
		ok(!v.failing, "an answer: no longer failing");
	}

	ok(shm_probe_claim(m, "http://a", 1000, 30000) == 1,
	    "the first probe of a replica is let through");
	ok(shm_probe_claim(m, "http://a", 20000, 30000) == 0,
	    "a second within the period is not");
	ok(shm_probe_claim(m, "http://b", 20000, 30000) == 1,
	    "another replica has its own");
	ok(shm_probe_claim(m, "http://a", 31000, 30000) == 1,
	    "after the period, the next probe");

	for (n = 0; n < 20 && shm_budget_take(m, "abcd1234", 5000, 10); n++)
		;
	ok(n == 10, "a budget of 10 runs a minute allows 10 (%zu)", n);
	ok(shm_budget_take(m, "efgh5678", 5000, 10) == 1,
	    "another prefix has its own budget");
	ok(shm_budget_take(m, "abcd1234", 64999, 10) == 0,
	    "still spent within the minute");
	ok(shm_budget_take(m, "abcd1234", 65000, 10) == 1,
	    "a minute later, a new budget");

	/* Failures in a row. */
	ok(shm_streak_add(m, "http://a", 1, 1000, 30000) == 1 &&
	    shm_streak_add(m, "http://a", 1, 2000, 30000) == 2,
	    "failures in a row count 1, 2");
	ok(shm_streak_add(m, "http://b", 1, 2000, 30000) == 1,
	    "another replica has its own count");
	ok(shm_streak_add(m, "http://a", 0, 3000, 30000) == 0 &&
	    shm_streak_add(m, "http://a", 1, 4000, 30000) == 1,
	    "a success ends the count");
	ok(shm_streak_add(m, "http://b", 1, 32000, 30000) == 1,
	    "a failure a period after the last starts a new count");
	ok(shm_streak_add(m, "http://c", 0, 5000, 30000) == 0,
	    "a success of a replica never counted: 0");
	ok(shm_streak_add(NULL, "http://a", 1, 1000, 30000) == -1,
	    "no mapping: no count");
	for (i = 0; i <= SHM_STREAKS; i++) {
		snprintf(other, sizeof(other), "http://e%d", i);
		shm_streak_add(m, other, 1, 40000 + i, 30000);
	}
	ok(shm_streak_add(m, other, 1, 41000, 30000) == 2,
	    "a full table: the least recent count gives way to a new one");

	/* The write-lock queues. */
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 100) == 1 &&
	    shm_queue_enter(m, SHM_QUEUE_CACHE, 100) == 1,
	    "each file has a queue of its own");
	a = child('Q');		/* waits behind us */
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 100) == 0,
	    "asked twice: refused, not deadlocked");
	shm_queue_leave(m, SHM_QUEUE_CACHE);
	usleep(100000);
	shm_queue_leave(m, SHM_QUEUE_DB);	/* to the child */
	usleep(100000);
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 200) == -1,
	    "the waiter was given the queue: the next waits, and gives up "
	    "after its wait");
	kill_wait(a);
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 1000) == 1,
	    "its holder killed: the queue is handed on");
	shm_queue_leave(m, SHM_QUEUE_DB);
	a = child('q');
	b = child('Q');
	kill_wait(b);		/* killed while waiting */
	kill_wait(a);		/* killed while holding */
	ok(shm_queue_enter(m, SHM_QUEUE_DB, 1000) == 1,
	    "a waiter and the holder killed: the queue is free");
	shm_queue_leave(m, SHM_QUEUE_DB);
	ok(shm_queue_enter(NULL, SHM_QUEUE_DB, 10) == 0,
	    "no mapping: no queue, go on");

	/* Admission. */
	ok(shm_admission(m, 42, 100, -1, bump, &n) == 0,
	    "an application not in the table: the caller is asked for the "
	    "database's counter");
	ok(shm_admission(m, 42, 100, 30, bump, &n) == 1 && n == 31,
	    "rebuilt from it (30), then charged: 31");
	ok(shm_admission(m, 42, 100, -1, bump, &n) == 1 && n == 32,
	    "then kept: 32");
	ok(shm_admission(m, 42, 101, -1, bump, &n) == 0,
	    "a new day: the database is asked again");
	ok(shm_admission(m, 42, 101, 0, bump, &n) == 1 && n == 1,
	    "and the day starts from its counter");
	for (i = 0; i < SHM_ADMITS * 2; i++)
		(void)shm_admission(m, 5000 + (int64_t)i, 101, 0, bump, &n);
	ok(shm_admission(m, 42, 101, -1, bump, &n) == 0,
	    "twice as many applications later: the oldest window forgotten, "
	    "to be rebuilt");
	ok(shm_admission(m, 5000 + SHM_ADMITS * 2 - 1, 101, -1, bump, &n) ==
	    1 && n == 2, "the latest kept");
	ok(shm_admission(NULL, 42, 101, 0, bump, &n) == -1,
	    "no mapping: -1, admission is kept elsewhere");

	/* The console joins only the workers' file. */
	n = (size_t)shm_workers(m);
	j = shm_join(path, &e);
	ok(j != NULL && shm_self(j) != NULL && (size_t)shm_workers(m) == n,
	    "shm_join maps the workers' file, takes a slot, and is not "
	    "counted among the workers");
	shm_detach(j);
	ok((size_t)shm_workers(m) == n, "nor uncounted when it leaves");
	snprintf(other, sizeof(other), "%s.none", path);
	j = shm_join(other, &e);
	ok(j == NULL && stat(other, &sb) == -1,
	    "and makes none where there is none");
	error_clear(&e);

	/* Replaced by a file of another layout: not reused. */
	shm_detach(m);
	f = fopen(path, "w");
	fputs("something else entirely, of another size and version", f);
	fclose(f);
	m = shm_attach(path, 4, 0600, &e);
	ok(m != NULL && stat(path, &sb) == 0 && sb.st_size > 64 &&
	    taken(m) == 1, "a file of another layout is replaced");
	shm_detach(m);
	unlink(path);
	test_metrics();
	test_minutes();
	test_group();
	test_await();
	test_spread();
	test_damage();
	return tap_done();
}
