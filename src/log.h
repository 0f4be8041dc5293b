/* log.h: one-line messages to stderr, which the web server keeps in its
 * error log.  Never pass a key, a secret or a state to these. */
#ifndef EVALGATE_LOG_H
#define EVALGATE_LOG_H

void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
