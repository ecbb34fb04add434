/* The event protocol, in the one place every engine reads it: the
 * validator's deadlock check and the schedule simulation (host), the CPU
 * executor, and the megakernel (NVRTC).
 *
 * An event is a counter with a trigger count: the number of tasks that add
 * one to it per step. Every task waits on a list of events, runs, then adds
 * one to exactly one event. Counters only grow within a launch that runs
 * steps 0, 1, 2, ...: a task of step t waiting on event e with step offset o
 * (0: this step, -1: the previous one) may start once
 *
 *     counter[e] >= triggerCount[e] * (t + 1 + o).
 *
 * So nothing is reset between tokens, and a wait with offset -1 orders a
 * step after the previous one (the embedding of token t+1 waits on the
 * argmax of token t); in step 0 such a wait asks for nothing. The GPU's
 * counters are 32 bits wide: the validator refuses a graph whose counts could
 * pass 2^32 within its maximum context. */
#ifndef MKC_CORE_PROTOCOL_EVENTPROTOCOL_H
#define MKC_CORE_PROTOCOL_EVENTPROTOCOL_H

#include "core/protocol/Portable.h"

/* The count event `e` must reach before a task of `step` waiting on it with
 * `stepOffset` may start; 0 when the wait asks for nothing. */
MK_HOST_DEVICE static inline mk_u64 mk_event_threshold(mk_u32 triggerCount, mk_i64 step,
                                                       mk_i32 stepOffset) {
  mk_i64 round = step + 1 + stepOffset;
  return round <= 0 ? 0 : (mk_u64)triggerCount * (mk_u64)round;
}

#endif
