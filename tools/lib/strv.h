/* growable lists of owned strings */
#ifndef KILN_STRV_H
#define KILN_STRV_H

#include <stddef.h>

/* a growable list of strings (owned) */
struct strv {
	char **v;
	size_t n, cap;
};
/* 1 if l holds the string s, else 0 */
int strv_has(const struct strv *l, const char *s);
/* append a copy of s; with uniq, nothing happens if s is already there */
void strv_add(struct strv *l, const char *s, int uniq);
/* release every string and the array, and zero the list */
void strv_free(struct strv *l);
/* release n strings of a plain array and the array itself */
void strs_free(char **v, size_t n);

#endif
