/* shm.c: the host's shared memory: the file, its mutexes, the worker
 * slots, the write-lock queues (see shm.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "clock.h"
#include "log.h"
#include "shm.h"
#include "shm_file.h"
#include "xalloc.h"

#define SHM_TRIES	8		/* files replaced under us in a row */
#define SHM_RECOUNT_MS	100		/* a full backend's owners asked */
#define SHM_LOCK_WAIT_MS 2000		/* the mutex: longer is a broken one */
#define SHM_QUEUE_SLICE_MS 100		/* a queue's waiter looks at its file */

static struct shm	*host;		/* the process's mapping, or NULL */

/* The start time of process pid (field 22 of /proc/PID/stat, in clock
 * ticks since boot), or 0 when it cannot be read. */
uint64_t
shm_proc_started(pid_t pid)
{
	char			 path[64], buf[1024], *p;
	unsigned long long	 t = 0;
	ssize_t			 n;
	int			 fd, i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may hold spaces: count fields after its ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (i = 2; i < 22 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &t) != 1)
		return 0;
	return (uint64_t)t;
}

int
shm_owner_alive(const struct shm_worker *w)
{
	if (w->pid <= 0)
		return 0;
	if (kill(w->pid, 0) == -1 && errno == ESRCH)
		return 0;
	/* A pid the kernel gave to another process since. */
	return w->started == 0 || shm_proc_started(w->pid) == w->started;
}

/* Sets up the file's header and mutexes, magic last.  The queues check
 * their owner: a process that asked twice is told, not deadlocked. */
static int
setup(struct shm_file *f, size_t nslots, const struct stat *sb)
{
	pthread_mutexattr_t	a;
	size_t			i;
	int			rc;

	/* The slots and the tables after them are zero: the file was
	 * truncated to nothing and grown again (map_once), which leaves
	 * it sparse; writing them would give every page a block. */
	memset(f, 0, sizeof(*f));
	f->version = SHM_VERSION;
	f->nslots = nslots;
	f->dev = (uint64_t)sb->st_dev;
	f->ino = (uint64_t)sb->st_ino;
	/* Run ids unlike those of a file this one replaces. */
	if (getrandom(&f->counters[SHM_COUNTER_CATALOG_RUNS],
	    sizeof(f->counters[0]), GRND_NONBLOCK) != sizeof(f->counters[0]))
		f->counters[SHM_COUNTER_CATALOG_RUNS] =
		    (uint64_t)time(NULL) << 24 ^ (uint64_t)getpid();
	f->counters[SHM_COUNTER_COOLDOWNS] = 1;
	if (pthread_mutexattr_init(&a) != 0)
		return -1;
	rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) != 0 ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) != 0 ||
	    pthread_mutex_init(&f->lock, &a) != 0 ||
	    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK) != 0 ?
	    -1 : 0;
	for (i = 0; rc == 0 && i < SHM_QUEUE__MAX; i++)
		rc = pthread_mutex_init(&f->queues[i], &a) != 0 ? -1 : 0;
	pthread_mutexattr_destroy(&a);
	if (rc == 0)
		__atomic_store_n(&f->magic, SHM_MAGIC, __ATOMIC_RELEASE);
	return rc;
}

static void
unmap(struct shm *m)
{
	if (m->f != NULL)
		munmap(m->f, m->size);
	if (m->fd != -1)
		close(m->fd);
	m->f = NULL;
	m->fd = -1;
	m->self = NULL;
	m->nslots = 0;
	m->lost = 0;
}

/* Unlinks the file at path if it is still the file dev, ino: never one
 * another process has made in its place since. */
static void
discard(const char *path, dev_t dev, ino_t ino)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && sb.st_dev == dev && sb.st_ino == ino)
		unlink(path);
}

/* Whether the header of the file f maps (size bytes, the file sb) is
 * one this program set up for that very file: its layout, a slot
 * count that fits its size, and the file it was made as (a copy of
 * the file, put in its place, names pids and leads of another). */
static int
header_ok(const struct shm_file *f, size_t size, const struct stat *sb)
{
	return f->magic == SHM_MAGIC && f->version == SHM_VERSION &&
	    f->nslots > 0 && f->nslots <= SHM_SLOTS_MAX &&
	    FILE_SIZE(f->nslots) == size && f->dev == (uint64_t)sb->st_dev &&
	    f->ino == (uint64_t)sb->st_ino;
}

