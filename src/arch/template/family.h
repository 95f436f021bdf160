/* family.h - what every kernel template needs besides the vector layer: the family's symbol and
 * name string from DLC_VEC_ISA, and the repeat macros (DLC_REPEAT, DLC_UPTO) that instantiate one
 * register tile per row or pixel count (the tiles are compile-time shapes, so their accumulators live in registers).
 *
 * Include after the ISA's vec.h. */
#ifndef DLC_TEMPLATE_FAMILY_H
#define DLC_TEMPLATE_FAMILY_H

#define DLC_CAT_(a, b) a##b
#define DLC_CAT(a, b) DLC_CAT_(a, b)
#define DLC_STR_(x) #x
#define DLC_STR(x) DLC_STR_(x)

/* dlc_<family>__<isa>, e.g. DLC_FAMILY_NAME(f32_gemm) -> dlc_f32_gemm__avx512 */
#define DLC_FAMILY_NAME(family) DLC_CAT(DLC_CAT(dlc_, family), DLC_CAT(__, DLC_VEC_ISA))
/* "<isa>", e.g. "avx512" */
#define DLC_ISA_STR DLC_STR(DLC_VEC_ISA)

/* 2 * DLC_VL as a literal, for names (a tile of two vectors) */
#if DLC_VL == 16
#define DLC_VL_X2 32
#elif DLC_VL == 8
#define DLC_VL_X2 16
#elif DLC_VL == 4
#define DLC_VL_X2 8
#endif

/* DLC_REPEAT(N, X, arg) expands to X(1, arg) X(2, arg) ... X(N, arg); N a literal up to 32. */
#define DLC_REPEAT(N, X, arg) DLC_CAT(DLC_REPEAT_, N)(X, arg)
#define DLC_REPEAT_1(X, a) X(1, a)
#define DLC_REPEAT_2(X, a) DLC_REPEAT_1(X, a) X(2, a)
#define DLC_REPEAT_3(X, a) DLC_REPEAT_2(X, a) X(3, a)
#define DLC_REPEAT_4(X, a) DLC_REPEAT_3(X, a) X(4, a)
#define DLC_REPEAT_5(X, a) DLC_REPEAT_4(X, a) X(5, a)
#define DLC_REPEAT_6(X, a) DLC_REPEAT_5(X, a) X(6, a)
#define DLC_REPEAT_7(X, a) DLC_REPEAT_6(X, a) X(7, a)
#define DLC_REPEAT_8(X, a) DLC_REPEAT_7(X, a) X(8, a)
#define DLC_REPEAT_9(X, a) DLC_REPEAT_8(X, a) X(9, a)
#define DLC_REPEAT_10(X, a) DLC_REPEAT_9(X, a) X(10, a)
#define DLC_REPEAT_11(X, a) DLC_REPEAT_10(X, a) X(11, a)
#define DLC_REPEAT_12(X, a) DLC_REPEAT_11(X, a) X(12, a)
#define DLC_REPEAT_13(X, a) DLC_REPEAT_12(X, a) X(13, a)
#define DLC_REPEAT_14(X, a) DLC_REPEAT_13(X, a) X(14, a)
#define DLC_REPEAT_15(X, a) DLC_REPEAT_14(X, a) X(15, a)
#define DLC_REPEAT_16(X, a) DLC_REPEAT_15(X, a) X(16, a)
#define DLC_REPEAT_17(X, a) DLC_REPEAT_16(X, a) X(17, a)
#define DLC_REPEAT_18(X, a) DLC_REPEAT_17(X, a) X(18, a)
#define DLC_REPEAT_19(X, a) DLC_REPEAT_18(X, a) X(19, a)
#define DLC_REPEAT_20(X, a) DLC_REPEAT_19(X, a) X(20, a)
#define DLC_REPEAT_21(X, a) DLC_REPEAT_20(X, a) X(21, a)
#define DLC_REPEAT_22(X, a) DLC_REPEAT_21(X, a) X(22, a)
#define DLC_REPEAT_23(X, a) DLC_REPEAT_22(X, a) X(23, a)
#define DLC_REPEAT_24(X, a) DLC_REPEAT_23(X, a) X(24, a)
#define DLC_REPEAT_25(X, a) DLC_REPEAT_24(X, a) X(25, a)
#define DLC_REPEAT_26(X, a) DLC_REPEAT_25(X, a) X(26, a)
#define DLC_REPEAT_27(X, a) DLC_REPEAT_26(X, a) X(27, a)
#define DLC_REPEAT_28(X, a) DLC_REPEAT_27(X, a) X(28, a)
#define DLC_REPEAT_29(X, a) DLC_REPEAT_28(X, a) X(29, a)
#define DLC_REPEAT_30(X, a) DLC_REPEAT_29(X, a) X(30, a)
#define DLC_REPEAT_31(X, a) DLC_REPEAT_30(X, a) X(31, a)
#define DLC_REPEAT_32(X, a) DLC_REPEAT_31(X, a) X(32, a)

/* DLC_UPTO(n, X, a...) is X(a, 1) X(a, 2) ... X(a, n) for a literal n in 1..16 (a knob). The
   lists do not nest: call DLC_UPTO at most once inside another list's X (a fixed list outside). */
#define DLC_UPTO(n, ...) DLC_CAT(DLC_UPTO_, n)(__VA_ARGS__)
#define DLC_UPTO_1(X, ...) X(__VA_ARGS__, 1)
#define DLC_UPTO_2(X, ...) DLC_UPTO_1(X, __VA_ARGS__) X(__VA_ARGS__, 2)
#define DLC_UPTO_3(X, ...) DLC_UPTO_2(X, __VA_ARGS__) X(__VA_ARGS__, 3)
#define DLC_UPTO_4(X, ...) DLC_UPTO_3(X, __VA_ARGS__) X(__VA_ARGS__, 4)
#define DLC_UPTO_5(X, ...) DLC_UPTO_4(X, __VA_ARGS__) X(__VA_ARGS__, 5)
#define DLC_UPTO_6(X, ...) DLC_UPTO_5(X, __VA_ARGS__) X(__VA_ARGS__, 6)
#define DLC_UPTO_7(X, ...) DLC_UPTO_6(X, __VA_ARGS__) X(__VA_ARGS__, 7)
#define DLC_UPTO_8(X, ...) DLC_UPTO_7(X, __VA_ARGS__) X(__VA_ARGS__, 8)
#define DLC_UPTO_9(X, ...) DLC_UPTO_8(X, __VA_ARGS__) X(__VA_ARGS__, 9)
#define DLC_UPTO_10(X, ...) DLC_UPTO_9(X, __VA_ARGS__) X(__VA_ARGS__, 10)
#define DLC_UPTO_11(X, ...) DLC_UPTO_10(X, __VA_ARGS__) X(__VA_ARGS__, 11)
#define DLC_UPTO_12(X, ...) DLC_UPTO_11(X, __VA_ARGS__) X(__VA_ARGS__, 12)
#define DLC_UPTO_13(X, ...) DLC_UPTO_12(X, __VA_ARGS__) X(__VA_ARGS__, 13)
#define DLC_UPTO_14(X, ...) DLC_UPTO_13(X, __VA_ARGS__) X(__VA_ARGS__, 14)
#define DLC_UPTO_15(X, ...) DLC_UPTO_14(X, __VA_ARGS__) X(__VA_ARGS__, 15)
#define DLC_UPTO_16(X, ...) DLC_UPTO_15(X, __VA_ARGS__) X(__VA_ARGS__, 16)

#endif
