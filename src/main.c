/* main.c: evalgate.fcgi, the FastCGI worker.
 *
 * The web server (lighttpd mod_fastcgi, Apache mod_fcgid) starts it with
 * the listening socket on descriptor 0.  It reads its settings, opens its
 * own database connection (never one inherited across fork), then
 * answers one request per loop turn, then asks the challengers of the
 * evaluation it answered, if any.  SIGTERM ends the loop after the
 * request in hand is answered (its challengers shed).
 * `evalgate.fcgi --version` prints its version and exits. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <fcgiapp.h>
#include <sodium.h>
#include <curl/curl.h>

#include "auth.h"
#include "backend.h"
#include "challenger.h"
#include "clock.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "router.h"
#include "routes.h"
#include "settings.h"
#include "shm.h"
#include "shm_group.h"
#include "store.h"
#include "version.h"

static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
	FCGX_ShutdownPending();
}

static const char *
env(const char *name)
{
	return getenv(name);
}

/* Whether the web server has a request waiting for this worker: its
 * connection on the FastCGI socket (descriptor 0), not yet accepted.
 * The challengers give way to it (challenger.h). */
static int
request_waiting(void)
{
	struct pollfd	 p = { 0, POLLIN, 0 };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

/* Whether the FastCGI socket is a unix socket (lighttpd's, Apache
 * mod_fcgid's): then accept_next() accepts its connections. */
static int
listens_unix(int fd)
{
	struct sockaddr	sa;
	socklen_t	len = sizeof(sa);

	return getsockname(fd, &sa, &len) == 0 && sa.sa_family == AF_UNIX;
}

/* Accepts the next connection of a unix FastCGI socket before
 * FCGX_Accept_r() does.  libfcgi's own accept polls each connection it
 * accepts on a unix socket for up to 2 s before reading it, one system
 * call per request, and drops one that stays silent that long: here the
 * read that follows waits instead, until the server writes or closes
 * (lighttpd and Apache mod_fcgid write the request as they connect).
 * FCGX_Accept_r() takes a connection already open (ipcFd, as for a
 * connection the server keeps, FCGI_KEEP_CONN) if the request it
 * finishes first keeps it (keepConnection, which the request read then
 * sets from the server's flags); on a failure it closes it and accepts
 * the next one itself, as it does for any error here. */
static void
accept_next(FCGX_Request *fcgi)
{
	int fd;

	if (fcgi->ipcFd >= 0)
		return;
	do
		fd = accept4(fcgi->listen_sock, NULL, NULL, SOCK_CLOEXEC);
	while (fd == -1 && errno == EINTR && !stopping);
	if (fd == -1)
		return;
	fcgi->ipcFd = fd;
	fcgi->keepConnection = 1;
}

_Static_assert(ROUTE__MAX <= METRICS_NO_ROUTE, "every route has its cells");

/* The routes' labels for the metrics (method and pattern of each row). */
static void
metrics_setup(const struct settings *s)
{
	static struct metrics_route	 labels[ROUTE__MAX];
	size_t				 i;

	for (i = 0; i < ROUTE__MAX; i++) {
		labels[i].method = routes[i].method;
		labels[i].pattern = routes[i].pattern;
	}
	metrics_set_routes(labels, ROUTE__MAX);
	metrics_enable(s->metrics != 0);
}

int
main(int argc, char **argv)
{
	static struct settings	 settings;
	struct sigaction	 sa;
	struct error		 e = { 0 };
	struct store		*store;
	struct shm		*shm;
	FCGX_Request		 fcgi;
	struct req		 r;
	char			 err[512];
	int			 unix_socket, guarded;

	/* Before anything FastCGI: an operator asks from a shell. */
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("evalgate.fcgi %s\n", EVALGATE_VERSION);
		return 0;
	}
	if (settings_load(&settings, env, err, sizeof(err)) == -1) {
		log_warn("bad setting: %s", err);
		return 1;
	}
#ifdef EVALGATE_TEST_HOOKS
	clock_use_file(settings.test_clock_file);
#endif
	/* A request allocates and frees a few hundred KiB; without this
	 * glibc hands the heap top back after each one and faults it in
	 * again on the next (bench/RESULTS.md).  Without fast bins, the
	 * small blocks a request frees beyond the thread cache merge as
	 * they are freed, rather than all at once in malloc_consolidate()
	 * at libfcgi's 8 KiB buffers of the next request. */
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
	mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
	mallopt(M_MXFAST, 0);
	/* libcurl is set up at the first remote call (backend_http.c). */
	if (sodium_init() < 0) {
		log_warn("cannot initialise libsodium");
		return 1;
	}
	/* Files this worker makes (a deleted cache, the shared memory)
	 * are the state's: 0600, or 0660 for a shared group. */
	umask(SETTINGS_UMASK(&settings));
	if (auth_init(settings.pepper_file, (int)settings.group_writable,
	    &e) == -1) {
		log_warn("%s", e.message);
		error_clear(&e);
		return 1;
	}
	/* The host's shared memory (in-flight limits, probes, key
	 * budgets, the write-lock queues, metrics).  Without it those limits
	 * are off and nothing is counted, which is logged: not a reason to
	 * refuse requests.  Mapped first: opening the store writes the
	 * cache, in its queue.  Guarded from the start: the file may be
	 * cut short while it is being set up. */
	guarded = shm_guard() == 0;
	if ((shm = shm_attach(settings.shm_path, SHM_SLOTS(settings.workers) >
	    SHM_SLOTS_DEFAULT ? (int)settings.workers : 0, 0666, &e)) == NULL) {
		log_warn("%s: host-wide limits off", e.message);
		error_clear(&e);
	}
	shm_set_host(shm);
	if (shm != NULL && !guarded)
		log_warn("shared memory: cannot catch SIGBUS; a file cut "
		    "short under the workers will stop them");
	if (settings.cpu_affinity && shm_spread(shm) == -1)
		log_warn("SERVICE_CPU_AFFINITY: cannot keep to one CPU, "
		    "runs on any");
	metrics_setup(&settings);
	/* A database that cannot be opened yet is answered with 503s, and
	 * tried again between requests: not a reason to exit.  The store
	 * checks a backend's options against its kind's table. */
	store_set_kind_options(backend_kind_options);
	store = store_open_lazy(&settings);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);	/* no SA_RESTART: accept returns */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (FCGX_Init() != 0 || FCGX_InitRequest(&fcgi, 0, 0) != 0) {
		log_warn("cannot initialise FastCGI");
		return 1;
	}
	unix_socket = listens_unix(fcgi.listen_sock);
	for (;;) {
		if (unix_socket)
			accept_next(&fcgi);
		if (stopping || FCGX_Accept_r(&fcgi) < 0)
			break;
		store_maintain(store);
		if (shm != NULL)
			shm_maintain(shm);
		shm_serving(shm, 1);
		req_init(&r, &fcgi, &settings, store);
		router_dispatch(&r);
		/* With nothing left unread, close at once: libfcgi would
		 * shut down its side and wait for the server to close
		 * first, a round trip through the server in which this
		 * worker sits idle. */
		if (req_drained(&r))
			FCGX_Detach(&fcgi);
		req_free(&r);
		FCGX_Finish_r(&fcgi);
		shm_serving(shm, 0);
		/* The web server has the whole response and the connection
		 * is closed: only now are the challengers asked, so that
		 * the client never waits for them (doc/design.md, section
		 * 22). */
		challenger_run(store, &settings, &stopping, request_waiting);
		store_idle(store);
	}
	FCGX_Free(&fcgi, 1);
	store_close(store);
	shm_detach(shm);
	backend_cleanup();
	curl_global_cleanup();
	return 0;
}
