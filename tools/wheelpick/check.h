/* the integrity check of a wheel file (--check) */
#ifndef WHEELPICK_CHECK_H
#define WHEELPICK_CHECK_H

#include "wheelname.h"

/* Open the wheel at path (named w) with libarchive and verify it: a readable zip, one
   .dist-info folder whose name and version match the file name, WHEEL (Wheel-Version,
   Tag, Build) and METADATA (Name, Version) agreeing with the file name, and every RECORD
   row's sha256 and size matching the member, every member listed. Returns 0 when it
   holds, 1 with the first mismatch in *err, 2 when the file cannot be read (*err set;
   caller frees). */
int wheel_check(const char *path, const struct wheelname *w, char **err);

/* The Requires-Python of the wheel's METADATA: 1 with it in *out (caller frees), 0 when
   there is none, -1 when the wheel cannot be read, -2 when libarchive cannot be loaded
   (*err set; caller frees). */
int wheel_requirespython(const char *path, char **out, char **err);

#endif