/* One try at mapping the file at m->path: 1 done, 0 try again (the file
 * was replaced, or was of another layout and is now unlinked), -1 with
 * e set. */
static int
map_once(struct shm *m, struct error *e)
{
	struct stat	 sb;
	size_t		 size;
	uint32_t	 magic = 0;
	const char	*what;

	what = "open";
	if ((m->fd = open(m->path, O_RDWR | O_CLOEXEC | (m->join ? 0 :
	    O_CREAT), m->mode)) == -1)
		goto fail;
	what = "lock";
	if (flock(m->fd, LOCK_EX) == -1 || fstat(m->fd, &sb) == -1)
		goto fail;
	if (sb.st_nlink == 0) {		/* unlinked before we locked it */
		unmap(m);
		return 0;
	}
	/* A file that was never set up (new, or its maker died half way,
	 * or not ours) is emptied and set up at our size: nobody maps it
	 * before. */
	size = FILE_SIZE(m->want);
	if ((size_t)sb.st_size >= sizeof(uint32_t) &&
	    pread(m->fd, &magic, sizeof(magic), 0) == sizeof(magic) &&
	    magic == SHM_MAGIC)
		size = (size_t)sb.st_size;
	else if (m->join) {
		errno = ENOENT;		/* the workers have not made it yet */
		goto fail;
	} else if (ftruncate(m->fd, 0) == -1 ||
	    ftruncate(m->fd, (off_t)size) == -1) {
		what = "size";
		goto fail;
	}
	what = "map";
	if (size >= sizeof(struct shm_file) && (m->f = mmap(NULL, size,
	    PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0)) == MAP_FAILED) {
		m->f = NULL;
		goto fail;
	}
	m->size = size;
	/* Set up, but not by us for this file (another layout, cut short,
	 * scribbled on, copied here): a new file. */
	if (m->f == NULL || (m->f->magic == SHM_MAGIC &&
	    !header_ok(m->f, size, &sb))) {
		if (m->join) {		/* the workers' is of another layout */
			errno = EPROTO;
			goto fail;
		}
		/* Another build's (an upgrade): said once, by the worker
		 * that replaces it, as its figures are left behind. */
		if (m->f != NULL && m->f->version != SHM_VERSION)
			log_info("shared memory %s: layout version %u, this "
			    "build's is %d: made anew (the metrics start again "
			    "from 0)", m->path, m->f->version, SHM_VERSION);
		discard(m->path, sb.st_dev, sb.st_ino);
		unmap(m);
		return 0;
	}
	what = "set up";
	if (m->f->magic != SHM_MAGIC && setup(m->f, m->want, &sb) == -1)
		goto fail;
	m->nslots = (size_t)m->f->nslots;
	flock(m->fd, LOCK_UN);
	m->dev = sb.st_dev;
	m->ino = sb.st_ino;
	return 1;
fail:
	error_set(e, ERR_UNAVAILABLE, NULL, "shared memory %s: %s: %s",
	    m->path, what, strerror(errno));
	unmap(m);
	return -1;
}

/* Slot i's metrics; i == nslots: the retired figures. */
static struct shm_metrics *
metrics_of(const struct shm *m, size_t i)
{
	return (struct shm_metrics *)(void *)((char *)m->f +
	    METRICS_OFFSET(m->nslots)) + i;
}

/* Under the lock: adds slot i's figures to the retired ones and empties
 * it, before its new owner counts there.  A holder killed half way
 * loses or counts twice at most the one cell it was folding. */
static void
fold(struct shm *m, size_t i)
{
	struct shm_metrics	*from = metrics_of(m, i);
	struct shm_metrics	*to = metrics_of(m, m->nslots);
	uint64_t		 v;
	size_t			 c;

	for (c = 0; c < SHM_METRIC_CELLS; c++) {
		if ((v = from->cell[c]) == 0)
			continue;
		from->cell[c] = 0;
		to->cell[c] += v;
	}
	from->answered_ms = 0;
}

/* Under the lock: the first free slot of those ever taken, else the
 * next never taken (raising the mark), else one whose owner is gone;
 * nslots when none is. */
