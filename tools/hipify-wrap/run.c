/* running the hipify command with its output in a log */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic.h"

int
run_logged(char *const argv[], char *const envp[], const char *cwd, int logfd, int progress)
{
	int p[2], st, dn;
	pid_t pid;
	char chunk[65536];
	ssize_t n, k;
	unsigned long lines = 0, shown = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dn = open("/dev/null", O_RDONLY);
		if (dn < 0 || dup2(dn, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		if (cwd && chdir(cwd) < 0) {
			dprintf(2, "%s: cannot enter %s: %s\n", argv0, cwd, strerror(errno));
			_exit(127);
		}
		if (envp)
			execvpe(argv[0], argv, envp);
		else
			execvp(argv[0], argv);
		dprintf(2, "%s: cannot run %s: %s\n", argv0, argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		n = read(p[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (writeall(logfd, chunk, (size_t)n) < 0)
			warn("writing the log:");
		for (k = 0; k < n; k++)
			lines += chunk[k] == '\n';
		if (progress && lines != shown) {
			fprintf(stderr, "\r%s: running hipify, %lu lines of output", argv0, lines);
			shown = lines;
		}
	}
	close(p[0]);
	if (progress && shown)
		fprintf(stderr, "\r\033[K");
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

char *
findprog(const char *name, const char *self)
{
	const char *path, *p, *q;
	char *dir, *c;

	if (self && (c = strrchr(self, '/'))) {
		dir = xstrndup(self, (size_t)(c - self));
		c = xasprintf("%s/%s", dir, name);
		free(dir);
		if (access(c, X_OK) == 0) {
			/* absolute: the child runs in another folder */
			char *r = realpath(c, NULL);
			if (r) {
				free(c);
				return r;
			}
			return c;
		}
		free(c);
	}
	if (!(path = getenv("PATH")))
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = q + 1) {
		q = strchr(p, ':');
		if (!q)
			q = p + strlen(p);
		if (q > p) {
			c = xasprintf("%.*s/%s", (int)(q - p), p, name);
			if (access(c, X_OK) == 0 && c[0] == '/')
				return c;
			free(c);
		}
		if (!*q)
			break;
	}
	return NULL;
}
