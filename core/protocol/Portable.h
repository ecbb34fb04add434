/* What the headers of core/protocol/ and the ABI headers (runtime/format/
 * ScheduleBlob.h, ControlBlock.h) need to mean the same to g++ and to NVRTC:
 * fixed-width integers without <stdint.h> (NVRTC has none) and functions
 * both sides compile. */
#ifndef MKC_CORE_PROTOCOL_PORTABLE_H
#define MKC_CORE_PROTOCOL_PORTABLE_H

#ifdef __CUDACC_RTC__
typedef unsigned char mk_u8;
typedef unsigned short mk_u16;
typedef unsigned int mk_u32;
typedef int mk_i32;
typedef unsigned long long mk_u64;
typedef long long mk_i64;
#else
#include <stdint.h>
typedef uint8_t mk_u8;
typedef uint16_t mk_u16;
typedef uint32_t mk_u32;
typedef int32_t mk_i32;
typedef uint64_t mk_u64;
typedef int64_t mk_i64;
#endif

/* A function the host compiler and the device compiler both build. */
#ifdef __CUDACC__
#define MK_HOST_DEVICE __host__ __device__
#else
#define MK_HOST_DEVICE
#endif

#endif
