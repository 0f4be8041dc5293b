/* filewatch.h: whether a file a process keeps open may have been
 * deleted, replaced or changed at its path since it last looked, told
 * by the kernel (inotify) rather than asked with a stat() every request
 * (doc/design.md, section 21). */
#ifndef EVALGATE_FILEWATCH_H
#define EVALGATE_FILEWATCH_H

#include <stdint.h>

/* Every check is made at least this often even with a watch: a file
 * put in place by a path's directory renamed (which no event on the
 * file tells) is noticed within this. */
#define FILEWATCH_BACKSTOP_MS	1000

/* What the kernel tells of a watched file: unlinked or replaced by a
 * rename (its link count, IN_ATTRIB), moved, freed; FILEWATCH_SIZE adds
 * writes and truncations (IN_MODIFY), for a file nobody write()s in
 * normal use. */
#define FILEWATCH_SIZE		1

/* One file's watch, in the struct of whoever keeps the file (its
 * owner's); zeroed, or set up by filewatch_reset(), before first use. */
struct filewatch {
	int		 wd;		/* the inotify watch; 0 or -1: none */
	unsigned	 seen;		/* events counted when last due */
	int64_t		 at_us;		/* when last due (clock_mono_us) */
};

/* Whether the caller should check the file at path now (stat() it
 * against the file it keeps): 1 when an event came since it was last
 * due (for any file this process watches), when FILEWATCH_BACKSTOP_MS
 * passed, or always where no watch could be set (no inotify, its
 * limits reached, a network file system, whose changes on another host
 * it never tells).  When due, the watch is set again on the file at
 * path first, so that what happens during the caller's check is told
 * too.  No system call when not due. */
int	 filewatch_due(struct filewatch *w, const char *path, int what);
/* The next filewatch_due() is due: the caller opened another file. */
void	 filewatch_reset(struct filewatch *w);

#endif
