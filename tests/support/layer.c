/* Layers and forced plans (layer.h). */
#include "layer.h"

#include "alloc.h"

layer_sizes layer_desc(dlconv_conv2d_desc *d, const layer_shape *s, dlconv_layout layout, float lo, float hi) {
  dlconv_conv2d_desc_init(d, s->n, s->c_in, s->h, s->w, s->c_out, s->kh, s->kw);
  d->stride_h = s->sh, d->stride_w = s->sw;
  d->dilation_h = s->dh, d->dilation_w = s->dw;
  d->pad_top = s->pt, d->pad_bottom = s->pb, d->pad_left = s->pl, d->pad_right = s->pr;
  d->groups = s->groups;
  d->layout = layout;
  d->out_min = lo, d->out_max = hi;
  return layer_sizes_of(d);
}

layer_sizes layer_sizes_of(const dlconv_conv2d_desc *d) {
  int32_t ho, wo;
  if (dlconv_conv2d_output_shape(d, &ho, &wo) != DLCONV_OK) test_die("an invalid layer: %s", dlconv_last_error());
  layer_sizes z;
  z.k = (size_t)(d->c_in / d->groups) * (size_t)d->k_h * (size_t)d->k_w;
  z.x = (size_t)d->n * (size_t)d->c_in * (size_t)d->h_in * (size_t)d->w_in;
  z.w = (size_t)d->c_out * z.k;
  z.y = (size_t)d->n * (size_t)d->c_out * (size_t)ho * (size_t)wo;
  return z;
}

dlconv_options forced_options(dlconv_algo algo, dlconv_isa isa, int threads) {
  dlconv_options o;
  dlconv_options_init(&o);
  o.algo = algo;
  o.isa = isa;
  o.num_threads = threads;
  return o;
}
