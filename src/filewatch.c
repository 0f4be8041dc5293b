/*
 * filewatch.c: the kernel's word (inotify) that a file kept open was
 * deleted, replaced or changed at its path, instead of a stat() of it
 * before every request (filewatch.h).
 *
 * One inotify instance per process, made at the first watch, and
 * signal-driven: the kernel sends SIGIO to the thread that made it as
 * it queues an event (O_ASYNC, F_SETOWN_EX), in the context of the
 * process that unlinks, renames or truncates the file, so that the
 * signal is pending before that call returns.  The handler counts the
 * signal and drains the queue (an event equal to the last one queued is
 * merged into it without a signal: an empty queue has none to merge
 * with).  A caller is due when the count moved since it last was, and
 * then checks as it did before every request.  SA_RESTART: a signal
 * between requests, or during one, restarts what it interrupts (which
 * happens only when a watched file is changed at all).
 *
 * What a watch cannot tell is checked as before, every time: where
 * inotify cannot be had, or the file is on a network file system (the
 * table remote[]), every call is due.  And every FILEWATCH_BACKSTOP_MS
 * in any case.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "clock.h"
#include "filewatch.h"

/* File systems whose changes made on another host no event tells
 * (statfs(2)'s f_type): NFS, SMB and CIFS, FUSE, Ceph, 9p, AFS. */
static const long remote[] = {
	0x6969, 0x517b, (long)0xff534d42, (long)0xfe534d42, 0x65735546,
	0x00c36400, 0x01021997, 0x5346414f,
};

static int			 ifd = -1;	/* owned: the instance */
static int			 broken;	/* no instance can be had */
static volatile sig_atomic_t	 events;	/* SIGIOs counted */

static void
on_sigio(int sig)
{
	char	buf[4096];
	int	saved = errno;

	(void)sig;
	events = events + 1;
	while (ifd != -1 && read(ifd, buf, sizeof(buf)) > 0)
		;
	errno = saved;
}

/* The instance, made on first use: -1 if it cannot be. */
static int
instance(void)
{
	struct sigaction	sa;
	struct f_owner_ex	owner;
	int			fd;

	if (ifd != -1 || broken)
		return ifd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigio;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	owner.type = F_OWNER_TID;
	owner.pid = (pid_t)syscall(SYS_gettid);
	if ((fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1 ||
	    sigaction(SIGIO, &sa, NULL) == -1 ||
	    fcntl(fd, F_SETOWN_EX, &owner) == -1 ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) == -1) {
		if (fd != -1)
			close(fd);
		broken = 1;
		return -1;
	}
	ifd = fd;
	return ifd;
}

/* Whether path is on a file system of remote[]. */
static int
is_remote(const char *path)
{
	struct statfs	fs;
	size_t		i;

	if (statfs(path, &fs) == -1)
		return 1;
	for (i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((long)fs.f_type == remote[i])
			return 1;
	return 0;
}

/* Sets w's watch on the file at path (the one there now), dropping the
 * one it had on another file. */
static void
arm(struct filewatch *w, const char *path, int what)
{
	uint32_t	mask = IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF;
	int		wd = -1;

	if (what & FILEWATCH_SIZE)
		mask |= IN_MODIFY;
	if (instance() != -1 && !is_remote(path))
		wd = inotify_add_watch(ifd, path, mask);
	if (w->wd > 0 && w->wd != wd)
		inotify_rm_watch(ifd, w->wd);
	w->wd = wd;
}

int
filewatch_due(struct filewatch *w, const char *path, int what)
{
	int64_t		now = clock_mono_us();
	unsigned	n = (unsigned)events;
	int		late = now - w->at_us >= FILEWATCH_BACKSTOP_MS * 1000;

	if (w->wd > 0 && n == w->seen && !late)
		return 0;
	if (w->wd <= 0 && !late)	/* no watch: try again when late */
		return 1;
	w->seen = n;
	w->at_us = now;
	arm(w, path, what);
	return 1;
}

void
filewatch_reset(struct filewatch *w)
{
	w->at_us = clock_mono_us() - FILEWATCH_BACKSTOP_MS * 1000;
}