static size_t
free_slot(struct shm *m)
{
	struct shm_worker	*w;
	size_t			 i, n;

	w = shm_slots(m, &n);
	for (i = 0; i < n && w[i].pid != 0; i++)
		;
	if (i == n && n < m->nslots)
		__atomic_store_n(&m->f->high, (uint32_t)(n + 1),
		    __ATOMIC_RELEASE);
	else if (i == n && shm_reap(m) > 0)
		for (i = 0; i < n && w[i].pid != 0; i++)
			;
	return i < m->nslots ? i : m->nslots;
}

/* Under the lock: slot w is empty, its owner (a worker's counted) gone. */
static void
vacate(struct shm_file *f, struct shm_worker *w)
{
	w->backend_id = 0;
	w->serving = 0;
	w->queued = 0;
	if (w->worker)
		__atomic_sub_fetch(&f->workers, 1, __ATOMIC_RELAXED);
	w->worker = 0;
	w->pid = 0;
}

/* Takes a free slot, or one whose owner is gone. */
static void
claim(struct shm *m)
{
	struct shm_worker	*w;
	size_t			 i;

	if (shm_lock(m) == -1)
		return;
	if ((i = free_slot(m)) < m->nslots) {
		w = &m->f->slots[i];
		fold(m, i);
		w->backend_id = 0;
		w->since_ms = 0;
		w->serving = 0;
		w->queued = 0;
		w->cpu = m->cpu;
		w->started = m->started;
		w->worker = !m->join;
		if (w->worker)
			__atomic_add_fetch(&m->f->workers, 1,
			    __ATOMIC_RELAXED);
		w->pid = getpid();
		m->self = w;
	}
	shm_unlock(m);
}

static int
map_file(struct shm *m, struct error *e)
{
	int	rc = 0, tries;

	for (tries = 0; tries < SHM_TRIES && rc == 0; tries++)
		rc = map_once(m, e);
	if (rc == 0)
		error_set(e, ERR_UNAVAILABLE, NULL, "shared memory %s: "
		    "replaced %d times while mapping it", m->path, SHM_TRIES);
	if (rc != 1)
		return -1;
	claim(m);
	return 0;
}

static struct shm *
attach(const char *path, int workers, mode_t mode, int join,
    struct error *e)
{
	struct shm	*m = xmalloc(sizeof(*m));

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->mode = mode;
	m->join = join;
	m->want = workers > 0 ? SHM_SLOTS(workers) : SHM_SLOTS_DEFAULT;
	m->fd = -1;
	m->cpu = -1;
	m->started = shm_proc_started(getpid());
	if (map_file(m, e) == -1) {
		free(m);
		return NULL;
	}
	return m;
}

struct shm *
shm_attach(const char *path, int workers, mode_t mode, struct error *e)
{
	return attach(path, workers, mode, 0, e);
}

struct shm *
shm_join(const char *path, struct error *e)
{
	return attach(path, 1, 0, 1, e);
}

/* The scheduler wakes a worker on the CPU it last ran on unless another
 * is idle at that instant: with as many workers as CPUs, both of a
 * 2-CPU host's workers were found queued on one CPU while the other
 * idled a third of the time (README, "Sizing").  A slot names the CPU
 * its owner
 * keeps to; a new worker takes the least named of those it may use.
 * Slots of owners killed without freeing them still count until taken
 * again: looking whether each owner lives would hold the lock for every
 * slot at every start. */
int
shm_spread(struct shm *m)
{
	int			 named[CPU_SETSIZE];
	cpu_set_t		 allowed, one;
	struct shm_worker	*w;
	size_t			 i, n;
	int			 cpu, best = -1;

	if (m == NULL || m->self == NULL ||
	    sched_getaffinity(0, sizeof(allowed), &allowed) == -1 ||
	    shm_lock(m) == -1)
		return -1;
	memset(named, 0, sizeof(named));
	w = shm_slots(m, &n);
	for (i = 0; i < n; i++)
		if (w[i].pid != 0 && &w[i] != m->self && w[i].cpu >= 0 &&
		    w[i].cpu < CPU_SETSIZE)
			named[w[i].cpu]++;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed) &&
		    (best == -1 || named[cpu] < named[best]))
			best = cpu;
	CPU_ZERO(&one);
	if (best != -1)
		CPU_SET(best, &one);
	if (best == -1 || sched_setaffinity(0, sizeof(one), &one) == -1)
		best = -1;
	m->cpu = m->self->cpu = best;
	shm_unlock(m);
	return best;
}

