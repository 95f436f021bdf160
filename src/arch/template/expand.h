/* expand.h - preprocessor helpers the kernel templates share: a family's symbol and name string
 * from DLC_VEC_ISA, and lists of tile sizes up to a knob's value. */
#ifndef DLC_TEMPLATE_EXPAND_H
#define DLC_TEMPLATE_EXPAND_H

#define DLC_CAT_(a, b) a##b
#define DLC_CAT(a, b) DLC_CAT_(a, b)
#define DLC_STR_(x) #x
#define DLC_STR(x) DLC_STR_(x)

/* DLC_FAMILY_NAME(f32_gspc) is dlc_f32_gspc__avx2 under the avx2 vec.h; DLC_ISA_STR is "avx2" */
#define DLC_FAMILY_NAME(f) DLC_CAT(DLC_CAT(dlc_, f), DLC_CAT(__, DLC_VEC_ISA))
#define DLC_ISA_STR DLC_STR(DLC_VEC_ISA)

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
