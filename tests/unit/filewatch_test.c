/* filewatch_test.c: TAP tests of the kernel's word on files kept open
 * (src/filewatch.c): a watched file is not due while nothing happens to
 * it, and is due at once, without waiting for the backstop, when it is
 * renamed over, unlinked, chmod()ed or (watched for its size) cut short,
 * by this process or by another one; a write to a file not watched for
 * its size is not an event; every call is due again after
 * FILEWATCH_BACKSTOP_MS. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filewatch.h"
#include "tap.h"

static char	dir[] = "/tmp/filewatch_test.XXXXXX";
static char	path[64], other[64];

static void
touch(const char *p)
{
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd != -1) {
		(void)write(fd, "0123456789", 10);
		close(fd);
	}
}

/* Whether w is due at once, then (checked) not due again. */
static int
due_once(struct filewatch *w, int what)
{
	return filewatch_due(w, path, what) == 1 &&
	    filewatch_due(w, path, what) == 0;
}

/* A child renames another file over path; the parent learns it is done
 * through a pipe, as a worker learns of an operator's mv. */
static int
replaced_by_child(void)
{
	int	p[2];
	char	c = 0;
	pid_t	pid;

	if (pipe(p) == -1 || (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		touch(other);
		(void)!rename(other, path);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	close(p[1]);
	(void)!read(p[0], &c, 1);
	close(p[0]);
	waitpid(pid, NULL, 0);
	return c == 'x' ? 0 : -1;
}

int
main(void)
{
	struct filewatch	w, sized;
	int			fd;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(other, sizeof(other), "%s/g", dir);
	touch(path);
	memset(&w, 0, sizeof(w));
	memset(&sized, 0, sizeof(sized));

	ok(filewatch_due(&w, path, 0) == 1, "a new watch is due");
	ok(filewatch_due(&w, path, 0) == 0 && filewatch_due(&w, path, 0) ==
	    0, "then not due while nothing happens to the file");
	ok(w.wd > 0, "a watch is set (tmp is a local file system)");

	touch(other);
	rename(other, path);
	ok(due_once(&w, 0), "renamed over: due at once, and only once");
	ok(replaced_by_child() == 0 && due_once(&w, 0), "renamed over by "
	    "another process: due at once");
	unlink(path);
	touch(path);
	ok(due_once(&w, 0), "unlinked and made again: due at once");
	chmod(path, 0640);
	ok(due_once(&w, 0), "chmod()ed: due");

	fd = open(path, O_WRONLY);
	(void)!write(fd, "abc", 3);
	ok(filewatch_due(&w, path, 0) == 0, "a write is no event for a "
	    "file not watched for its size");
	ok(due_once(&sized, FILEWATCH_SIZE), "a new watch for its size: due "
	    "once");
	(void)!ftruncate(fd, 4);
	close(fd);
	ok(filewatch_due(&sized, path, FILEWATCH_SIZE) == 1, "cut short: "
	    "due when watched for its size");
	ok(filewatch_due(&w, path, 0) == 1, "and any event makes every "
	    "watch of the process due once");
	ok(filewatch_due(&w, path, 0) == 0 && filewatch_due(&sized, path,
	    FILEWATCH_SIZE) == 0, "then neither is due");

	filewatch_reset(&w);
	ok(due_once(&w, 0), "reset: due");
	usleep((FILEWATCH_BACKSTOP_MS + 100) * 1000);
	ok(filewatch_due(&w, path, 0) == 1, "due again after the backstop");

	unlink(path);
	rmdir(dir);
	return tap_done();
}
