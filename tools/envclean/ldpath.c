/* envclean --check: libraries a module ships that LD_LIBRARY_PATH reaches in another copy */
#include <stdlib.h>
#include <string.h>

#include "checkint.h"
#include "os.h"

void
check_ldpath(struct state *st, const char *mod, struct copy *c, size_t nc, size_t nreg)
{
	struct probe *pr = &st->pr;
	size_t i, j;
	char *p, *s, *fix;

	/* libraries the module ships, reached through LD_LIBRARY_PATH from elsewhere */
	if (nreg) {
		struct copy *first = NULL;
		const char *ld = getenv("LD_LIBRARY_PATH"), *q, *end;
		char **libs = NULL, **libpath = NULL, **names, *d;
		size_t nlib = 0, nl = 0, k, nn;
		struct stat sa, sb;

		for (i = 0; i < nc && !first; i++)
			if (c[i].kind != K_NS)
				first = &c[i];
		if (ld && *ld && first->kind == K_PKG) {
			static const char *const sub[] = {"", "/lib", "/lib64", "/.libs", "/_libs"};
			char *base = xstrdup(first->path);

			for (k = 0; k < 6; k++) {
				d = k < 5 ? xasprintf("%s%s", base, sub[k]) : xasprintf("%s.libs", base);
				names = listdir(d, &nn);
				for (j = 0; j < nn; j++) {
					if (!startswith(names[j], "lib") || !strstr(names[j], ".so"))
						continue;
					p = xasprintf("%s/%s", d, names[j]);
					if (os_isfile(p)) {
						push(&libs, &nlib, names[j]);
						push(&libpath, &nl, p);
					}
					free(p);
				}
				strs_free(names, nn);
				free(d);
			}
			free(base);
			for (q = ld; nlib;) {
				char *dir;

				end = strchr(q, ':');
				if (!end)
					end = q + strlen(q);
				dir = end > q ? xstrndup(q, (size_t)(end - q)) : xstrdup(".");
				d = os_abspath(dir, pr->cwd);
				free(dir);
				names = listdir(d, &nn);
				for (k = 0; k < nlib; k++) {
					const char *so = strstr(libs[k], ".so");
					size_t stem = (size_t)(so - libs[k]) + 3;

					for (j = 0; j < nn; j++) {
						if (strncmp(names[j], libs[k], stem) != 0 ||
						    (names[j][stem] != 0 && names[j][stem] != '.'))
							continue;
						p = xasprintf("%s/%s", d, names[j]);
						if (stat(p, &sa) == 0 && stat(libpath[k], &sb) == 0 &&
						    (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino)) {
							s = xasprintf("%s: LD_LIBRARY_PATH reaches %s, another copy of %s "
							              "than the one %s ships (%s); the loader takes the "
							              "LD_LIBRARY_PATH one first and two builds meet in "
							              "one process", mod, p, libs[k], mod, libpath[k]);
							fix = xasprintf("unset LD_LIBRARY_PATH or drop %s from it "
							                "(envclean removes LD_LIBRARY_PATH)", d);
							addfinding(st, &(struct newfinding){L_PROBLEM, "ldpath",
							           mod, s, fix, p, libpath[k]});
						}
						free(p);
						break;
					}
				}
				strs_free(names, nn);
				free(d);
				if (!*end)
					break;
				q = end + 1;
			}
			strs_free(libs, nlib);
			strs_free(libpath, nl);
		}
	}
}
