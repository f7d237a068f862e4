/* the C unit-test harness: each check prints one "ok" / "not ok" line that
   tests/run.sh counts; main returns non-zero if any failed. */
#ifndef KILN_TEST_H
#define KILN_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failed, test_passed;

/* one named check */
#define CHECK(cond, ...) do { \
	if (cond) { test_passed++; printf("ok "); } \
	else { test_failed++; printf("not ok %s:%d: ", __FILE__, __LINE__); } \
	printf(__VA_ARGS__); printf("\n"); \
} while (0)

/* check two strings are equal, printing both when they are not */
#define CHECK_STR(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int same_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_; \
	CHECK(same_, __VA_ARGS__); \
	if (!same_) printf("#   got  '%s'\n#   want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

/* check two integers are equal */
#define CHECK_INT(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	CHECK(g_ == w_, __VA_ARGS__); \
	if (g_ != w_) printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

/* the exit status of a test program */
#define TEST_DONE() (fflush(stdout), test_failed ? 1 : 0)

#endif
