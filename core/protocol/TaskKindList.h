/* Every task kind and its opcode: the one list that the task graph's enum
 * (core/taskgraph/TaskGraph.h) and the schedule blob's (runtime/format/
 * ScheduleBlob.h) are both made from. What a kind means, reads, writes and
 * needs is its description, core/taskgraph/kinds/<Kind>Kind.cpp.
 *
 * X(Name, NAME, opcode); opcodes are dense from 0, in this order. */
#ifndef MKC_CORE_PROTOCOL_TASKKINDLIST_H
#define MKC_CORE_PROTOCOL_TASKKINDLIST_H

#define MK_TASK_KINDS(X)                                                                           \
  X(Embed, EMBED, 0)                                                                               \
  X(Gemv, GEMV, 1)                                                                                 \
  X(AttentionChunk, ATTENTION_CHUNK, 2)                                                            \
  X(AttentionMerge, ATTENTION_MERGE, 3)                                                            \
  X(Argmax, ARGMAX, 4)                                                                             \
  X(AllReduce, ALL_REDUCE, 5)                                                                      \
  X(Mlp, MLP, 6)                                                                                   \
  X(HeadProjection, HEAD_PROJECTION, 7)

#endif
