/* where wheel members install: member names normalised the way pip 23 does before it
   writes them (os.path.normpath, the .data/SCHEME/ folders), so two spellings of one
   installed file are seen as one; and safe plain file names for untrusted ELF strings */
#ifndef KILN_WHEELPATH_H
#define KILN_WHEELPATH_H

#include <stddef.h>
#include <sys/types.h>

/* The installed path of a member named name, as a comparison key: pip's
   os.path.normpath (empty and "." components dropped, "x/.." folded), with
   NAME.data/purelib/REST and NAME.data/platlib/REST folded onto REST (a virtual
   environment installs both to site-packages, where the wheel root goes), and other
   NAME.data/SCHEME/REST keyed by SCHEME and REST whatever NAME is. Case is kept: pip on
   Linux installs A.py and a.py side by side. Returns a fresh string, or NULL when the
   path is absolute or climbs above its root. */
char *wheelpath_key(const char *name);
/* posixpath.normpath of a relative path into b ("a//b/./c/../d" -> "a/b/d", "" -> ".");
   -1 if it is absolute or climbs out of its root */
struct buf;
int wheelpath_norm(struct buf *b, const char *p);

/* Among n member names (folders, names ending in '/', are ignored, as pip ignores them),
   find two that pip would install to one path, or a file whose path is a folder another
   member installs into. Returns 0 when there is none; 1 with the two indices in *a and
   *b (a's name sorts first); -1 with *a the index of a name that leaves its root. */
int wheelpath_clash(char *const *names, size_t n, size_t *a, size_t *b);

/* the message for a non-zero wheelpath_clash result r about names[a] and names[b], as a
   fresh string */
char *wheelpath_clashmsg(char *const *names, int r, size_t a, size_t b);

/* true if s can be used as one plain file name in an archive or folder: not empty, not
   "." or "..", no '/', '\\', control characters or DEL */
int wheelpath_plainname(const char *s);

/* append s to b with control characters, DEL, '\\' and bytes over 0x7e written as \xHH,
   so untrusted text prints on one line */
struct buf;
void wheelpath_escape(struct buf *b, const char *s);

#endif
