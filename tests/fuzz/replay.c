/* Replays fuzz inputs through the same checks as the libFuzzer target, without libFuzzer, so
 * every build (gcc included) runs the committed corpus and the regression inputs:
 *   fuzz_replay FILE_OR_DIR...
 * Exit status 0 when every input passes, 1 when one fails (each failure printed), 2 on usage
 * or I/O errors, or when there was no input at all (the test must test something). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_check.h"

static int run_file(const char *path, long *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 2;
  }
  size_t cap = 1024, len = 0, k;
  unsigned char *buf = malloc(cap);
  while ((k = fread(buf + len, 1, cap - len, f)) > 0) {
    len += k;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  static char msg[4096];
  int bad = dlconv_fuzz_one(buf, len, msg, sizeof msg);
  free(buf);
  (*n)++;
  if (bad) printf("FAIL %s: %s\n", path, msg);
  return bad;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fuzz_replay FILE_OR_DIR...\n");
    return 2;
  }
  long n = 0, failed = 0;
  for (int a = 1; a < argc; a++) {
    struct stat st;
    if (stat(argv[a], &st) != 0) {
      fprintf(stderr, "fuzz_replay: %s does not exist\n", argv[a]);
      return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
      int r = run_file(argv[a], &n);
      if (r == 2) return 2;
      failed += r;
      continue;
    }
    DIR *d = opendir(argv[a]);
    if (!d) return 2;
    char **names = NULL;
    size_t cnt = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
      names = realloc(names, (cnt + 1) * sizeof *names);
      size_t l = strlen(argv[a]) + strlen(e->d_name) + 2;
      names[cnt] = malloc(l);
      snprintf(names[cnt++], l, "%s/%s", argv[a], e->d_name);
    }
    closedir(d);
    if (cnt) qsort(names, cnt, sizeof *names, cmp);
    for (size_t i = 0; i < cnt; i++) {
      int r = run_file(names[i], &n);
      if (r == 2) return 2;
      failed += r;
      free(names[i]);
    }
    free(names);
  }
  printf("fuzz_replay: %ld inputs, %ld failed\n", n, failed);
  if (n == 0) {
    fprintf(stderr, "fuzz_replay: no inputs at all\n");
    return 2;
  }
  return failed ? 1 : 0;
}
