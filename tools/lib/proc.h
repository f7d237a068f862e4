/* running a child process and capturing what it prints */
#ifndef KILN_PROC_H
#define KILN_PROC_H

#include <signal.h>

#include "util.h"

/* what a finished child did */
struct procres {
	int status;     /* exit status, or 128+signal */
	int sig;        /* the signal that ended it, 0 if it exited */
	int timedout;   /* killed after the timeout */
	int notfound;   /* could not be started (errno in err) */
	int err;
};

/* Run argv (PATH searched) with envp (NULL = current environment), stdin from
   /dev/null, stdout captured into out (at most max bytes, 0 = 64 MiB) and stderr into
   errout (or inherited when errout is NULL). Kills the child after timeout_ms
   (0 = none). Returns 0 if it ran (see res), -1 with errno set if it could not. */
int proc_capture(char *const argv[], char *const envp[], struct buf *out, struct buf *errout,
                 size_t max, int timeout_ms, struct procres *res);

/* how proc_tofd runs a child; all zero (or NULL) is this environment, this folder,
   this process group */
struct procopt {
	char *const *envp;    /* the child's environment (NULL: this one) */
	const char *cwd;      /* the folder it runs in (NULL: this one) */
	int group;            /* in a process group of its own, to which the signals
	                         proc_forward catches are sent on */
	/* after each chunk of output, the number of lines written so far; NULL: the child
	   writes to fd itself (and may leave children behind that still hold it) */
	void (*tick)(unsigned long lines, void *arg);
	void *arg;
	int tickms;           /* > 0: tick is also called after tickms without output */
};

/* Run argv (PATH searched) as o says (NULL: the defaults), stdin from /dev/null,
   stdout and stderr both written to the open file fd (a log). Returns 0 when a child
   was made, with how it ended in res: status is the exit status or 128+signal (sig set
   to the signal); a program that could not be started or a cwd that could not be
   entered is said on fd, sets notfound and err, and gives status 127 (126: found but
   not runnable). Returns -1 with errno set when no child could be made. */
int proc_tofd(char *const argv[], int fd, const struct procopt *o, struct procres *res);

/* Fork a child that outlives this process's group: a session of its own, stdin from
   /dev/null, stdout and stderr on fd (/dev/null when fd < 0; fd is closed in both
   processes). Returns like fork: 0 in the child (which ends with _exit), its pid in
   this process, -1 with errno set. */
pid_t proc_detach(int fd);

/* the last signal proc_forward's handler caught (0: none) */
extern volatile sig_atomic_t proc_gotsig;
/* From now on catch SIGINT, SIGTERM and SIGHUP: each is recorded in proc_gotsig and
   sent on to the process group of the child proc_tofd runs with group set (one caught
   before that child starts is sent to it once it has). The handler does not restart
   system calls: a blocking call here returns EINTR, so its loop can look at
   proc_gotsig. */
void proc_forward(void);

#endif
