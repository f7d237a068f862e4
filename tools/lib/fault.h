/* test hooks that stop a tool at a named step, as a kill at that instant would */
#ifndef KILN_FAULT_H
#define KILN_FAULT_H

/* A step the tool has just finished (what a crash or kill -9 could follow). For tests
   only: with VAR=N in the environment, the N-th call kills the process (SIGKILL, status
   137) after saying so on stderr ("TOOL: killed after step N: STEP (VAR)"); with VAR=list
   each call is named on stderr ("TOOL: fault point N: STEP") and the tool goes on. With
   VAR unset or empty, nothing. */
void fault_at(const char *var, const char *step);

#endif
