/* PEP 440 versions and version specifiers, as pypa/packaging 26.3 parses, normalizes,
   orders and matches them. Numbers are kept as 64-bit unsigned integers: a component
   above 18446744073709551615 is rejected as invalid (packaging has no limit). */
#ifndef KILN_PEP440_H
#define KILN_PEP440_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* pre-release kinds, in their sort order */
enum { PEP440_NOPRE = 0, PEP440_A = 1, PEP440_B = 2, PEP440_RC = 3 };

/* one segment of a local label: a number (any size, kept as its decimal digits without
   leading zeros) or a lowercase string; s is NUL-terminated and owned by the version */
struct pep440_seg {
	int isnum;
	const char *s;
};

/* a parsed version; release has nrel >= 1 components */
struct pep440 {
	uint64_t epoch;
	uint64_t *rel;
	size_t nrel;
	int pre;          /* PEP440_NOPRE, PEP440_A, PEP440_B or PEP440_RC */
	uint64_t pren;
	int haspost;
	uint64_t post;
	int hasdev;
	uint64_t dev;
	struct pep440_seg *loc; /* local label segments; nloc == 0 when there is none */
	size_t nloc;
	char *mem;        /* storage of the local strings */
};

/* Parse s[0..n) (surrounding whitespace, including Unicode spaces, is ignored; a leading
   'v' is allowed; case does not matter). Returns 0, or -1 when it is not a valid version
   (v is then zeroed). Release with pep440_free. */
int pep440_parse(struct pep440 *v, const char *s, size_t n);
/* pep440_parse of a NUL-terminated string */
int pep440_parses(struct pep440 *v, const char *s);
/* release what pep440_parse allocated; safe on a zeroed struct */
void pep440_free(struct pep440 *v);
/* deep copy of src into dst */
void pep440_copy(struct pep440 *dst, const struct pep440 *src);

/* total order of PEP 440 (packaging's _cmpkey): <0, 0 or >0. Trailing zeros of the
   release do not count (1.0 == 1.0.0); a local label sorts above none; local segments
   compare strings before numbers, strings bytewise, numbers numerically. */
int pep440_cmp(const struct pep440 *a, const struct pep440 *b);
/* pep440_cmp ignoring both local labels (compares the public versions) */
int pep440_cmppublic(const struct pep440 *a, const struct pep440 *b);

/* append the normalized form (str(Version)): 1!2.0rc1.post2.dev3+abc.4 */
void pep440_str(struct buf *b, const struct pep440 *v);
/* append the public part (no local label) */
void pep440_public(struct buf *b, const struct pep440 *v);
/* append the base version: epoch and release only */
void pep440_base(struct buf *b, const struct pep440 *v);
/* append the local label ("abc.4"); nothing when there is none */
void pep440_local(struct buf *b, const struct pep440 *v);
/* the pre-release kind of a letter as written (a alpha b beta c rc pre preview, any
   case), or -1 */
int pep440_preletter(const char *s, size_t n);
/* true for a pre-release or a development release */
int pep440_isprerelease(const struct pep440 *v);
/* true for a post-release */
int pep440_ispostrelease(const struct pep440 *v);

/* the operators of a specifier */
enum pep440_op { PEP440_COMPAT, PEP440_EQ, PEP440_NE, PEP440_LE, PEP440_GE, PEP440_LT,
                 PEP440_GT, PEP440_ARB };

/* one specifier clause, e.g. ">=2.6" or "==2.6.*" */
struct pep440_spec {
	enum pep440_op op;
	char *text;        /* the version as written (after the operator, trimmed) */
	struct pep440 v;   /* parsed version (without ".*"); zeroed for === */
	int wildcard;      /* ==V.* or !=V.* */
	int haslocal;      /* the version has a local label (== and != only) */
};

/* a comma-separated set of clauses; n == 0 matches every version */
struct pep440_specset {
	struct pep440_spec *s;
	size_t n;
};

/* Parse one clause from s[0..n). Returns 0, or -1 with a static reason in *why. */
int pep440_spec_parse(struct pep440_spec *sp, const char *s, size_t n, const char **why);
/* release one clause */
void pep440_spec_free(struct pep440_spec *sp);
/* Parse "CLAUSE[,CLAUSE...]" (an empty or blank string gives the empty set).
   Returns 0, or -1 with a static reason in *why and the failing clause's offset in *at. */
int pep440_specset_parse(struct pep440_specset *ss, const char *s, const char **why,
                         size_t *at);
/* release a set */
void pep440_specset_free(struct pep440_specset *ss);

/* Does version v (raw is its original text, used only by ===) satisfy the clause?
   Pre-releases are not filtered here: this is packaging's Specifier.contains with
   prereleases=True. */
int pep440_spec_contains(const struct pep440_spec *sp, const struct pep440 *v,
                         const char *raw);
/* all clauses of the set hold (pre-releases not filtered) */
int pep440_specset_contains(const struct pep440_specset *ss, const struct pep440 *v,
                            const char *raw);
/* Does the clause name a pre-release (packaging's Specifier.prereleases)? 1 yes, 0 no;
   != and ==V.* never do; === does when its text parses as a pre-release. */
int pep440_spec_pre(const struct pep440_spec *sp);
/* some clause of the set names a pre-release */
int pep440_specset_pre(const struct pep440_specset *ss);
/* append the operator's text ("~=", "==" ...) */
const char *pep440_opstr(enum pep440_op op);

#endif
