/* the loopback proxy that makes a build's network attempt visible (kiln-stage netguard) */
#ifndef KILN_STAGE_NETGUARD_H
#define KILN_STAGE_NETGUARD_H

/* kiln-stage netguard LOG: print a loopback port, then refuse every proxy request there
   with 403, appending its first line to LOG, until the parent ends; 2 usage */
int netguard_main(int argc, char **argv);

#endif
