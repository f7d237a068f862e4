/* AOTriton and torch's flash and memory-efficient attention (tools/kiln-stage/aotriton.c) */
#ifndef KILN_STAGE_AOTRITON_H
#define KILN_STAGE_AOTRITON_H

/* what the stack does about torch's attention kernels on AMD targets */
struct aotplan {
	int on;        /* aotriton is built as a CMake stage (--with=aotriton) */
	int attn;      /* torch builds flash and memory-efficient attention */
	char *arches;  /* with on: the --arch targets AOTriton builds, one space between
	                  (the seam's spelling of an arch list), fresh */
};

/* 1 if arch (gfx1151, gfx90a:xnack-) is in one of AOTriton's target families */
int aot_family(const char *arch);
/* decide p from --arch, the pins and --with, saying each decision in one line on stdout;
   a pinned AOTriton that does not list an --arch of its families, or --with=aotriton for
   targets it has no kernels for, stops configure with one line */
void aot_plan(struct aotplan *p);

#endif
