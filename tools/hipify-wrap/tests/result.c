/* unit tests: counting hipify's per-file statuses (driver JSON lines, progress lines) */
#include <string.h>

#include "result.h"
#include "test.h"

int
main(void)
{
	struct tally t = {0};
	const char *json =
		"{\"src\": \"/x/a.cu\", \"dst\": \"/x/hip/a.hip\", \"status\": \"[ok]\"}\n"
		"{\"src\": \"/x/b.cpp\", \"dst\": \"/x/b.cpp\", \"status\": \"[skipped, no changes]\"}\n"
		"{\"src\": \"/x/c.h\", \"dst\": \"/x/hip/c.h\", \"status\": \"[skipped, already hipified]\"}\n"
		"{\"src\": \"/x/d.h\", \"dst\": null, \"status\": \"[ignored, input is hipified output]\"}\n"
		"{\"src\": \"/x/e.h\", \"dst\": \"/x/e.h\", \"status\": \"[skipped, no permissions]\"}\n"
		"not json at all\n"
		"{\"src\": \"/x/f.cu\", \"dst\": \"/x/hip/f.hip\", \"status\": \"[ok]\"}";
	const char *log =
		"/x/a.cu -> /x/hip/a.hip [ok]\n"
		"/x/b.cpp -> /x/b.cpp [skipped, no changes]\r\n"
		"/x/c.h -> /x/hip/c.h [skipped, already hipified]\n"
		"Total number of replaced kernel launches: 15\n"
		"[ok] a line that is not a result\n"
		"/x/e.h -> /x/e.h [skipped, no permissions]\n"
		"/x/g.h -> None [ignored, not to be hipified]\n"
		"/x/h.cu -> /x/hip/h.hip [something new]\n";

	CHECK_INT(tally_json(json, strlen(json), &t), 6, "six JSON results, the junk line ignored");
	CHECK_INT(t.hipified, 2, "[ok] counts as hipified");
	CHECK_INT(t.unchanged, 2, "no changes and already hipified count as unchanged");
	CHECK_INT(t.skipped, 1, "ignored counts as skipped");
	CHECK_INT(t.failed, 1, "no permissions counts as failed");
	CHECK_INT(t.total, 6, "total");

	memset(&t, 0, sizeof t);
	CHECK_INT(tally_log(log, strlen(log), &t), 6, "six progress lines");
	CHECK_INT(t.hipified, 1, "log: hipified");
	CHECK_INT(t.unchanged, 2, "log: unchanged (CRLF line too)");
	CHECK_INT(t.skipped, 1, "log: skipped");
	CHECK_INT(t.failed, 2, "log: no permissions and an unknown status fail");

	memset(&t, 0, sizeof t);
	CHECK_INT(tally_log("", 0, &t), 0, "empty log");
	CHECK_INT(tally_json("{\"status\": \"[ok]", 16, &t), 0, "unterminated status is not counted");
	CHECK(strstr(hw_driver, "HipifyResult") == NULL && strstr(hw_driver, "getattr(r, 'status'") != NULL,
	      "driver reads HipifyResult objects by attribute");
	CHECK(strstr(hw_driver, "isinstance(r, dict)") != NULL, "driver reads the old dict form");
	return TEST_DONE();
}
