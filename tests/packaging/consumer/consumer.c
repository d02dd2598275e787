/* The installed C library (libloopguard.so through pkg-config loopguard): a guard with the
 * default rules stops allowing the same call. Exits 0 when it did, 1 when it did not. */
#include <loopguard/loopguard.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  char* error = NULL;
  lg_guard* guard = lg_create(NULL, &error);
  int i;
  if (guard == NULL) {
    fprintf(stderr, "lg_create: %s\n", error ? error : "(no message)");
    lg_free(error);
    return 1;
  }
  if (lg_abi_version() != LOOPGUARD_ABI_VERSION) {
    fprintf(stderr, "ABI %d, header says %d\n", lg_abi_version(), LOOPGUARD_ABI_VERSION);
    return 1;
  }
  for (i = 1; i <= 12; ++i) {
    char* verdict =
        lg_on_tool_call(guard, "read_file", "{\"path\": \"config.yaml\"}", NULL, &error);
    const int allowed = verdict != NULL && strncmp(verdict, "{\"action\":\"allow\"", 17) == 0;
    if (verdict == NULL) {
      fprintf(stderr, "lg_on_tool_call: %s\n", error ? error : "(no message)");
      lg_free(error);
      lg_destroy(guard);
      return 1;
    }
    if (!allowed) printf("call %d: %.40s\n", i, verdict);
    lg_free(verdict);
    lg_free(lg_on_tool_result(guard, "read_file", 1, "port: 8080", NULL, &error));
    if (!allowed) {
      lg_destroy(guard);
      return 0;
    }
  }
  fprintf(stderr, "12 identical calls were all allowed\n");
  lg_destroy(guard);
  return 1;
}
