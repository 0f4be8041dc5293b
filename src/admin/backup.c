/* backup.c: evalgate-admin backup and restore: the files around the
 * store's copy (store_sqlite_backup.c): where a backup goes and what it may
 * replace, the pepper beside it, and what the operator is told.
 *
 * The pepper is written beside a backup (FILE.pepper, 0600): keys do
 * not authenticate without it, and a backup that needs a file kept
 * elsewhere is one that fails the day it is needed.  The price is a
 * secret beside the data, which README's "Backup and restore" says:
 * keep both as the database itself is kept, or move the pepper away. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "admin/backup.h"
#include "admin/console.h"
#include "error.h"
#include "json_util.h"
#include "settings.h"
#include "store.h"

#define PEPPER_MAX 128		/* bytes of a pepper file read, at most */
#define PATH_SIZE 4096

/* Whether the option field was given (OPT_FLAG: true). */
static int
flag(json_object *in, const char *field)
{
	json_object *v;

	return json_object_object_get_ex(in, field, &v) &&
	    json_object_get_boolean(v);
}

static int
refused(struct error *e)
{
	console_error(1, NULL, "%s", e->message);
	error_clear(e);
	return 1;
}

/* The pepper file at path into buf (its raw bytes, *len of them): 1,
 * 0 missing, -1 unreadable or not a pepper (errno or EINVAL). */
static int
read_pepper(const char *path, char buf[PEPPER_MAX], size_t *len)
{
	unsigned char	raw[32];
	size_t		n;
	ssize_t		got;
	int		fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	got = read(fd, buf, PEPPER_MAX);
	close(fd);
	if (got < 0)
		return -1;
	*len = (size_t)got;
	if (sodium_hex2bin(raw, sizeof(raw), buf, *len, " \n", &n, NULL) !=
	    0 || n != sizeof(raw)) {
		errno = EINVAL;
		return -1;
	}
	sodium_memzero(raw, sizeof(raw));
	return 1;
}

/* Writes len bytes into a new 0600 file beside path, synced, for the
 * caller to rename over path; the new file's name is put in tmp.  0,
 * or -1 with errno. */
