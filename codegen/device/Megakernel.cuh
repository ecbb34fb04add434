// The device library: everything the generated kernel source includes. The
// generated part adds the model's constants, the dispatcher that picks a
// task function per task kind and shape, and the __global__ entry point.
#ifndef MKC_CODEGEN_DEVICE_MEGAKERNEL_CUH
#define MKC_CODEGEN_DEVICE_MEGAKERNEL_CUH

#include "codegen/device/AllReduceTask.cuh"
#include "codegen/device/ArgmaxTask.cuh"
#include "codegen/device/AttentionChunkTask.cuh"
#include "codegen/device/AttentionMergeTask.cuh"
#include "codegen/device/EmbedTask.cuh"
#include "codegen/device/GemvTask.cuh"
#include "codegen/device/HeadProjectionTask.cuh"
#include "codegen/device/Interpreter.cuh"
#include "codegen/device/MlpTask.cuh"
#include "codegen/device/PrefillAttention.cuh"
#include "codegen/device/PrefillKernels.cuh"

#endif
