/* A C99 program using the C API (loopguard.h) as any C agent would: compiled as C with gcc,
 * linked with libloopguard.so. Run by ctest (capi.consumer); reports every check that fails
 * (file and line) and exits non-zero if any did. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir */

#include <loopguard/loopguard.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* 1 when `s` is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static int valid_utf8(const char* s) {
  const unsigned char* p = (const unsigned char*)s;
  while (*p) {
    unsigned c = *p, n = 0, cp = 0, i;
    if (c < 0x80) {
      ++p;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return 0;
    }
    for (i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    p += n + 1;
  }
  return 1;
}

/* The verdict's action: the JSON object starts with it ({"action":"nudge",...}). */
static int has_action(const char* verdict, const char* action) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "{\"action\":\"%s\"", action);
  return verdict != NULL && strncmp(verdict, prefix, strlen(prefix)) == 0;
}

static void test_abi(void) {
  CHECK(lg_abi_version() == LOOPGUARD_ABI_VERSION);
}

/* The same call again and again: the guard nudges, then rejects. */
static void test_identical_calls(void) {
  char* error = NULL;
  lg_guard* g = lg_create(NULL, &error);
  int i, first_nudge = -1, first_reject = -1;
  CHECK(g != NULL && error == NULL);
  for (i = 0; i < 10 && first_reject < 0; ++i) {
    char id[16], *v;
    snprintf(id, sizeof id, "c%d", i);
    v = lg_on_tool_call(g, "read_file", "{\"path\": \"notes.txt\"}", id, &error);
    CHECK(v != NULL && error == NULL && valid_utf8(v));
    if (first_nudge < 0 && has_action(v, "nudge")) first_nudge = i;
    if (has_action(v, "reject")) {
      first_reject = i;
      CHECK(strstr(v, "\"detector\":\"exact\"") != NULL);
    } else {
      lg_free(v);
      v = lg_on_tool_result(g, "read_file", 1, "the same notes", id, &error);
      CHECK(v != NULL && error == NULL);
    }
    lg_free(v);
  }
  printf("identical calls: first nudge at call %d, first reject at call %d\n", first_nudge,
         first_reject);
  CHECK(first_nudge >= 1);
  CHECK(first_reject > first_nudge);
  lg_destroy(g);
}

static void test_bad_config(void) {
  char* error = NULL;
  lg_guard* g = lg_create("{\"detectors\": {\"exact\": {\"warn_at\": 0}}}", &error);
  CHECK(g == NULL);
  CHECK(error != NULL && strstr(error, "lg_create: config: detectors.exact.warn_at") != NULL);
  if (error) printf("bad config: %s\n", error);
  lg_free(error);
  error = NULL;
  g = lg_create("{not json", &error);
  CHECK(g == NULL && error != NULL && valid_utf8(error));
  lg_free(error);
  error = NULL;
  g = lg_create("{\"bad \xFF key\": 1}", &error); /* the message names it, as valid UTF-8 */
  CHECK(g == NULL && error != NULL && valid_utf8(error) && strstr(error, "bad ") != NULL);
  lg_free(error);
  g = lg_create("{\"no_such_key\": 1}", NULL); /* no error wanted: still NULL, no crash */
  CHECK(g == NULL);
  g = lg_create("{\"preset\": \"aggressive\"}", &error);
  CHECK(g != NULL && error == NULL);
  lg_destroy(g);
}

static void test_null_pointers(void) {
  char* error = NULL;
  lg_guard* g = lg_create("", &error);
  char* v = lg_on_tool_call(NULL, "read_file", "{}", NULL, &error);
  CHECK(v == NULL && error != NULL);
  CHECK(error != NULL && strcmp(error, "lg_on_tool_call: guard is NULL") == 0);
  lg_free(error);
  v = lg_on_tool_call(g, NULL, "{}", NULL, &error);
  CHECK(v == NULL && error != NULL && strcmp(error, "lg_on_tool_call: tool is NULL") == 0);
  lg_free(error);
  CHECK(lg_on_tool_result(g, "t", 1, NULL, NULL, &error) == NULL && error != NULL);
  lg_free(error);
  CHECK(lg_on_text(NULL, "x", NULL) == NULL);
  CHECK(lg_on_text_chunk(g, NULL, NULL) == NULL);
  CHECK(lg_add_cost(NULL, 1.0, NULL) == NULL);
  CHECK(lg_flush(NULL, NULL) == -1);
  CHECK(lg_stats(NULL, NULL) == NULL);
  CHECK(lg_connect(NULL, "ws://127.0.0.1:1", "s", "w", NULL, NULL) == -1);
  CHECK(lg_connect(g, NULL, "s", "w", NULL, &error) == -1 && error != NULL);
  lg_free(error);
  CHECK(lg_wait_acknowledged(g, 0, &error) == -1 && error != NULL); /* not connected */
  lg_free(error);
  lg_free(NULL);
  lg_destroy(NULL);
  lg_destroy(g);
}

