/* router.h: the dispatcher of one request (its table: routes.h). */
#ifndef EVALGATE_ROUTER_H
#define EVALGATE_ROUTER_H

struct req;

/* Routes, authenticates, runs the handler and makes sure exactly one
 * answer is written: a handler that fails leaves its error to this. */
void	router_dispatch(struct req *r);

#endif
