/* running the hipify command: child process, output streamed to a log, the tail kept */
#ifndef HW_RUN_H
#define HW_RUN_H

#include "util.h"

/* Run argv (PATH searched) in folder cwd with envp (NULL = this environment), stdin from
   /dev/null, stdout and stderr appended to the open file logfd. When progress is set,
   a line counting the output lines is redrawn on stderr. Returns the exit status
   (128+signal when killed), 127 if argv[0] could not be started or cwd entered (126:
   found but not runnable), -1 with errno set if no child could be made. */
int run_logged(char *const argv[], char *const envp[], const char *cwd, int logfd, int progress);


/* Find a program: first beside self (a path of this executable, may be NULL), then in
   the absolute folders of PATH. Returns a fresh absolute path, or NULL. */
char *findprog(const char *name, const char *self);

#endif
