/* running a child process and capturing what it prints */
#include "proc.h"
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long
nowms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
proc_capture(char *const argv[], char *const envp[], struct buf *out, struct buf *errout,
             size_t max, int timeout_ms, struct procres *res)
{
	posix_spawn_file_actions_t fa;
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, st, rc, open_n;
	struct pollfd pfd[2];
	char tmp[65536];
	long long deadline = timeout_ms > 0 ? nowms() + timeout_ms : 0;
	pid_t pid;
	ssize_t n;

	memset(res, 0, sizeof *res);
	if (!max)
		max = (size_t)64 << 20;
	bufreset(out);
	if (errout)
		bufreset(errout);
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (errout && pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	if (errout)
		posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	if (errout)
		close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		if (errout)
			close(pe[0]);
		res->notfound = 1;
		res->err = rc;
		res->status = rc == ENOENT ? 127 : 126;
		return 0;
	}
	pfd[0].fd = po[0];
	pfd[0].events = POLLIN;
	pfd[1].fd = errout ? pe[0] : -1;
	pfd[1].events = POLLIN;
	open_n = errout ? 2 : 1;
	while (open_n > 0) {
		int wait = -1, i;

		if (deadline) {
			long long left = deadline - nowms();
			if (left <= 0) {
				kill(pid, SIGKILL);
				res->timedout = 1;
				break;
			}
			wait = (int)left;
		}
		rc = poll(pfd, 2, wait);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			struct buf *dst = i == 0 ? out : errout;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[i].fd, tmp, sizeof tmp);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_n--;
				continue;
			}
			if (dst->len + (size_t)n <= max)
				bufadd(dst, tmp, (size_t)n);
		}
	}
	if (pfd[0].fd >= 0)
		close(pfd[0].fd);
	if (pfd[1].fd >= 0)
		close(pfd[1].fd);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!out->s)
		bufadd(out, "", 0);
	if (errout && !errout->s)
		bufadd(errout, "", 0);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int
proc_tofd(char *const argv[], char *const envp[], const char *cwd, int fd,
          void (*tick)(unsigned long lines, void *arg), void *arg)
{
	int p[2], st, dn;
	pid_t pid;
	char chunk[65536];
	ssize_t n, k;
	unsigned long lines = 0;

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
		if (writeall(fd, chunk, (size_t)n) < 0)
			warn("writing the log:");
		for (k = 0; k < n; k++)
			lines += chunk[k] == '\n';
		if (tick)
			tick(lines, arg);
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