/* Frees this process's slot in the mapping it holds. */
static void
release(struct shm *m)
{
	if (m->self == NULL || shm_lock(m) == -1)
		return;
	if (m->self->pid == getpid())
		vacate(m->f, m->self);
	m->self = NULL;
	shm_unlock(m);
}

void
shm_detach(struct shm *m)
{
	if (m == NULL)
		return;
	release(m);
	unmap(m);
	free(m);
}

/* Once every SHM_REAP_MS on the host, by whoever comes first: frees the
 * slots of owners gone (killed, crashed), so that shm_workers() and the
 * group commit's looks count only the living.  Whether an owner lives
 * is asked outside the lock (a system call or two per slot); a slot is
 * freed under it only if it still names the owner found gone. */
static void
reap_due(struct shm *m)
{
	struct shm_worker	*w, seen;
	int64_t			 now = clock_mono_us() / 1000, last;
	size_t			 i, n;

	last = __atomic_load_n(&m->f->reaped_ms, __ATOMIC_RELAXED);
	if (now - last < SHM_REAP_MS && now >= last)
		return;
	if (!__atomic_compare_exchange_n(&m->f->reaped_ms, &last, now, 0,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;			/* another process does it */
	n = __atomic_load_n(&m->f->high, __ATOMIC_ACQUIRE);
	w = m->f->slots;
	for (i = 0; i < n && i < m->nslots; i++) {
		seen.pid = __atomic_load_n(&w[i].pid, __ATOMIC_RELAXED);
		seen.started = __atomic_load_n(&w[i].started,
		    __ATOMIC_RELAXED);
		if (seen.pid == 0 || shm_owner_alive(&seen) ||
		    shm_lock(m) == -1)
			continue;
		if (w[i].pid == seen.pid && w[i].started == seen.started)
			vacate(m->f, &w[i]);
		shm_unlock(m);
	}
}

/* Between requests this process holds no mutex of the mapping, so any
 * left on its list of robust mutexes (which the kernel reads at exit,
 * and the next lock of one writes through) is one whose memory went
 * under it: scribbled on while held (its unlock then failed), or in a
 * mapping lost or about to be unmapped.  The list is emptied, as a new
 * thread has it, so that it never names memory that is gone. */
static void
forget_robust(void)
{
	struct robust_list_head	*head;
	size_t			 len;

	if (syscall(SYS_get_robust_list, 0, &head, &len) == 0 &&
	    head != NULL && head->list.next != &head->list) {
		head->list_op_pending = NULL;
		head->list.next = &head->list;
	}
}

int
shm_maintain(struct shm *m)
{
	struct stat	 sb;
	struct shm	 fresh;
	struct error	 e = { 0 };

	if (m->f != NULL && !m->lost && stat(m->path, &sb) == 0 &&
	    sb.st_dev == m->dev && sb.st_ino == m->ino) {
		if ((size_t)sb.st_size == m->size &&
		    header_ok(m->f, m->size, &sb) && m->f->nslots == m->nslots) {
			reap_due(m);
			return 0;
		}
		/* Cut short, grown or scribbled on in place: nobody is to
		 * use it any more, and everyone maps a new one.  Our slot
		 * in it is left as it is: touching it may fault. */
		discard(m->path, m->dev, m->ino);
		m->self = NULL;
	}
	fresh = *m;
	fresh.fd = -1;
	fresh.f = NULL;
	fresh.self = NULL;
	fresh.nslots = 0;
	fresh.lost = 0;
	if (map_file(&fresh, &e) == -1) {
		error_clear(&e);
		return -1;
	}
	if (!m->lost)		/* else our slot is private zeroes */
		release(m);
	forget_robust();
	unmap(m);
	*m = fresh;
	return 0;
}

/* SIGBUS in the host's mapping: the file was cut short under it.  The
 * pages are replaced with private zeroes, so that the access that
 * faulted, and any until the next shm_maintain, completes on memory
 * that counts for nobody, and the handle is marked lost, to be mapped
 * anew between requests.  A SIGBUS anywhere else is what it was. */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	struct shm	*m = host;
	char		*at = si->si_addr;

	(void)ctx;
	if (m != NULL && m->f != NULL && at >= (char *)m->f &&
	    at < (char *)m->f + m->size && mmap(m->f, m->size,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
	    -1, 0) != MAP_FAILED) {
		m->lost = 1;	/* its slot too is private zeroes now */
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int
shm_guard(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL);
}

/* The realtime clock ms from now, as pthread_mutex_timedlock takes it. */
static struct timespec
deadline(int64_t ms)
{
	struct timespec	until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return until;
}

int
shm_lock(struct shm *m)
{
	struct timespec	until;
	int		rc;

	if (m == NULL || m->f == NULL || m->lost)
		return -1;
	/* Held for microseconds: one not had in SHM_LOCK_WAIT_MS is a
	 * lock word scribbled on, which would hold every process. */
	until = deadline(SHM_LOCK_WAIT_MS);
	rc = pthread_mutex_timedlock(&m->f->lock, &until);
	if (rc == EOWNERDEAD)	/* its holder died: what it held is ours */
		rc = pthread_mutex_consistent(&m->f->lock);
	if (rc != 0) {
		/* Unusable: the next process remakes it. */
		discard(m->path, m->dev, m->ino);
		return -1;
	}
	return 0;
}

void
shm_unlock(struct shm *m)
{
	pthread_mutex_unlock(&m->f->lock);
}

struct shm_worker *
shm_self(struct shm *m)
{
	return m->self;
}

struct shm_worker *
shm_slots(struct shm *m, size_t *n)
{
	*n = __atomic_load_n(&m->f->high, __ATOMIC_ACQUIRE);
	if (*n > m->nslots)		/* a header scribbled on */
		*n = m->nslots;
	return m->f->slots;
}

size_t
shm_reap(struct shm *m)
{
	struct shm_worker	*w;
	size_t			 i, n, freed = 0;

	w = shm_slots(m, &n);
	for (i = 0; i < n; i++)
		if (w[i].pid != 0 && !shm_owner_alive(&w[i])) {
			vacate(m->f, &w[i]);
			freed++;
		}
	return freed;
}

long
shm_workers(struct shm *m)
{
	if (m == NULL || m->f == NULL)
		return 0;
	return (long)__atomic_load_n(&m->f->workers, __ATOMIC_RELAXED);
}

void
shm_set_host(struct shm *m)
{
	host = m;
}

struct shm *
shm_host(void)
{
	return host;
}

/* Under the lock: backend_id's entry, one taken for it if add (a free
 * one, else the least recently used idle one); NULL when it has none
 * (or none can be had). */
static struct shm_flight *
flight(struct shm_file *f, int64_t backend_id, int add)
{
	struct shm_flight	*spare = NULL, *e;

	for (e = f->flights; e < f->flights + SHM_FLIGHTS; e++) {
		if (e->backend_id == backend_id)
			return e;
		if (e->n <= 0 && (spare == NULL || (spare->backend_id != 0 &&
		    (e->backend_id == 0 || e->used_ms < spare->used_ms))))
			spare = e;
	}
	if (!add || spare == NULL)
		return NULL;
	spare->backend_id = 0;		/* cut short here: still free */
	spare->n = 0;
	spare->latency_us = 0;
	spare->failing = 0;
	spare->reaped_ms = 0;
	spare->older = 0;
	spare->young_ms = INT64_MIN;	/* no walk yet */
	spare->backend_id = backend_id;
	return spare;
}

void
shm_inflight_view(struct shm *m, int64_t backend_id,
    struct shm_flight_view *v)
{
	struct shm_flight	*e;

	memset(v, 0, sizeof(*v));
	if (m == NULL || m->f == NULL)
		return;
	v->workers = shm_workers(m);
	for (e = m->f->flights; e < m->f->flights + SHM_FLIGHTS; e++)
		if (__atomic_load_n(&e->backend_id, __ATOMIC_RELAXED) ==
		    backend_id) {
			v->in_flight = __atomic_load_n(&e->n,
			    __ATOMIC_RELAXED);
			v->latency_us = __atomic_load_n(&e->latency_us,
			    __ATOMIC_RELAXED);
			v->failing = __atomic_load_n(&e->failing,
			    __ATOMIC_RELAXED) != 0;
			break;
		}
}

/* Under the lock: the live processes other than us calling backend_id
 * (*all), and those of them calling since before since_ms (returned),
 * with when the earliest of the others began (*young_ms, INT64_MAX when
 * there is none).  With reap, an owner counted is first asked whether
 * its pid still runs (one system call; the periodic reap, reap_due(),
 * also tells a pid the kernel gave to another process since). */
static size_t
walk(struct shm *m, int64_t backend_id, int64_t since_ms, int reap,
    size_t *all, int64_t *young_ms)
{
	struct shm_worker	*w;
	size_t			 i, n, old = 0;

	*all = 0;
	*young_ms = INT64_MAX;
	w = shm_slots(m, &n);
	for (i = 0; i < n; i++) {
		if (w[i].pid == 0 || w[i].backend_id != backend_id ||
		    &w[i] == m->self)
			continue;
		if (reap && kill(w[i].pid, 0) == -1 && errno == ESRCH) {
			vacate(m->f, &w[i]);
			continue;
		}
		(*all)++;
		if (w[i].since_ms <= since_ms)
			old++;
		else if (w[i].since_ms < *young_ms)
			*young_ms = w[i].since_ms;
	}
	return old;
}

int
shm_inflight_take(struct shm *m, int64_t backend_id, long limit,
    int64_t older_ms, int64_t now_ms)
{
	struct shm_flight	*f;
	size_t			 busy, all;
	int64_t			 young;
	int			 pass;

	if (m == NULL || shm_lock(m) == -1)
		return 1;
	if (m->self == NULL) {		/* no slot: nothing to count in */
		shm_unlock(m);
		return 1;
	}
	f = flight(m->f, backend_id, 1);
	busy = f != NULL ? (size_t)f->n : (size_t)limit;
	/* Full by the count: the last walk's count of calls over the age,
	 * while it stands (struct shm_flight), so that a backend with
	 * more calls in flight than the limit, all young, is walked about
	 * once per age rather than at every call. */
	if (busy >= (size_t)limit && f != NULL && older_ms > 0 &&
	    f->older < limit && now_ms - older_ms < f->young_ms)
		busy = (size_t)f->older;
	/* Else (or not counted): walk the slots, counting the calls
	 * older than older_ms; when still full, walk again asking whether
	 * each owner lives, at most every SHM_RECOUNT_MS for a backend (a
	 * flood of calls refused is not a flood of system calls under the
	 * lock). */
	for (pass = 0; pass < 2 && busy >= (size_t)limit; pass++) {
		if (pass == 1 && f != NULL && now_ms - f->reaped_ms <
		    SHM_RECOUNT_MS && now_ms >= f->reaped_ms)
			break;
		if (pass == 1 && f != NULL)
			f->reaped_ms = now_ms;
		busy = walk(m, backend_id, now_ms - older_ms, pass, &all,
		    &young);
		if (f != NULL) {
			f->n = (int64_t)all;
			f->older = (int64_t)busy;
			f->young_ms = young;
		}
	}
	if (busy < (size_t)limit) {	/* read without the lock too */
		m->self->since_ms = now_ms;
		__atomic_store_n(&m->self->backend_id, backend_id,
		    __ATOMIC_RELAXED);
		if (f != NULL) {
			f->n++;
			f->used_ms = now_ms;
			if (f->young_ms > now_ms)	/* ours is young */
				f->young_ms = now_ms;
		}
	}
	shm_unlock(m);
	return busy < (size_t)limit;
}

void
shm_inflight_give(struct shm *m, enum shm_call how, int64_t us)
{
	struct shm_flight	*f;

	if (m == NULL || m->self == NULL || shm_lock(m) == -1)
		return;
	if (m->self->backend_id != 0 &&
	    (f = flight(m->f, m->self->backend_id, 0)) != NULL) {
		if (f->n > 0)
			f->n--;
		if (how == SHM_CALL_ANSWERED) {
			if (us < 1)
				us = 1;
			f->latency_us = f->latency_us == 0 ? us :
			    f->latency_us + (us - f->latency_us) / 8;
			f->failing = 0;
		} else if (how == SHM_CALL_FAILED)
			f->failing = 1;
	}
	__atomic_store_n(&m->self->backend_id, 0, __ATOMIC_RELAXED);
	shm_unlock(m);
}

/* FNV-1a of s, never 0 (0 marks a free entry). */
static uint64_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

int
shm_probe_claim(struct shm *m, const char *key, int64_t now_ms,
    int64_t period_ms)
{
	struct shm_probe	*p, *oldest;
	uint64_t		 h = hash(key);
	int			 ok = 1;

	if (m == NULL || shm_lock(m) == -1)
		return 1;
	oldest = &m->f->probes[0];
	for (p = m->f->probes; p < m->f->probes + SHM_PROBES; p++) {
		if (p->key == h)
			break;
		if (p->key == 0 || p->at_ms < oldest->at_ms)
			oldest = p;	/* a free entry is the oldest */
	}
	if (p == m->f->probes + SHM_PROBES) {
		p = oldest;
		p->at_ms = INT64_MIN;
		p->key = h;
	}
	if (p->at_ms != INT64_MIN && now_ms - p->at_ms < period_ms)
		ok = 0;
	else
		p->at_ms = now_ms;
	shm_unlock(m);
	return ok;
}

int
shm_budget_take(struct shm *m, const char *key, int64_t now_ms, long limit)
{
	struct shm_budget	*b, *oldest;
	uint64_t		 h = hash(key);
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

/* Says in our slot whether we wait in or hold a queue: a leader does
 * not await the decision of a worker that waits behind it
 * (shm_group_await). */
static void
queued(struct shm *m, int on)
{
	if (m->self != NULL)
		__atomic_store_n(&m->self->queued, (uint32_t)on,
		    __ATOMIC_RELAXED);
}

int
shm_queue_enter(struct shm *m, enum shm_queue q, int64_t wait_ms)
{
	pthread_mutex_t	*mx;
	struct timespec	 until;
	struct stat	 sb;
	int64_t		 end = clock_mono_us() / 1000 + wait_ms, left;
	int		 rc;

	if (m == NULL || m->f == NULL || m->lost || q >= SHM_QUEUE__MAX)
		return 0;
	mx = &m->f->queues[q];
	queued(m, 1);
	/* In slices: a file cut short under the queue takes its waiters'
	 * wake-ups with it (a holder that faults unlocks private zeroes),
	 * so between slices a waiter looks whether its file is still
	 * whole, and if not writes without the queue, as with none. */
	for (;;) {
		left = end - clock_mono_us() / 1000;
		until = deadline(left < SHM_QUEUE_SLICE_MS ? left :
		    SHM_QUEUE_SLICE_MS);
		rc = pthread_mutex_timedlock(mx, &until);
		if (rc == EOWNERDEAD)	/* its holder died in its transaction */
			rc = pthread_mutex_consistent(mx);
		if (rc != ETIMEDOUT || left <= SHM_QUEUE_SLICE_MS)
			break;
		if (m->lost || fstat(m->fd, &sb) == -1 ||
		    (size_t)sb.st_size != m->size) {
			queued(m, 0);
			return 0;
		}
	}
	if (rc == 0)
		return 1;
	queued(m, 0);
	if (rc == ETIMEDOUT)
		return -1;
	if (rc != EDEADLK)	/* unusable: the next process remakes it */
		discard(m->path, m->dev, m->ino);
	return 0;
}

void
shm_queue_leave(struct shm *m, enum shm_queue q)
{
	if (m != NULL && m->f != NULL && q < SHM_QUEUE__MAX) {
		pthread_mutex_unlock(&m->f->queues[q]);
		queued(m, 0);
	}
}

/* The entry of app_id in its bucket, or NULL with *spare the one a new
 * entry should take: a free one, else the one whose rate window is
 * emptiest (the earliest arrival time). */
static struct shm_admit *
admit_find(struct shm_file *f, int64_t app_id, struct shm_admit **spare)
{
	struct shm_admit	*b, *e;
	uint64_t		 h = (uint64_t)app_id * 0x9e3779b97f4a7c15ULL;

	b = &f->admits[(h >> 32) % (SHM_ADMITS / SHM_ADMIT_WAYS) *
	    SHM_ADMIT_WAYS];
	*spare = b;
	for (e = b; e < b + SHM_ADMIT_WAYS; e++) {
		if (e->app_id == app_id)
			return e;
		if ((*spare)->app_id != 0 && (e->app_id == 0 ||
		    e->a.tat_ms < (*spare)->a.tat_ms))
			*spare = e;
	}
	return NULL;
}

int
shm_admission(struct shm *m, int64_t app_id, int64_t day, int64_t db_used,
    void (*fn)(struct shm_admission *, void *), void *arg)
{
	struct shm_admit	*e, *spare;

	if (m == NULL || shm_lock(m) == -1)
		return -1;
	if ((e = admit_find(m->f, app_id, &spare)) == NULL ||
	    e->day != day) {
		if (db_used < 0) {
			shm_unlock(m);
			return 0;
		}
		if (e == NULL) {	/* taken over: its last fields first */
			e = spare;
			e->app_id = 0;
			memset(&e->a, 0, sizeof(e->a));
		}
		e->a.used = db_used;
		e->day = day;
		e->app_id = app_id;
	}
	fn(&e->a, arg);
	shm_unlock(m);
	return 1;
}

void
shm_mark(struct shm *m, enum shm_mark k, int64_t at_ms)
{
	if (m == NULL || k >= SHM_MARK__MAX || shm_lock(m) == -1)
		return;
	m->f->marks[k] = at_ms;
	shm_unlock(m);
}

int64_t
shm_marked(struct shm *m, enum shm_mark k)
{
	int64_t at;

	if (m == NULL || k >= SHM_MARK__MAX || shm_lock(m) == -1)
		return 0;
	at = m->f->marks[k];
	shm_unlock(m);
	return at;
}

int
shm_counter(struct shm *m, enum shm_counter k, uint64_t *v)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return -1;
	*v = __atomic_load_n(&m->f->counters[k], __ATOMIC_SEQ_CST);
	return 0;
}

void
shm_counter_set(struct shm *m, enum shm_counter k, uint64_t v)
{
	if (m != NULL && m->f != NULL && k < SHM_COUNTER__MAX)
		__atomic_store_n(&m->f->counters[k], v, __ATOMIC_SEQ_CST);
}

uint64_t
shm_counter_next(struct shm *m, enum shm_counter k)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return 0;
	return __atomic_add_fetch(&m->f->counters[k], 1, __ATOMIC_SEQ_CST);
}

int
shm_counter_swap(struct shm *m, enum shm_counter k, uint64_t expect,
    uint64_t want)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return 0;
	return __atomic_compare_exchange_n(&m->f->counters[k], &expect, want,
	    0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

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

/* Whether no entry counts a failure of the key hashed h: read without
 * the lock. */
static int
streak_quiet(struct shm_file *f, uint64_t h)
{
	struct shm_streak	*s;

	for (s = f->streaks; s < f->streaks + SHM_STREAKS; s++)
		if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) == h &&
		    __atomic_load_n(&s->n, __ATOMIC_RELAXED) > 0)
			return 0;
	return 1;
}

