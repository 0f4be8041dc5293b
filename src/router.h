/* router.h: the route table and the dispatcher of one request. */
#ifndef EVALGATE_ROUTER_H
#define EVALGATE_ROUTER_H

struct req;

/* Routes, authenticates, runs the handler and makes sure exactly one
 * answer is written: a handler that fails leaves its error to this. */
void	router_dispatch(struct req *r);

#endif
