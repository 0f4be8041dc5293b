/* replay.h: the console's replay command (replay.c), run from its
 * command table instead of an operation: it runs for long, asking a
 * backend about decisions already recorded, on a connection of its
 * own. */
#ifndef EVALGATE_ADMIN_REPLAY_H
#define EVALGATE_ADMIN_REPLAY_H

#include <json-c/json.h>

struct settings;

/* in: {id, backend, version?, since?, limit?, rate?} (borrowed), as the
 * command table parses them.  Exit status: 0 it ran (failures counted
 * in its summary), 1 refused with one line on stderr, 130 stopped by
 * SIGINT (after the call in flight, its summary printed). */
int	cmd_replay(const struct settings *s, json_object *in);

#endif
