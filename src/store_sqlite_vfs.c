/*
 * store_sqlite_vfs.c: SQLite's unix VFS, with a commit's WAL frames
 * written by one system call instead of two per frame.
 *
 * SQLite writes each WAL frame as two pwrite()s, its 24-byte header and
 * then the page, and once the commit's last frame is written it
 * publishes the commit in the wal-index.  Under this layer a WAL file
 * gathers writes that follow one another into a buffer of at most
 * VFS_BATCH_MAX bytes, and writes the buffer out:
 *
 *  - with the page of a commit's last frame, inside that xWrite, so
 *    that an error reaches SQLite before it publishes the commit (a
 *    frame's header says, in bytes 4 to 7, the database's size in
 *    pages after the commit for a commit's last frame, 0 for any other:
 *    SQLite's file format, https://sqlite.org/fileformat2.html#walformat);
 *  - when it is full, or a write does not follow the last;
 *  - before anything else touches the file: a read, a sync, a
 *    truncation, its size, a file control, its close;
 *  - before any database file's shared-memory lock or barrier, by which
 *    a commit is published: a second guard, should a commit ever end
 *    some other way.
 *
 * So no process, and no later read, sees a commit before its frames are
 * in the file, as without this layer, and a crash loses only frames of
 * a commit not yet published.  Everything else is the unix VFS's own,
 * but that a database file keeps where SQLite mapped its wal-index, for
 * store_sqlite_vfs_commits() to read the commits' count there.
 * A worker is one thread: the list of open WAL files is not locked.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "buf.h"
#include "store_sqlite_vfs.h"

#define VFS_BATCH_MAX	(64 << 10)	/* bytes gathered; the unix VFS
					 * writes at most 128 KiB - 1 at once */
#define WAL_FRAME_HDR	24		/* bytes of a frame's header */

/* The wal-index header (SQLite's WAL-mode file formats): two copies of
 * WALINDEX_HDR bytes at the start of a database's shared memory, the
 * second written first, each beginning with its version and, after a
 * word unused, iChange: the number of transactions committed (it
 * starts again from 0 only when the wal-index is rebuilt). */
#define WALINDEX_VERSION	3007000u
#define WALINDEX_HDR		48		/* bytes of a copy */

/* A file of ours: the unix VFS's file follows it in the allocation
 * SQLite made for it (vfs.szOsFile). */
struct layer {
	sqlite3_file	 base;
	sqlite3_file	*real;		/* the unix file, after ours */
	const volatile uint32_t *index;	/* a database's wal-index header:
					 * borrowed from SQLite's mapping
					 * of its shared memory; NULL */
};

/* A WAL file. */
struct wal_file {
	struct layer	 l;
	struct wal_file	*next;		/* in open_wals */
	struct buf	 batch;		/* owned: writes gathered */
	sqlite3_int64	 at;		/* the file offset of batch.p[0] */
	int		 commit;	/* the last write was the header of a
					 * commit's last frame */
};

static sqlite3_vfs	*unix_vfs;	/* borrowed: SQLite's default */
static sqlite3_vfs	 vfs;		/* ours: a copy of it but xOpen */
static struct wal_file	*open_wals;	/* borrowed: every WAL file open */

static int
flush(struct wal_file *w)
{
	int rc;

	if (w->batch.len == 0)
		return SQLITE_OK;
	rc = w->l.real->pMethods->xWrite(w->l.real, w->batch.p,
	    (int)w->batch.len, w->at);
	buf_reset(&w->batch);
	return rc;
}

static int
flush_all(void)
{
	struct wal_file	*w;
	int		 rc = SQLITE_OK;

	for (w = open_wals; w != NULL; w = w->next)
		if (flush(w) != SQLITE_OK)
			rc = SQLITE_IOERR_WRITE;
	return rc;
}

#define WAL(f)	((struct wal_file *)(f))
#define REAL(f)	(((struct layer *)(f))->real)

