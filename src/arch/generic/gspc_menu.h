/* gspc_menu.h - the tiles of the generic (portable C) gspc families: the fp32 one
 * (f32_gspc_generic.c) and the f16 / int8 one (lowp_gspc_generic.c) have one menu, and find a tile
 * in their tables [log2 gpv][nv - 1][r - 1][w - 1] the same way. */
#ifndef DLC_GSPC_GENERIC_MENU_H
#define DLC_GSPC_GENERIC_MENU_H

#include <stddef.h>

/* The menu, X(G, V, R, W) per tile: every gpv with one vector, 1 or 2 rows; two vectors for
   ordinary groups. */
#define GSPC_WS8(X, G, V, R) X(G, V, R, 1) X(G, V, R, 2) X(G, V, R, 3) X(G, V, R, 4) \
                             X(G, V, R, 5) X(G, V, R, 6) X(G, V, R, 7) X(G, V, R, 8)
#define GSPC_WS4(X, G, V, R) X(G, V, R, 1) X(G, V, R, 2) X(G, V, R, 3) X(G, V, R, 4)
#define GSPC_MENU_G(X, G) GSPC_WS8(X, G, 1, 1) GSPC_WS4(X, G, 1, 2)
#define GSPC_MENU(X) \
  GSPC_MENU_G(X, 1) GSPC_MENU_G(X, 2) GSPC_MENU_G(X, 4) GSPC_MENU_G(X, 8) GSPC_WS4(X, 1, 2, 1) GSPC_WS4(X, 1, 2, 2)

/* A table of the menu: its bounds, and the designator of a tile's slot. */
#define GSPC_N_G 4
#define GSPC_N_V 2
#define GSPC_N_R 2
#define GSPC_N_W 8
#define GSPC_LOG2_1 0
#define GSPC_LOG2_2 1
#define GSPC_LOG2_4 2
#define GSPC_LOG2_8 3
#define GSPC_SLOT(G, V, R, W) [GSPC_LOG2_##G][V - 1][R - 1][W - 1]

/* log2(gpv) where the table has a slot for the tile (gpv, nv, r, w), else -1 */
static inline int gspc_menu_lg(size_t gpv, size_t nv, size_t r, size_t w) {
  int lg = 0;
  while (((size_t)1 << lg) < gpv) lg++;
  const int in = ((size_t)1 << lg) == gpv && lg < GSPC_N_G && nv >= 1 && nv <= GSPC_N_V && r >= 1 &&
                 r <= GSPC_N_R && w >= 1 && w <= GSPC_N_W;
  return in ? lg : -1;
}

#endif
