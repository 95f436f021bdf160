/* conv.c - a first program with libdlconv: one 3x3 convolution with bias and ReLU, planned once,
 * executed, its top row checked by hand. Build it against an installed libdlconv:
 *
 *   cc -O2 conv.c $(pkg-config --cflags --libs dlconv) -Wl,-rpath,$(pkg-config --variable=libdir dlconv)
 *
 * or with CMake: find_package(dlconv) and link dlconv::dlconv (CMakeLists.txt beside this file). */
#include <dlconv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1, C_IN = 16, H = 32, W = 32, C_OUT = 32, K = 3 };

int main(void) {
  float *x = malloc(sizeof(float) * N * C_IN * H * W);
  float *w = malloc(sizeof(float) * C_OUT * C_IN * K * K);   /* OIHW */
  float *y = malloc(sizeof(float) * N * C_OUT * H * W);      /* same size: stride 1, padding 1 */
  float bias[C_OUT];
  if (!x || !w || !y) return 1;
  for (int i = 0; i < N * C_IN * H * W; i++) x[i] = (float)(i % 17) / 17.0f - 0.5f;
  for (int i = 0; i < C_OUT * C_IN * K * K; i++) w[i] = (float)(i % 13) / 13.0f - 0.5f;
  for (int i = 0; i < C_OUT; i++) bias[i] = 0.01f * (float)i;

  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, N, C_IN, H, W, C_OUT, K, K);   /* F32, NCHW, stride 1 */
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.out_min = 0.0f;                                          /* fused ReLU */

  dlconv_plan *plan;
  dlconv_status s = dlconv_plan_conv2d(&plan, &d, w, bias, NULL, NULL);   /* w and bias are copied */
  if (s != DLCONV_OK) {
    fprintf(stderr, "plan: %s: %s\n", dlconv_status_string(s), dlconv_last_error());
    return 1;
  }
  dlconv_plan_info info;
  dlconv_plan_query(plan, &info);
  printf("libdlconv %s: %s on %s, kernel %s, %lld MACs, workspace %zu bytes\n", dlconv_version(),
         dlconv_algo_string(info.algo), dlconv_isa_string(info.isa), info.kernel, (long long)info.macs,
         info.workspace_bytes);

  s = dlconv_execute(plan, x, y, NULL);   /* as often as needed, from any thread */
  dlconv_plan_destroy(plan);
  if (s != DLCONV_OK) {
    fprintf(stderr, "execute: %s: %s\n", dlconv_status_string(s), dlconv_last_error());
    return 1;
  }

  /* The top row of every output channel by hand (it touches the padding), in double. */
  double worst = 0;
  int positive = 0;
  for (int oc = 0; oc < C_OUT; oc++)
    for (int ox = 0; ox < W; ox++) {
      double ref = bias[oc];
      for (int ic = 0; ic < C_IN; ic++)
        for (int ky = 0; ky < K; ky++)
          for (int kx = 0; kx < K; kx++) {
            int iy = ky - 1, ix = ox + kx - 1;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            ref += (double)x[(ic * H + iy) * W + ix] * w[((oc * C_IN + ic) * K + ky) * K + kx];
          }
      ref = ref > 0 ? ref : 0;   /* the ReLU */
      positive += ref > 0;
      double err = fabs(y[oc * H * W + ox] - ref) / (1 + fabs(ref));
      if (err > worst) worst = err;
    }
  int ok = worst <= 1e-4;
  printf("%d outputs checked by hand (%d above zero): largest error %.2g, %s\n", C_OUT * W, positive, worst,
         ok ? "ok" : "WRONG");
  free(x);
  free(w);
  free(y);
  return ok ? 0 : 1;
}
