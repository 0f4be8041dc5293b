/* store_sqlite_vfs.h: SQLite's unix VFS with a commit's WAL frames
 * written at once (store_sqlite_vfs.c). */
#ifndef EVALGATE_STORE_SQLITE_VFS_H
#define EVALGATE_STORE_SQLITE_VFS_H

#include <stdint.h>

#include <sqlite3.h>

/* Makes the layer SQLite's default VFS for the process, for every
 * connection opened after; again, nothing.  0, or -1 (SQLite has no
 * default VFS, or refused ours: connections stay on the unix VFS). */
int	store_sqlite_vfs_register(void);

/* The number of transactions committed to the database whose file is f
 * (SQLITE_FCNTL_FILE_POINTER), by any process, as its wal-index says:
 * it moves with every commit, and starts again from 0 only when the
 * wal-index is rebuilt.  0 and *n, or -1: not a file of this layer, its
 * shared memory not mapped yet, or a commit being published. */
int	store_sqlite_vfs_commits(sqlite3_file *f, uint32_t *n);

#endif
