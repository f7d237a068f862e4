/* unit tests of policy_cxx: GLIBCXX_/CXXABI_ version needs mapped to the oldest manylinux
   policy whose libstdc++ provides them (auditwheel 6.7.0's manylinux-policy.json) */
#include "fw.h"
#include "test.h"

int
main(void)
{
	static const struct { const char *v; int want; } t[] = {
		{"GLIBCXX_3.4", 5}, {"CXXABI_1.3", 5}, {"GLIBCXX_3.4.8", 5}, {"GLIBCXX_3.4.9", 12},
		{"CXXABI_1.3.1", 5}, {"CXXABI_1.3.2", 12}, {"GLIBCXX_3.4.19", 17}, {"CXXABI_1.3.7", 17},
		{"GLIBCXX_3.4.20", 24}, {"GLIBCXX_3.4.21", 24}, {"CXXABI_1.3.9", 24},
		{"CXXABI_1.3.11", 27}, {"GLIBCXX_3.4.24", 27}, {"GLIBCXX_3.4.25", 31},
		{"GLIBCXX_3.4.28", 31}, {"GLIBCXX_3.4.29", 34}, {"CXXABI_1.3.13", 34},
		{"GLIBCXX_3.4.30", 35}, {"GLIBCXX_3.4.31", 39}, {"CXXABI_1.3.15", 39},
		{"GLIBCXX_3.4.33", 39}, {"GLIBCXX_3.4.34", 1000}, {"CXXABI_1.3.16", 1000},
		{"GLIBC_2.17", -1}, {"CXXABI_TM_1", -1}, {"GLIBCXX_3.4.2x", -1}, {"GCC_3.0", -1},
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof *t; i++)
		CHECK_INT(policy_cxx(t[i].v), t[i].want, "policy_cxx(%s)", t[i].v);
	return TEST_DONE();
}
