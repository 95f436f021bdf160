/* run_case.h - one API test case run and checked: plan with a configuration (algorithm, ISA,
 * threads or the caller's pool, workspace, y's alignment, MEASURE), check dlconv_plan_query,
 * execute into a fresh guarded NaN-filled y (twice, bit for bit, where asked), and check y against
 * the oracle, the guards, the workspace's bounds and the inputs. Public header only. */
#ifndef DLC_TESTS_SUPPORT_RUN_CASE_H
#define DLC_TESTS_SUPPORT_RUN_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "conv_data.h"
#include "dlconv.h"
#include "tpool.h"

typedef struct run_cfg {
  dlconv_algo algo;
  dlconv_isa isa;
  int num_threads;
  tpool *pool;    /* non-NULL: options.parallel_for = the caller pool */
  int ws_mode;    /* 0: workspace NULL; 1: caller workspace of exactly the size, NaN-filled */
  size_t y_shift; /* y payload shifted by this many bytes off 64-byte alignment */
  int repeat;     /* execute a second time into a fresh buffer: bits must be identical */
  uint32_t flags; /* options.flags (DLCONV_PLAN_MEASURE) */
} run_cfg;

typedef enum run_outcome { RUN_PASS = 0, RUN_UNSUPPORTED = 1, RUN_FAIL = 2 } run_outcome;

typedef struct run_result {
  dlconv_status plan_status;
  dlconv_plan_info info;
  char msg[1024];
} run_result;

const char *cfg_str(const run_cfg *c, char *buf, size_t n);

void cfg_options(const run_cfg *c, dlconv_options *o);

dlconv_status cd_plan(const conv_data *cd, dlconv_plan **plan, const dlconv_options *o);

/* Checks of dlconv_plan_query against what was asked; appends problems to msg. */
int check_info(const conv_data *cd, const run_cfg *c, const dlconv_plan *plan, dlconv_plan_info *info, char *msg,
               size_t len);

int inputs_unchanged(const conv_data *cd);

/* Execute into a fresh guarded, NaN-filled y; 0 if all checks pass, else msg says why. */
int execute_checked(const conv_data *cd, const dlconv_plan *plan, const run_cfg *c, float **y_keep, char *msg,
                    size_t len);

/* Plan with cfg, check plan_info, execute (twice with repeat), check output and buffers.
 * RUN_UNSUPPORTED: planning answered DLCONV_ERR_UNSUPPORTED properly (plan NULL, message set);
 * whether that is allowed is the caller's decision. */
run_outcome run_case(const conv_data *cd, const run_cfg *c, run_result *res);

#endif
