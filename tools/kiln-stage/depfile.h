/* ninja depfiles: which paths their syntax can name, and writing one (kiln-stage depfile) */
#ifndef KILN_STAGE_DEPFILE_H
#define KILN_STAGE_DEPFILE_H

/* 1 when ninja's depfile syntax can name path: its plain-text characters, and space, '#'
   and '$', which depfile_main escapes; 0 for a quote, backtick, ';', ':' or another
   character that ends or splits a name there */
int depfile_safe(const char *path);

/* kiln-stage depfile [-k] -o FILE TARGET [DEP...]: "TARGET: DEP..." written to FILE
   atomically in make's form (space and '#' escaped with a backslash, '$' doubled); a DEP
   the syntax cannot name is left out; 2 on a usage error or a TARGET it cannot name (with
   -k: FILE removed, 0: the edge has no depfile then) */
int depfile_main(int argc, char **argv);

#endif
