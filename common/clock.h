/* Time for measuring intervals (timeouts, recovery times, rate limits):
 * the monotonic clock, which no change of the wall clock moves. */
#ifndef TANDEM_COMMON_CLOCK_H
#define TANDEM_COMMON_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC, from an arbitrary origin. */
double tdm_now_ms(void);

/* Milliseconds since the epoch on CLOCK_REALTIME: for stamps that other
 * processes compare (the hops of a share change, orchestrator -> node agent
 * -> server -> guest, on one host), never for intervals within a process. */
double tdm_wall_ms(void);

#endif
