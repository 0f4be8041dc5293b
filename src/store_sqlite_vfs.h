/* store_sqlite_vfs.h: SQLite's unix VFS with a commit's WAL frames
 * written at once (store_sqlite_vfs.c). */
#ifndef EVALGATE_STORE_SQLITE_VFS_H
#define EVALGATE_STORE_SQLITE_VFS_H

/* Makes the layer SQLite's default VFS for the process, for every
 * connection opened after; again, nothing.  0, or -1 (SQLite has no
 * default VFS, or refused ours: connections stay on the unix VFS). */
int	store_sqlite_vfs_register(void);

#endif
