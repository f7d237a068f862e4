// A toy rocBLAS for the ROCm tests (rocm-therock.sh, rocm-fedora.sh): one kernel, so
// clang-19 gives the library a .hip_fatbin with a code object per --offload-arch, and
// one host entry point. hipLaunchKernel is declared here because -nogpuinc leaves out
// HIP's headers (the kernel stub calls it).
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void *f, dim3_ g, dim3_ b, void **a, unsigned long s, void *st);
__attribute__((global)) void gemm_toy(float *p) { p[0] = 1.0f; }
extern "C" int rocblas_create_handle(void **h) { *h = 0; return 0; }
