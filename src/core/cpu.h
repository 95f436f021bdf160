/* cpu.h - what this CPU (and its OS) can run, read once. */
#ifndef DLC_CPU_H
#define DLC_CPU_H

typedef struct dlc_cpu_features {
  int avx2_fma;       /* AVX2 + FMA with OS-enabled ymm state */
  int f16c;
  int avx512;         /* AVX-512 F/BW/VL/DQ with OS-enabled zmm state */
  int avx512_vnni;
  int avx512_vbmi;    /* vpermb and friends */
  int avx_vnni;
  int neon;           /* AArch64 Advanced SIMD */
  int neon_fp16;      /* FEAT_FP16 arithmetic */
  int neon_dotprod;   /* SDOT/UDOT */
  int neon_fhm;       /* FMLAL/FMLAL2 (FEAT_FHM) */
} dlc_cpu_features;

const dlc_cpu_features *dlc_cpu(void);

#endif
