/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait.h -- the unit tests' one way to wait for a condition: poll it with
 * a short sleep and fail the test, naming the condition, only once a
 * generous wall-clock deadline (WAIT_S) passed. A test then never fails
 * because the machine is slow (make -j2 beside other builds), only
 * because the condition never comes. Include after cmocka.h and util.h
 * (rpmem_now_ns).
 */
#ifndef RPMEM_TESTS_UNIT_WAIT_H
#define RPMEM_TESTS_UNIT_WAIT_H

#include <stdint.h>
#include <unistd.h>

#define WAIT_S 60         /* the deadline of every wait, in seconds */
#define WAIT_POLL_US 1000 /* the sleep between two looks, by default */

/*
 * WAIT_EVERY -- until expr holds: step (an action that may bring it, e.g.
 * a persist; (void)0 for none), then a sleep of poll_us; fails the test
 * naming expr after WAIT_S seconds
 */
#define WAIT_EVERY(expr, step, poll_us)                                        \
  do {                                                                         \
    uint64_t wait_end_ = rpmem_now_ns() + (uint64_t)WAIT_S * 1000000000ull;    \
    while (!(expr)) {                                                          \
      if (rpmem_now_ns() > wait_end_)                                          \
        fail_msg("%s:%d: waited %d s for: %s", __FILE__, __LINE__, WAIT_S,     \
                 #expr);                                                       \
      step;                                                                    \
      usleep(poll_us);                                                         \
    }                                                                          \
  } while (0)

/* WAIT_UNTIL -- until expr holds (polled each WAIT_POLL_US) */
#define WAIT_UNTIL(expr) WAIT_EVERY(expr, (void)0, WAIT_POLL_US)

/* WAIT_DOING -- until expr holds, doing step before each sleep */
#define WAIT_DOING(expr, step) WAIT_EVERY(expr, step, WAIT_POLL_US)

#endif
