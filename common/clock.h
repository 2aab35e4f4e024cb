/* Time for measuring intervals (timeouts, recovery times, rate limits):
 * the monotonic clock, which no change of the wall clock moves. */
#ifndef TANDEM_COMMON_CLOCK_H
#define TANDEM_COMMON_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC, from an arbitrary origin. */
double tdm_now_ms(void);

#endif
