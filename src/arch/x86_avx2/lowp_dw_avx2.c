/* lowp depthwise row kernels, avx2: being written (see src/direct/lowp_dw_ukernel.h). */