static void test_other_events(void) {
  lg_guard* g = lg_create(NULL, NULL);
  char* error = NULL;
  char* v = lg_on_text(g, "Let me look at the file.", &error);
  CHECK(has_action(v, "allow") && error == NULL);
  lg_free(v);
  v = lg_on_text_chunk(g, "partial \xE2\x82", &error); /* ends inside a character */
  CHECK(has_action(v, "allow"));
  lg_free(v);
  v = lg_on_user_message(g, NULL, &error); /* content may be NULL */
  CHECK(has_action(v, "allow") && error == NULL);
  lg_free(v);
  v = lg_on_resume(g, &error);
  CHECK(has_action(v, "allow") && error == NULL);
  lg_free(v);
  CHECK(lg_on_resume(NULL, NULL) == NULL);
  v = lg_add_cost(g, NAN, &error); /* ignored */
  CHECK(has_action(v, "allow"));
  lg_free(v);
  v = lg_on_tool_call(g, "bad\xFF\xFEtool", "not json \xC0", NULL, &error);
  CHECK(v != NULL && valid_utf8(v));
  lg_free(v);
  CHECK(lg_flush(g, &error) == 0 && error == NULL);
  v = lg_stats(g, &error);
  CHECK(v != NULL && valid_utf8(v));
  CHECK(v != NULL && strstr(v, "\"tool_calls\":1") != NULL);
  CHECK(v != NULL && strstr(v, "\"user_messages\":1,\"resumes\":1") != NULL);
  CHECK(v != NULL && strstr(v, "\"client\":null") != NULL);
  lg_free(v);
  lg_destroy(g);
}

/* A judge that answers only when a rule fired: stuck, with a reason longer than it may write. */
static int scripted_judge(void* user, const char* digest, double* probability, double* cost,
                          char* reason, size_t reason_size) {
  int* calls = (int*)user;
  ++*calls;
  if (strstr(digest, "\"why\":\"warn\"") == NULL) return 1;
  *probability = 0.97;
  *cost = 0.25;
  snprintf(reason, reason_size, "%s", "it reads the same file over and over");
  return 0;
}

static void test_judge(void) {
  char* error = NULL;
  lg_guard* g = lg_create("{\"detectors\": {\"judge\": {\"after_turn\": 1000}}}", &error);
  CHECK(g != NULL && error == NULL);
  int calls = 0;
  CHECK(lg_set_judge(g, scripted_judge, &calls, &error) == 0 && error == NULL);
  CHECK(lg_set_judge(NULL, scripted_judge, &calls, &error) == -1 && error != NULL);
  lg_free(error);
  error = NULL;
  char* v = NULL;
  for (int i = 0; i < 3; ++i) {
    lg_free(v);
    v = lg_on_tool_call(g, "read_file", "{\"path\":\"a\"}", NULL, &error);
    char* r = lg_on_tool_result(g, "read_file", 1, "same", NULL, &error);
    lg_free(r);
  }
  CHECK(calls == 1);
  CHECK(v != NULL && strstr(v, "\"detector\":\"judge\"") != NULL);
  CHECK(v != NULL && strstr(v, "it reads the same file over and over") != NULL);
  lg_free(v);
  char* stats = lg_stats(g, &error);
  CHECK(stats != NULL && strstr(stats, "\"judge_checks\":1") != NULL);
  lg_free(stats);
  CHECK(lg_set_judge(g, NULL, NULL, &error) == 0);
  lg_destroy(g);
}

static void test_record(void) {
  lg_guard* g = lg_create("{\"mode\": \"observe\"}", NULL);
  char* error = NULL;
  char* v = NULL;
  char path[] = "/tmp/lg-consumer-XXXXXX";
  char trace[64], detections[64];
  int i;
  CHECK(lg_record(NULL, "x.jsonl", NULL, &error) == -1 && error != NULL);
  lg_free(error);
  CHECK(lg_record(g, NULL, NULL, &error) == -1);
  CHECK(error != NULL && strcmp(error, "lg_record: path is NULL") == 0);
  lg_free(error);
  if (mkdtemp(path) == NULL) {
    CHECK(!"mkdtemp");
    lg_destroy(g);
    return;
  }
  snprintf(trace, sizeof trace, "%s/run.jsonl", path);
  snprintf(detections, sizeof detections, "%s/run.detections.jsonl", path);
  CHECK(lg_record(g, trace, NULL, &error) == 0 && error == NULL);
  for (i = 0; i < 7; ++i) {
    v = lg_on_tool_call(g, "read_file", "{\"path\": \"a.txt\"}", NULL, &error);
    CHECK(has_action(v, "allow")); /* observe mode */
    if (i == 5) CHECK(v != NULL && strstr(v, "\"would_have\":\"reject\"}") != NULL);
    lg_free(v);
  }
  v = lg_stats(g, &error);
  CHECK(v != NULL && strstr(v, "\"recording\":{\"path\":") != NULL);
  CHECK(v != NULL && strstr(v, "\"events\":7") != NULL);
  lg_free(v);
  CHECK(lg_stop_recording(g, &error) == 0 && error == NULL);
  CHECK(lg_stop_recording(g, &error) == 0); /* nothing to stop */
  lg_destroy(g);
  {
    FILE* f = fopen(detections, "r");
    char line[4096];
    CHECK(f != NULL);
    if (f != NULL) {
      CHECK(fgets(line, sizeof line, f) != NULL && strstr(line, "\"detector\":\"exact\"") != NULL);
      fclose(f);
    }
  }
  remove(trace);
  remove(detections);
  rmdir(path);
}

static void test_bad_connect(void) {
  lg_guard* g = lg_create(NULL, NULL);
  char* error = NULL;
  CHECK(lg_connect(g, "http://nowhere", "swarm", "w1", NULL, &error) == -1);
  CHECK(error != NULL && strstr(error, "lg_connect: url: ") == error && valid_utf8(error));
  if (error) printf("bad connect: %s\n", error);
  lg_free(error);
  lg_destroy(g);
}

int main(void) {
  test_abi();
  test_judge();
  test_identical_calls();
  test_bad_config();
  test_null_pointers();
  test_other_events();
  test_record();
  test_bad_connect();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
