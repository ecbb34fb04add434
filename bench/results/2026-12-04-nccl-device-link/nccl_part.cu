// The NCCL device API behind plain extern "C" device functions, compiled
// by nvcc as relocatable device code.
#include <nccl_device.h>
extern "C" __device__ void mk_lsa_barrier_sync(const ncclDevComm *comm, unsigned index) {
  ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), *comm, ncclTeamTagLsa(), index);
  barrier.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}
extern "C" __device__ void *mk_lsa_pointer(const ncclWindow_t *window, size_t offset, int peer) {
  return ncclGetLsaPointer(*window, offset, peer);
}
extern "C" __device__ int mk_lsa_size(const ncclDevComm *comm) { return comm->lsaSize; }
extern "C" __device__ int mk_lsa_rank(const ncclDevComm *comm) { return comm->lsaRank; }
