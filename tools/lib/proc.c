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
	res->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

volatile sig_atomic_t proc_gotsig;
/* the process group of the child running with group set (0: none) */
static volatile pid_t groupchild;

static void
onsig(int sig)
{
	proc_gotsig = sig;
	if (groupchild > 0)
		kill(-groupchild, sig);
}

void
proc_forward(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onsig;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* in the child: the group, the descriptors, the folder, then argv; what went wrong is
   said on fd and its errno sent to the parent through ep */
static void __attribute__((noreturn))
child(char *const argv[], int fd, const struct procopt *o, int ep, const sigset_t *mask)
{
	int dn, e;

	if (o->group) {
		/* a signal sent on before this point waits, blocked, and ends the child here */
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
	}
	dn = open("/dev/null", O_RDONLY);
	if (dn < 0 || dup2(dn, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		e = errno;
		(void)!write(ep, &e, sizeof e);
		_exit(127);
	}
	if (o->cwd && chdir(o->cwd) < 0) {
		e = errno;
		dprintf(2, "%s: cannot enter %s: %s\n", argv0, o->cwd, strerror(e));
		(void)!write(ep, &e, sizeof e);
		_exit(127);
	}
	if (o->envp)
		execvpe(argv[0], argv, o->envp);
	else
		execvp(argv[0], argv);
	e = errno;
	dprintf(2, "%s: cannot run %s: %s\n", argv0, argv[0], strerror(e));
	(void)!write(ep, &e, sizeof e);
	_exit(e == ENOENT ? 127 : 126);
}

int
proc_tofd(char *const argv[], int fd, const struct procopt *o, struct procres *res)
{
	static const struct procopt none;
	int p[2] = {-1, -1}, ep[2], st, e = 0;
	sigset_t block, mask;
	pid_t pid;
	char chunk[65536];
	ssize_t n, k;
	unsigned long lines = 0;

	if (!o)
		o = &none;
	memset(res, 0, sizeof *res);
	if (pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	if (o->tick && pipe2(p, O_CLOEXEC) < 0) {
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	fflush(NULL);
	/* the forwarded signals wait until the child has its group and default handlers */
	sigemptyset(&block);
	if (o->group) {
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
	}
	sigprocmask(SIG_BLOCK, &block, &mask);
	if ((pid = fork()) < 0) {
		e = errno;
		sigprocmask(SIG_SETMASK, &mask, NULL);
		close(ep[0]);
		close(ep[1]);
		if (o->tick) {
			close(p[0]);
			close(p[1]);
		}
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(ep[0]);
		child(argv, o->tick ? p[1] : fd, o, ep[1], &mask);
	}
	close(ep[1]);
	if (o->group) {
		/* the child makes the group too: whichever runs first, it exists from here */
		setpgid(pid, pid);
		groupchild = pid;
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (o->group && proc_gotsig)
		kill(-pid, proc_gotsig);
	if (o->tick) {
		close(p[1]);
		for (;;) {
			struct pollfd pf = {p[0], POLLIN, 0};

			if (o->tickms > 0 && poll(&pf, 1, o->tickms) == 0) {
				o->tick(lines, o->arg);
				continue;
			}
			n = read(p[0], chunk, sizeof chunk);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			if (writeall(fd, chunk, (size_t)n) < 0)
				warn("writing the log:");
			for (k = 0; k < n; k++)
				lines += chunk[k] == '\n';
			o->tick(lines, o->arg);
		}
		close(p[0]);
	}
	/* the exec closed ep's write end: nothing read means the program runs */
	while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			groupchild = 0;
			return -1;
		}
	groupchild = 0;
	if (n == (ssize_t)sizeof e) {
		res->notfound = 1;
		res->err = e;
	}
	res->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	res->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	return 0;
}

pid_t
proc_detach(int fd)
{
	pid_t pid;
	int dn;

	fflush(NULL);
	if ((pid = fork()) != 0) {
		if (fd >= 0)
			close(fd);
		return pid;
	}
	setsid();
	if ((dn = open("/dev/null", O_RDWR)) >= 0) {
		dup2(dn, 0);
		if (fd < 0)
			fd = dn;
	}
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (dn > 2 && dn != fd)
		close(dn);
	return 0;
}
