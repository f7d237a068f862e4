/* the GPU target table and name suggestions */
#include "arch.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* families and generic targets as LLVM's AMDGPU usage page lists them; the members of
   a family are in order, its base ISA first (gpucheck's override advice prefers it).
   gfx801, gfx802, gfx805 and gfx810 are there for gpucheck (a GPU found, an override
   named); of gfx8 the stack builds only gfx803. */
const struct arch arch_table[] = {
	{"gfx801", "gfx8", NULL, 64, 0, 0},
	{"gfx802", "gfx8", NULL, 64, 0, 0},
	{"gfx803", "gfx8", NULL, 64, 0, 1},
	{"gfx805", "gfx8", NULL, 64, 0, 0},
	{"gfx810", "gfx8", NULL, 64, 0, 0},
	{"gfx900", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx902", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx904", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx906", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx908", "gfx908", NULL, 64, 0, 1},
	{"gfx909", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx90a", "gfx90a", NULL, 64, 0, 1},
	{"gfx90c", "gfx9", "gfx9-generic", 64, 0, 1},
	{"gfx940", "gfx9-4", "gfx9-4-generic", 64, 0, 1},
	{"gfx941", "gfx9-4", "gfx9-4-generic", 64, 0, 1},
	{"gfx942", "gfx9-4", "gfx9-4-generic", 64, 0, 1},
	{"gfx950", "gfx9-4", "gfx9-4-generic", 64, 0, 1},
	{"gfx1010", "gfx10-1", "gfx10-1-generic", 32, 0, 1},
	{"gfx1011", "gfx10-1", "gfx10-1-generic", 32, 0, 1},
	{"gfx1012", "gfx10-1", "gfx10-1-generic", 32, 0, 1},
	{"gfx1013", "gfx10-1", "gfx10-1-generic", 32, 0, 1},
	{"gfx1030", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1031", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1032", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1033", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1034", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1035", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1036", "gfx10-3", "gfx10-3-generic", 32, 0, 1},
	{"gfx1100", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1101", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1102", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1103", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1150", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1151", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1152", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1153", "gfx11", "gfx11-generic", 32, 0, 1},
	{"gfx1200", "gfx12", "gfx12-generic", 32, 0, 1},
	{"gfx1201", "gfx12", "gfx12-generic", 32, 0, 1},
	{"gfx9-generic", "gfx9", "gfx9-generic", 64, 1, 1},
	{"gfx9-4-generic", "gfx9-4", "gfx9-4-generic", 64, 1, 1},
	{"gfx10-1-generic", "gfx10-1", "gfx10-1-generic", 32, 1, 1},
	{"gfx10-3-generic", "gfx10-3", "gfx10-3-generic", 32, 1, 1},
	{"gfx11-generic", "gfx11", "gfx11-generic", 32, 1, 1},
	{"gfx12-generic", "gfx12", "gfx12-generic", 32, 1, 1},
};
const size_t arch_count = sizeof arch_table / sizeof arch_table[0];

const struct arch *
arch_find(const char *name)
{
	size_t i;

	for (i = 0; i < arch_count; i++)
		if (strcmp(arch_table[i].name, name) == 0)
			return &arch_table[i];
	return NULL;
}

const struct arch *
arch_proc(const char *name)
{
	const struct arch *a = arch_find(name);

	return a && !a->isgeneric ? a : NULL;
}

const struct arch *
arch_member(const char *family, const struct arch *prev)
{
	size_t i;

	for (i = prev ? (size_t)(prev - arch_table) + 1 : 0; i < arch_count; i++)
		if (!arch_table[i].isgeneric && strcmp(arch_table[i].family, family) == 0)
			return &arch_table[i];
	return NULL;
}

enum backend
arch_backend(const char *name)
{
	const struct arch *a;
	const char *p;

	if (strcmp(name, "cpu") == 0)
		return BACKEND_CPU;
	if ((a = arch_find(name)))
		return a->build ? BACKEND_GFX : BACKEND_NONE;
	/* sm_NN, sm_NNa, sm_NNf: digits, then at most one suffix letter */
	if (startswith(name, "sm_") && isdig((unsigned char)name[3])) {
		for (p = name + 3; isdig((unsigned char)*p); p++)
			;
		if (*p == 'a' || *p == 'f')
			p++;
		if (!*p)
			return BACKEND_CUDA;
	}
	return BACKEND_NONE;
}

const char *
backend_name(enum backend b)
{
	switch (b) {
	case BACKEND_GFX: return "gfx";
	case BACKEND_CUDA: return "cuda";
	case BACKEND_CPU: return "cpu";
	default: return "";
	}
}

int
editdist(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, w = lb + 1;
	int *d, c, v;

	d = xcalloc((la + 1) * w, sizeof *d);
	for (i = 0; i <= la; i++)
		d[i * w] = (int)i;
	for (j = 0; j <= lb; j++)
		d[j] = (int)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			c = a[i - 1] != b[j - 1];
			v = d[(i - 1) * w + j] + 1;
			if (d[i * w + j - 1] + 1 < v)
				v = d[i * w + j - 1] + 1;
			if (d[(i - 1) * w + j - 1] + c < v)
				v = d[(i - 1) * w + j - 1] + c;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[(i - 2) * w + j - 2] + 1 < v)
				v = d[(i - 2) * w + j - 2] + 1;
			d[i * w + j] = v;
		}
	v = d[la * w + lb];
	free(d);
	return v;
}

const char *
closest(const char *w, const char *const *words, size_t n, int maxd)
{
	const char *best = NULL;
	int bd = maxd + 1, d;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!words[i])
			continue;
		d = editdist(w, words[i]);
		if (d < bd) {
			bd = d;
			best = words[i];
		}
	}
	return best;
}
