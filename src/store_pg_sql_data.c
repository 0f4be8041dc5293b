/* store_pg_sql_data.c: the statements of the PostgreSQL engine's
 * decisions, outcomes, calibration, admission, quota and retention, by
 * name (the s-pg-data block of enum pg_stmt in store_pg.h), indexed by
 * the whole enum; the core's are in store_pg_sql.c.  The tables are in
 * sql/pg/. */
#include "config.h"

#include "store_pg.h"

const char *const pg_data_sql[PG_STMT__MAX] = {
	/* s-pg-data: the texts of its statements. */
	[PG_CORE__END] = NULL,
};