static int
write_beside(const char *path, const char *p, size_t len,
    char tmp[PATH_SIZE + 16])
{
	int fd, err;

	snprintf(tmp, PATH_SIZE + 16, "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) == -1)
		return -1;
	if (fchmod(fd, 0600) == -1 || write(fd, p, len) != (ssize_t)len ||
	    fsync(fd) == -1) {
		err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

static void
sync_dir_of(const char *path)
{
	char	copy[PATH_SIZE];
	int	fd;

	snprintf(copy, sizeof(copy), "%s", path);
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1) {
		fsync(fd);
		close(fd);
	}
}

/* Whether path and other name the same file. */
static int
same_file(const char *path, const char *other)
{
	struct stat a, b;

	return stat(path, &a) == 0 && stat(other, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The backup's audit row (action "backup", target the file as named),
 * which the web console's overview shows as the last backup.  A backup
 * written is not undone when its row cannot be: the operator is told. */
static void
audit_backup(const struct settings *s, const char *file,
    const struct store_copy *c)
{
	struct error	 e = { 0 };
	struct store	*st;
	json_object	*d = ju_obj();

	json_object_object_add(d, "decisions",
	    json_object_new_int64(c->decisions));
	json_object_object_add(d, "bytes", json_object_new_int64(c->bytes));
	if ((st = store_open(s, &e)) == NULL ||
	    store_audit(st, "console", "backup", file, d, &e) == -1)
		console_error(0, NULL, "backup %s written, but not its audit "
		    "row (the console's last backup): %s", file, e.message);
	error_clear(&e);
	store_close(st);
	json_object_put(d);
}

int
cmd_backup(const struct settings *s, json_object *in)
{
	struct store_copy	 c;
	struct error		 e = { 0 };
	struct stat		 sb;
	const char		*file = ju_str(in, "file"), *where;
	char			 dir[PATH_SIZE], pepper_path[PATH_SIZE + 8];
	char			 tmp[PATH_SIZE + 16], ptmp[PATH_SIZE + 16];
	char			 pepper[PEPPER_MAX];
	size_t			 plen = 0;
	int			 force = flag(in, "force"), fd, rc;

	if (strlen(file) >= PATH_SIZE - 16)
		return console_error(1, NULL, "%s: name too long", file);
	snprintf(dir, sizeof(dir), "%s", file);
	where = dirname(dir);
	if (stat(where, &sb) == -1 || !S_ISDIR(sb.st_mode))
		return console_error(1, NULL, "%s: no such directory %s (a "
		    "backup is not written into a directory that does not "
		    "exist)", file, where);
	snprintf(pepper_path, sizeof(pepper_path), "%s.pepper", file);
	if (same_file(file, s->db_path) || same_file(pepper_path,
	    s->pepper_file))
		return console_error(1, NULL, "%s: that is the database or "
		    "its pepper", file);
	if (!force && access(file, F_OK) == 0)
		return console_error(1, NULL, "%s exists: refused (--force "
		    "replaces it)", file);
	if (!force && access(pepper_path, F_OK) == 0)
		return console_error(1, NULL, "%s exists: refused (--force "
		    "replaces it)", pepper_path);
	if ((rc = read_pepper(s->pepper_file, pepper, &plen)) != 1)
		return console_error(1, NULL, "pepper file %s: %s (keys do "
		    "not work without it: no backup made)", s->pepper_file,
		    rc == 0 ? "missing" : strerror(errno));
	if (write_beside(pepper_path, pepper, plen, ptmp) == -1) {
		sodium_memzero(pepper, sizeof(pepper));
		return console_error(1, NULL, "%s: %s", pepper_path,
		    strerror(errno));
	}
	sodium_memzero(pepper, sizeof(pepper));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file);
	if ((fd = mkstemp(tmp)) == -1) {
		unlink(ptmp);
		return console_error(1, NULL, "%s: %s", tmp, strerror(errno));
	}
	fchmod(fd, 0600);
	close(fd);
	if (store_backup(s, tmp, &c, &e) == -1) {
		unlink(tmp);
		unlink(ptmp);
		return refused(&e);
	}
	if (rename(ptmp, pepper_path) == -1 || rename(tmp, file) == -1) {
		rc = errno;
		unlink(tmp);
		unlink(ptmp);
		return console_error(1, NULL, "%s: %s", file, strerror(rc));
	}
	sync_dir_of(file);
	audit_backup(s, file, &c);
	printf("backup %s written: %lld decisions, %lld pages, %lld bytes, "
	    "schema version %d (the cache is not backed up)\n"
	    "pepper %s written beside it: keys do not work without it; keep "
	    "it as secret as the database\n", file, (long long)c.decisions,
	    (long long)c.pages, (long long)c.bytes, c.version, pepper_path);
	return 0;
}

int
cmd_restore(const struct settings *s, json_object *in)
{
	struct store_copy	 c;
	struct error		 e = { 0 };
	const char		*file = ju_str(in, "file");
	const char		*pepper_note;
	char			 pepper_path[PATH_SIZE + 8];
	char			 ptmp[PATH_SIZE + 16];
	char			 theirs[PEPPER_MAX], ours[PEPPER_MAX];
	size_t			 tlen = 0, olen = 0;
	int			 replace = flag(in, "replace_pepper");
	int			 have_theirs, have_ours, put_pepper = 0;

	if (strlen(file) >= PATH_SIZE - 16)
		return console_error(1, NULL, "%s: name too long", file);
	if (access(file, R_OK) == -1)
		return console_error(1, NULL, "%s: %s", file, strerror(errno));
	snprintf(pepper_path, sizeof(pepper_path), "%s.pepper", file);
	if ((have_theirs = read_pepper(pepper_path, theirs, &tlen)) == -1)
		return console_error(1, NULL, "%s: %s", pepper_path,
		    errno == EINVAL ? "not a pepper (want 64 hex digits)" :
		    strerror(errno));
	if ((have_ours = read_pepper(s->pepper_file, ours, &olen)) == -1)
		return console_error(1, NULL, "pepper file %s: %s",
		    s->pepper_file, errno == EINVAL ? "not a pepper (want 64 "
		    "hex digits)" : strerror(errno));
	if (have_theirs && have_ours && (tlen != olen ||
	    memcmp(theirs, ours, tlen) != 0) && !replace)
		return console_error(1, NULL, "pepper file %s differs from "
		    "%s: the backup's keys would not work with it "
		    "(--replace-pepper puts the backup's in its place)",
		    s->pepper_file, pepper_path);
	sodium_memzero(ours, sizeof(ours));
	put_pepper = have_theirs && (!have_ours || replace);
	if (store_restore(s, file, &c, &e) == -1) {
		sodium_memzero(theirs, sizeof(theirs));
		console_error(1, NULL, "restore: %s", e.message);
		error_clear(&e);
		return 1;
	}
	if (put_pepper) {
		if (write_beside(s->pepper_file, theirs, tlen, ptmp) == -1 ||
		    rename(ptmp, s->pepper_file) == -1) {
			sodium_memzero(theirs, sizeof(theirs));
			unlink(ptmp);
			return console_error(1, NULL, "database restored, "
			    "but the pepper could not be: copy %s to %s by "
			    "hand: %s", pepper_path, s->pepper_file,
			    strerror(errno));
		}
		sync_dir_of(s->pepper_file);
	}
	sodium_memzero(theirs, sizeof(theirs));
	if (put_pepper)
		pepper_note = "restored from the backup";
	else if (have_theirs)
		pepper_note = "kept: the same as the backup's";
	else if (have_ours)
		pepper_note = "kept, but there was none beside the backup: keys "
		    "work only if it is the backed-up install's";
	else
		pepper_note = "missing, and none beside the backup: put the "
		    "backed-up install's there before starting (a new one from "
		    "init leaves every key unusable)";
	printf("restored %s into %s: %lld decisions, schema version %d "
	    "(now %d)\npepper %s %s\ncache %s removed (rebuilt on use)\n"
	    "next: start or restart the web server (e.g. systemctl restart "
	    "lighttpd) so that its workers open the restored database\n",
	    file, s->db_path, (long long)c.decisions, c.version, c.migrated,
	    s->pepper_file, pepper_note, s->cache_path);
	return 0;
}
