/* floor.c: the benchmark's floor.  A FastCGI program that answers every
 * request with a fixed JSON body, run behind the same lighttpd with the
 * same number of workers as the gateway: what lighttpd and FastCGI cost
 * with no work at all.  With FLOOR_SLEEP_MS set it sleeps that long
 * before answering: the floor of the slow-backend scenario, a worker
 * that only waits as the gateway waits for its backend.  Not part of
 * evalgate. */
#include <stdlib.h>
#include <unistd.h>

#include <fcgiapp.h>

static const char answer[] =
	"Status: 200 OK\r\n"
	"Content-Type: application/json\r\n"
	"Content-Length: 15\r\n"
	"\r\n"
	"{\"status\":\"ok\"}";

int
main(void)
{
	FCGX_Request	 req;
	char		 buf[4096];
	const char	*sleep_ms = getenv("FLOOR_SLEEP_MS");
	long		 ms = sleep_ms != NULL ? atol(sleep_ms) : 0;

	if (FCGX_Init() != 0 || FCGX_InitRequest(&req, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&req) >= 0) {
		if (ms > 0)
			usleep((useconds_t)ms * 1000);
		/* Read the body to its end and close at once without
		 * waiting for lighttpd to close first, as the gateway does
		 * (src/main.c). */
		while (FCGX_GetStr(buf, sizeof(buf), req.in) > 0)
			continue;
		FCGX_PutStr(answer, sizeof(answer) - 1, req.out);
		if (FCGX_HasSeenEOF(req.in))
			FCGX_Detach(&req);
		FCGX_Finish_r(&req);
	}
	return 0;
}
