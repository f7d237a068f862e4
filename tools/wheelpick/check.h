/* the integrity check of a wheel file (--check) */
#ifndef WHEELPICK_CHECK_H
#define WHEELPICK_CHECK_H

#include "wheelname.h"

/* Open the wheel at path (named w) without blocking and verify it: a regular file, a
   zip that zip_open accepts (safe member names, none two that pip installs to one path,
   local headers agreeing with the central directory, no encryption, sizes that deflate
   can give) with every member inflating to its recorded size and CRC-32; one
   .dist-info folder whose name and version match the file name, WHEEL (Wheel-Version,
   Tag, Build) and METADATA (Name, Version) agreeing with the file name, and every RECORD
   row's sha256 and size matching the member, every member listed. Returns 0 when it
   holds, 1 with the first mismatch in *err, 2 when the file cannot be read or is not a
   regular file, or a member path is unsafe or clashes with another (*err set; caller
   frees). */
int wheel_check(const char *path, const struct wheelname *w, char **err);

/* The Requires-Python of the wheel's METADATA: 1 with it in *out (caller frees), 0 when
   there is none, -1 when the wheel cannot be read (*err set; caller frees). */
int wheel_requirespython(const char *path, char **out, char **err);

#endif
