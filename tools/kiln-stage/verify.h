/* kiln-stage's verbs that inspect a stage without changing it */
#ifndef KILN_STAGE_VERIFY_H
#define KILN_STAGE_VERIFY_H

/* kiln-stage verify [run's options] STAGE -- CMD...: rebuild an up-to-date stage into
   OUT.verify and compare it file by file with OUT. Exit 0 identical, 1 differs or the
   rebuild failed, 2 usage or the stage is not built for its key. */
int cmdverify(int argc, char **argv);
/* kiln-stage explain [run's options] STAGE: whether the stage would run and why, and
   why its stage-cache lookup would miss. Exit 0, or 2 on bad input. */
int cmdexplain(int argc, char **argv);

#endif
