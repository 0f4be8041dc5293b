/* store_bounds.c: what either engine does with a record it read back
 * that is out of the bounds of bounds.h: the worker's request is a
 * logged 500, never a computation with the value (README "Faults"). */
#include "config.h"

#include "log.h"
#include "store_engine.h"

int
store_bad_row(int rc, int checked, struct error *e)
{
	if (rc != 1 || checked == 0)
		return rc;
	log_warn("database: %s", e->message);
	return -1;
}
