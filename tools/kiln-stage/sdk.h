/* a pinned SDK tarball: fetch (download with resume, sha256 checked) and unpack (safe
   extraction into a folder that appears whole or not at all) */
#ifndef KILN_STAGE_SDK_H
#define KILN_STAGE_SDK_H

/* kiln-stage fetch URL --sha256=HEX -o FILE: 0 done (or already there), 1 download or
   checksum problem, 2 usage */
int fetch_main(int argc, char **argv);
/* kiln-stage unpack TARBALL --into=DIR [--layout=rocm] [--max-size=BYTES]: 0 done (or
   DIR already there), 1 a refused or broken archive, 2 usage */
int unpack_main(int argc, char **argv);

#endif