static int
wal_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	struct wal_file		*w = WAL(f);
	const unsigned char	*h = p;
	int			 rc;

	if (w->batch.len > 0 && (off != w->at + (sqlite3_int64)w->batch.len ||
	    w->batch.len + (size_t)amt > VFS_BATCH_MAX) &&
	    (rc = flush(w)) != SQLITE_OK)
		return rc;
	if (w->batch.len == 0)
		w->at = off;
	if (buf_add(&w->batch, p, (size_t)amt) != BUF_OK) {
		/* Larger than a batch, or no memory: as SQLite would. */
		w->commit = 0;
		if ((rc = flush(w)) != SQLITE_OK)
			return rc;
		return REAL(f)->pMethods->xWrite(REAL(f), p, amt, off);
	}
	if (w->commit) {
		w->commit = 0;
		return flush(w);
	}
	w->commit = amt == WAL_FRAME_HDR && (h[4] | h[5] | h[6] | h[7]);
	return SQLITE_OK;
}

static int
wal_close(sqlite3_file *f)
{
	struct wal_file	 *w = WAL(f), **pp;
	int		  rc = flush(w), rc2;

	for (pp = &open_wals; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	buf_free(&w->batch);
	rc2 = REAL(f)->pMethods->xClose(REAL(f));
	return rc != SQLITE_OK ? rc : rc2;
}

/* The WAL file's other methods: the batch out first, where the file is
 * read or changed otherwise. */
#define FLUSHED(call)	do {						\
	int rc_ = flush(WAL(f));					\
									\
	return rc_ != SQLITE_OK ? rc_ : (call);				\
} while (0)

static int
wal_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	FLUSHED(REAL(f)->pMethods->xRead(REAL(f), p, amt, off));
}

static int
wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	FLUSHED(REAL(f)->pMethods->xTruncate(REAL(f), size));
}

static int
wal_sync(sqlite3_file *f, int flags)
{
	FLUSHED(REAL(f)->pMethods->xSync(REAL(f), flags));
}

static int
wal_size(sqlite3_file *f, sqlite3_int64 *size)
{
	FLUSHED(REAL(f)->pMethods->xFileSize(REAL(f), size));
}

static int
wal_control(sqlite3_file *f, int op, void *arg)
{
	FLUSHED(REAL(f)->pMethods->xFileControl(REAL(f), op, arg));
}

/* Passed on as they are, for both kinds of file. */
static int
pass_lock(sqlite3_file *f, int level)
{
	return REAL(f)->pMethods->xLock(REAL(f), level);
}

static int
pass_unlock(sqlite3_file *f, int level)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), level);
}

static int
pass_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
pass_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
pass_caps(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
pass_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int
pass_read(sqlite3_file *f, void *p, int amt, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), p, amt, off);
}

static int
pass_write(sqlite3_file *f, const void *p, int amt, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xWrite(REAL(f), p, amt, off);
}

static int
pass_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
pass_sync(sqlite3_file *f, int flags)
{
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int
pass_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
pass_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

/* A database file's shared memory: where its first region is mapped is
 * kept, for store_sqlite_vfs_commits(). */
static int
db_shm_map(sqlite3_file *f, int pg, int size, int extend,
    void volatile **pp)
{
	int rc = REAL(f)->pMethods->xShmMap(REAL(f), pg, size, extend, pp);

	if (rc == SQLITE_OK && pg == 0 && *pp != NULL &&
	    size >= 2 * WALINDEX_HDR)
		((struct layer *)f)->index = (const volatile uint32_t *)*pp;
	return rc;
}

static int
pass_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	return REAL(f)->pMethods->xFetch(REAL(f), off, amt, pp);
}

static int
pass_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

/* A database file's shared memory: every batch out first. */
static int
db_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	int rc = flush_all();

	return rc != SQLITE_OK ? rc :
	    REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

