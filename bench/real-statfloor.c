/* bench/real-statfloor.c: the floor of a no-op hipify-wrap: one lstat of every file in
 * its manifest (SRCDIR/.git/kiln-hipify/manifest), nothing else. Usage:
 *   real-statfloor SRCDIR MANIFEST [bydir]
 * prints the number of files statted; "bydir" stats each name relative to its folder's
 * descriptor instead of from the root. Built and run by bench/real-hipify-noop.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char line[8192], dir[4096] = "\001", *p, *s;
	int root, dfd = -1, bydir = argc > 3;
	long n = 0, missing = 0;
	size_t dl;
	struct stat st;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: real-statfloor SRCDIR MANIFEST [bydir]\n");
		return 2;
	}
	if ((root = open(argv[1], O_RDONLY | O_DIRECTORY)) < 0 || !(f = fopen(argv[2], "r"))) {
		perror("real-statfloor");
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		/* the path is the last tab-separated field */
		if (line[0] == '#' || !(p = strrchr(line, '\t')))
			continue;
		p++;
		p[strcspn(p, "\n")] = 0;
		if (bydir) {
			s = strrchr(p, '/');
			dl = s ? (size_t)(s - p) : 0;
			if (strlen(dir) != dl || strncmp(dir, p, dl) != 0) {
				memcpy(dir, p, dl);
				dir[dl] = 0;
				if (dfd >= 0 && dfd != root)
					close(dfd);
				dfd = dl ? openat(root, dir, O_RDONLY | O_DIRECTORY | O_PATH) : root;
			}
			if (fstatat(dfd, s ? s + 1 : p, &st, AT_SYMLINK_NOFOLLOW) < 0)
				missing++;
		} else if (fstatat(root, p, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			missing++;
		}
		n++;
	}
	printf("%ld stats, %ld missing\n", n, missing);
	return 0;
}