long
shm_streak_add(struct shm *m, const char *key, int failed, int64_t now_ms,
    int64_t period_ms)
{
	struct shm_streak	*s, *oldest;
	uint64_t		 h = hash(key);
	int64_t			 n = 0;

	if (m == NULL || m->f == NULL)
		return -1;
	if (!failed && streak_quiet(m->f, h))
		return 0;
	if (shm_lock(m) == -1)
		return -1;
	oldest = &m->f->streaks[0];
	for (s = m->f->streaks; s < m->f->streaks + SHM_STREAKS; s++) {
		if (s->key == h)
			break;
		if (s->key == 0 || s->at_ms < oldest->at_ms)
			oldest = s;	/* a free entry is the oldest */
	}
	if (s == m->f->streaks + SHM_STREAKS && failed) {
		s = oldest;		/* cut short here: a count of 0 */
		__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->key, h, __ATOMIC_RELAXED);
	}
	if (s < m->f->streaks + SHM_STREAKS) {
		if (!failed || now_ms - s->at_ms >= period_ms ||
		    now_ms < s->at_ms)
			n = 0;		/* a success, or a new streak */
		else
			n = s->n;
		if (failed) {
			n++;
			s->at_ms = now_ms;
		}
		__atomic_store_n(&s->n, n, __ATOMIC_RELAXED);
	}
	shm_unlock(m);
	return (long)n;
}
