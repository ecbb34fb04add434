#!/usr/bin/env python3
"""Links a kernel compiled by NVRTC, as mkc compiles the megakernel, with
NCCL's device API compiled ahead of time by nvcc (nccl_part.cu, relocatable
device code), through nvJitLink, into one CUBIN for sm_90a. Run from a
folder holding nccl_part.o and nccl_part_lto.o:

  nvcc -arch=sm_90a -rdc=true -c nccl_part.cu -o nccl_part.o
  nvcc -arch=sm_90a -rdc=true -dlto -c nccl_part.cu -o nccl_part_lto.o
  python3 link.py          # NVRTC's relocatable CUBIN + nvcc's object
  python3 link.py --lto    # both as LTO-IR, linked with -lto

Prints each step's status (0: success) and the linked CUBIN's size; no GPU
is needed.
"""
import ctypes, glob, sys
nvrtc = ctypes.CDLL(sorted(glob.glob('/usr/local/cuda/lib64/libnvrtc.so*'))[-1])
jl = ctypes.CDLL('/usr/local/cuda/lib64/libnvJitLink.so')
src = b'''
// The kernel's side: the NCCL calls as opaque extern device functions.
extern "C" __device__ void mk_lsa_barrier_sync(const void *comm, unsigned index);
extern "C" __device__ void *mk_lsa_pointer(const void *window, unsigned long long offset, int peer);
extern "C" __device__ int mk_lsa_size(const void *comm);
extern "C" __device__ int mk_lsa_rank(const void *comm);
extern "C" __global__ void allreduce_probe(const void *comm, const void *window, unsigned long long offset, int count) {
  mk_lsa_barrier_sync(comm, blockIdx.x);
  float sum = 0.f;
  for (int peer = 0; peer < mk_lsa_size(comm); ++peer) {
    const float *from = static_cast<const float *>(mk_lsa_pointer(window, offset, peer));
    if (threadIdx.x < count) sum += from[threadIdx.x];
  }
  float *mine = static_cast<float *>(mk_lsa_pointer(window, offset, mk_lsa_rank(comm)));
  if (threadIdx.x < count) mine[threadIdx.x] = sum;
  mk_lsa_barrier_sync(comm, blockIdx.x);
}
'''
lto = '--lto' in sys.argv
prog = ctypes.c_void_p()
assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
opts = [b"-arch=sm_90a", b"-rdc=true"] + ([b"-dlto"] if lto else [])
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t(); nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); nvrtc.nvrtcGetProgramLog(prog, log)
print("nvrtc rc", rc, log.value.decode()[:500])
if lto:
    nvrtc.nvrtcGetLTOIRSize(prog, ctypes.byref(n)); code = ctypes.create_string_buffer(n.value); nvrtc.nvrtcGetLTOIR(prog, code); kind = 3  # NVJITLINK_INPUT_LTOIR
else:
    nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(n)); code = ctypes.create_string_buffer(n.value); nvrtc.nvrtcGetCUBIN(prog, code); kind = 1  # NVJITLINK_INPUT_CUBIN
handle = ctypes.c_void_p()
lopts = [b"-arch=sm_90a"] + ([b"-lto"] if lto else [])
larr = (ctypes.c_char_p * len(lopts))(*lopts)
print("create", jl.nvJitLinkCreate(ctypes.byref(handle), len(lopts), larr))
print("add kernel", jl.nvJitLinkAddData(handle, kind, code, n, b"kernel"))
obj = (b"nccl_part_lto.o" if lto else b"nccl_part.o")
print("add nccl part", jl.nvJitLinkAddFile(handle, 5, obj))  # NVJITLINK_INPUT_OBJECT
r = jl.nvJitLinkComplete(handle)
print("complete", r)
ls = ctypes.c_size_t(); jl.nvJitLinkGetErrorLogSize(handle, ctypes.byref(ls))
el = ctypes.create_string_buffer(ls.value + 1); jl.nvJitLinkGetErrorLog(handle, el); print("errors:", el.value.decode()[:1500])
if r == 0:
    cs = ctypes.c_size_t(); jl.nvJitLinkGetLinkedCubinSize(handle, ctypes.byref(cs))
    cub = ctypes.create_string_buffer(cs.value); jl.nvJitLinkGetLinkedCubin(handle, cub)
    open("linked.cubin", "wb").write(cub.raw); print("linked cubin", cs.value, "bytes")
