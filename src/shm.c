/* shm.c: the host's shared memory: the file and its mapping, the
 * checks that find it damaged or replaced and what is done then, the
 * worker slots and the mutex (see shm.h).  What the mapping counts is
 * in a file per concern, shm.h says which. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#define SHM_LOCK_WAIT_MS 2000		/* the mutex: longer is a broken one */

static struct shm	*host;		/* the process's mapping, or NULL */
static struct shm	*mapping;	/* the one map_file() makes, or NULL */

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

	/* The slots and the tables after them are zero: the file is new
	 * (make_file) and sparse; writing them would give every page a
	 * block. */
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

/* See shm_file.h. */
void
shm_discard(const char *path, dev_t dev, ino_t ino)
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

/* How a try at mapping ends: done, with the file sb, 1; */
static int
mapped(struct shm *m, const struct stat *sb)
{
	m->nslots = (size_t)m->f->nslots;
	m->dev = sb->st_dev;
	m->ino = sb->st_ino;
	return 1;
}

/* or failed at what (errno says why), -1 with e set. */
static int
map_failed(struct shm *m, const char *what, struct error *e)
{
	error_set(e, ERR_UNAVAILABLE, NULL, "shared memory %s: %s: %s",
	    m->path, what, strerror(errno));
	unmap(m);
	return -1;
}

/* Maps size bytes of m->fd, shared. */
static int
map_fd(struct shm *m, size_t size)
{
	m->f = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->f == MAP_FAILED) {
		m->f = NULL;
		return -1;
	}
	m->size = size;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* on_sigbus reads them */
	return 0;
}

/* A new file, set up under a name of its own and only then linked at
 * m->path, so that a file at the path is always one set up whole: a
 * file found there cut short or never set up is damaged, and is
 * unlinked rather than set up again in place, under the workers that
 * still map it (they would take slots and lead the group commit in a
 * header made anew).  1 made and mapped, 0 another process's came
 * first (to be mapped), -1 with e set.  A process killed before the
 * link leaves its file under the other name (PATH.PID.new), taken
 * back by the next process of that pid. */
static int
make_file(struct shm *m, struct error *e)
{
	char		 tmp[sizeof(m->path) + 32];
	struct stat	 sb;
	const char	*what;
	size_t		 size = FILE_SIZE(m->want);
	int		 made = 0;

	what = "create";
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.new", m->path,
	    (long)getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	unlink(tmp);
	if ((m->fd = open(tmp, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL,
	    m->mode)) == -1)
		goto fail;
	made = 1;
	if (fstat(m->fd, &sb) == -1)
		goto fail;
	what = "size";
	if (ftruncate(m->fd, (off_t)size) == -1)
		goto fail;
	what = "map";
	if (map_fd(m, size) == -1)
		goto fail;
	what = "set up";
	if (setup(m->f, m->want, &sb) == -1)
		goto fail;
	/* link() fails if another process put its file there first (we
	 * map that one); on a file system without hard links rename()
	 * puts ours in place all the same, over one made meanwhile (whose
	 * workers map ours at their next request).  Either keeps the
	 * inode the header names. */
	what = "link";
	if (link(tmp, m->path) == 0)
		unlink(tmp);
	else if (errno == EEXIST) {
		unlink(tmp);
		unmap(m);
		return 0;
	} else if (rename(tmp, m->path) == -1)
		goto fail;
	return mapped(m, &sb);
fail:
	map_failed(m, what, e);
	if (made)
		unlink(tmp);
	return -1;
}

/* One try at mapping the file at m->path: 1 done, 0 try again (the file
 * was replaced, or was damaged or of another layout and is now
 * unlinked), -1 with e set.  A worker makes the file when there is
 * none (make_file()); the console only joins the workers'. */
static int
map_once(struct shm *m, struct error *e)
{
	struct stat	 sb;
	const char	*what = "open";

	if ((m->fd = open(m->path, O_RDWR | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && !m->join)
			return make_file(m, e);
		goto fail;
	}
	what = "stat";
	if (fstat(m->fd, &sb) == -1)
		goto fail;
	if (sb.st_nlink == 0) {		/* unlinked since we opened it */
		unmap(m);
		return 0;
	}
	what = "map";
	if ((size_t)sb.st_size >= sizeof(struct shm_file) &&
	    map_fd(m, (size_t)sb.st_size) == -1)
		goto fail;
	/* Cut short, never set up, of another layout, scribbled on, or
	 * copied here: a new file. */
	if (m->f == NULL || !header_ok(m->f, m->size, &sb)) {
		if (m->join) {		/* another layout, or damaged */
			errno = m->f != NULL && m->f->magic == SHM_MAGIC ?
			    EPROTO : ENOENT;
			goto fail;
		}
		/* Another build's (an upgrade): said once, by the worker
		 * that replaces it, as its figures are left behind. */
		if (m->f != NULL && m->f->magic == SHM_MAGIC &&
		    m->f->version != SHM_VERSION)
			log_info("shared memory %s: layout version %u, this "
			    "build's is %d: made anew (the metrics start again "
			    "from 0)", m->path, m->f->version, SHM_VERSION);
		shm_discard(m->path, sb.st_dev, sb.st_ino);
		unmap(m);
		return 0;
	}
	return mapped(m, &sb);
fail:
	return map_failed(m, what, e);
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

	/* The file may be cut short while it is set up and a slot taken
	 * in it, before it is the host's: on_sigbus covers it too. */
	mapping = m;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (tries = 0; tries < SHM_TRIES && rc == 0; tries++)
		rc = map_once(m, e);
	if (rc == 0)
		error_set(e, ERR_UNAVAILABLE, NULL, "shared memory %s: "
		    "replaced %d times while mapping it", m->path, SHM_TRIES);
	if (rc == 1)
		claim(m);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mapping = NULL;
	return rc == 1 ? 0 : -1;
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
		shm_discard(m->path, m->dev, m->ino);
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

/* 1 if address at is in m's mapping, whose pages are then replaced
 * with private zeroes, so that the access that faulted, and any until
 * the next shm_maintain, completes on memory that counts for nobody,
 * and the handle is marked lost, to be mapped anew between requests. */
static int
zero_fill(struct shm *m, const char *at)
{
	if (m == NULL || m->f == NULL || at < (char *)m->f ||
	    at >= (char *)m->f + m->size || mmap(m->f, m->size,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
	    -1, 0) == MAP_FAILED)
		return 0;
	m->lost = 1;		/* its slot too is private zeroes now */
	return 1;
}

/* SIGBUS in the host's mapping, or in the one being made to replace it
 * (map_file()): the file was cut short under it.  A SIGBUS anywhere
 * else is what it was. */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (zero_fill(host, si->si_addr) || zero_fill(mapping, si->si_addr))
		return;
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

/* See shm_file.h. */
struct timespec
shm_deadline(int64_t ms)
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
	until = shm_deadline(SHM_LOCK_WAIT_MS);
	rc = pthread_mutex_timedlock(&m->f->lock, &until);
	if (rc == EOWNERDEAD)	/* its holder died: what it held is ours */
		rc = pthread_mutex_consistent(&m->f->lock);
	if (rc != 0) {
		/* Unusable: the next process remakes it. */
		shm_discard(m->path, m->dev, m->ino);
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