static void
db_shm_barrier(sqlite3_file *f)
{
	(void)flush_all();
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
db_shm_unmap(sqlite3_file *f, int delete)
{
	(void)flush_all();
	((struct layer *)f)->index = NULL;
	return REAL(f)->pMethods->xShmUnmap(REAL(f), delete);
}

static const sqlite3_io_methods wal_methods = {
	.iVersion = 1,
	.xClose = wal_close,
	.xRead = wal_read,
	.xWrite = wal_write,
	.xTruncate = wal_truncate,
	.xSync = wal_sync,
	.xFileSize = wal_size,
	.xLock = pass_lock,
	.xUnlock = pass_unlock,
	.xCheckReservedLock = pass_reserved,
	.xFileControl = wal_control,
	.xSectorSize = pass_sector,
	.xDeviceCharacteristics = pass_caps,
};

static const sqlite3_io_methods db_methods = {
	.iVersion = 3,
	.xClose = pass_close,
	.xRead = pass_read,
	.xWrite = pass_write,
	.xTruncate = pass_truncate,
	.xSync = pass_sync,
	.xFileSize = pass_size,
	.xLock = pass_lock,
	.xUnlock = pass_unlock,
	.xCheckReservedLock = pass_reserved,
	.xFileControl = pass_control,
	.xSectorSize = pass_sector,
	.xDeviceCharacteristics = pass_caps,
	.xShmMap = db_shm_map,
	.xShmLock = db_shm_lock,
	.xShmBarrier = db_shm_barrier,
	.xShmUnmap = db_shm_unmap,
	.xFetch = pass_fetch,
	.xUnfetch = pass_unfetch,
};

/* A database or WAL file is the unix VFS's behind ours; any other
 * (a rollback journal, a temporary file) is the unix VFS's alone. */
static int
vfs_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	int		 wal = (flags & SQLITE_OPEN_WAL) != 0;
	size_t		 head = wal ? sizeof(struct wal_file) :
			    sizeof(struct layer);
	sqlite3_file	*real = (sqlite3_file *)((char *)f + head);
	int		 rc;

	(void)v;
	if (!wal && !(flags & SQLITE_OPEN_MAIN_DB))
		return unix_vfs->xOpen(unix_vfs, name, f, flags, out);
	f->pMethods = NULL;		/* nothing to close on failure */
	if ((rc = unix_vfs->xOpen(unix_vfs, name, real, flags, out)) !=
	    SQLITE_OK)
		return rc;
	if (wal) {
		struct wal_file *w = WAL(f);

		memset(w, 0, sizeof(*w));
		w->l.real = real;
		buf_init(&w->batch, VFS_BATCH_MAX);
		w->next = open_wals;
		open_wals = w;
		f->pMethods = &wal_methods;
	} else {
		((struct layer *)f)->real = real;
		((struct layer *)f)->index = NULL;
		f->pMethods = &db_methods;
	}
	return SQLITE_OK;
}

int
store_sqlite_vfs_register(void)
{
	if (unix_vfs != NULL)
		return 0;
	if ((unix_vfs = sqlite3_vfs_find(NULL)) == NULL)
		return -1;
	vfs = *unix_vfs;
	vfs.zName = "evalgate";
	vfs.szOsFile = (int)sizeof(struct wal_file) + unix_vfs->szOsFile;
	vfs.xOpen = vfs_open;
	if (sqlite3_vfs_register(&vfs, 1) != SQLITE_OK) {
		unix_vfs = NULL;
		return -1;
	}
	return 0;
}

int
store_sqlite_vfs_commits(sqlite3_file *f, uint32_t *n)
{
	const volatile uint32_t	*h;
	uint32_t		 first, second;

	if (f == NULL || f->pMethods != &db_methods ||
	    (h = ((struct layer *)f)->index) == NULL)
		return -1;
	/* Read as SQLite reads it: the copy written last first; copies
	 * that differ are a commit being published. */
	first = __atomic_load_n(&h[2], __ATOMIC_ACQUIRE);
	second = __atomic_load_n(&h[WALINDEX_HDR / 4 + 2], __ATOMIC_ACQUIRE);
	if (h[0] != WALINDEX_VERSION || first != second)
		return -1;
	*n = first;
	return 0;
}
