/* the project's version, which every tool's --version prints. It must equal the file
   VERSION at the top of the tree: tools/lib/tests/version.sh fails when they differ. */
#ifndef KILN_VERSION_H
#define KILN_VERSION_H

#define KILN_VERSION "0.2.0"

#endif
