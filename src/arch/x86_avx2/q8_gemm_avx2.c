/* q8 gemm micro-kernels, avx2: being written (see lowp_gemm_ukernel.h). */
