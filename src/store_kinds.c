/* store_kinds.c: where the store finds the options of each backend kind,
 * to check the stored ones when it reads a backend (store.h,
 * store_set_kind_options()).  A file of its own, below the engines,
 * which read it, and store.c, which calls the engines: no call cycle
 * (tests/layering_test.sh). */
#include "config.h"

#include <stddef.h>

#include "store.h"

static store_kind_options_fn *kind_options;	/* NULL: none given */

void
store_set_kind_options(store_kind_options_fn *of)
{
	kind_options = of;
}

const struct backend_option *
store_kind_options(const char *kind)
{
	return kind_options != NULL ? kind_options(kind) : NULL;
}
