/* build.ninja's tools half and the escaping every generated file goes through */
#ifndef KILN_STAGE_EMIT_H
#define KILN_STAGE_EMIT_H

#include <stddef.h>
#include <unistd.h>

#include "strv.h"
#include "util.h"

/* what the tools emitter needs from configure */
struct emitcfg {
	const char *srcdir, *pkgconfig, *fuzzcc, *cc;
	const char *libcflags, *libcryptolibs;   /* tools/lib's pkg-config flags */
	char **lib;                              /* the .c files of tools/lib */
	size_t nlib;
};

/* ninja-escape s onto b ('$', ' ', ':'): the one place for ninja's syntax */
void ninja_esc(struct buf *b, const char *s);
/* the shell-quoted form of s, ninja-escaped: a value used inside a rule's command */
void ninja_shq(struct buf *b, const char *s);

/* Append the build edges of every tool (release, sanitized + unit tests, fuzz) and the
   tools/check/install targets to b; call regen with each folder and build.conf file
   whose change reruns configure; the tool names go to names (emptied first). Returns 0,
   or -1 with *err. */
int emit_tools(struct buf *b, const struct emitcfg *ec, void (*regen)(const char *path),
               struct strv *names, char **err);

/* the sorted names in dir ending in suffix (NULL: any) that are folders (wantdir) or
   regular files; NULL with *n 0 when dir cannot be read (os_listdir, filtered; release
   with strs_free) */
char **lsdir(const char *dir, const char *suffix, int wantdir, size_t *n);

#endif
