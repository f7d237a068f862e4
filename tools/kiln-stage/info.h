/* the build-info record: per-component KEY=VALUE files gathered into JSON or OCI labels */
#ifndef KILN_STAGE_INFO_H
#define KILN_STAGE_INFO_H

#include "util.h"

/* Append the JSON record of every DIR/NAME.info file (sorted by NAME) to out:
   {"kiln_build_info":1,"components":{"NAME":{"key":"value",...},...}}, keys lowercased.
   Returns 0, or -1 with a one-line message in *err (file:line for a malformed record). */
int info_json(const char *dir, struct buf *out, char **err);

/* the forms of the labels: none can split on spaces or run anything */
enum labelfmt {
	LABEL_ARGS,          /* --label=KEY=VALUE, one per line: xargs -d '\n' podman build */
	LABEL_FILE,          /* KEY=VALUE, one per line: a --label-file */
	LABEL_CONTAINERFILE, /* LABEL "KEY"="VALUE" lines to append to a Containerfile */
};

/* Append one label per fact in the form fmt: org.opencontainers.image.{source,revision,
   version} from torch's record (or the first component's), kiln.arch, and
   kiln.NAME.{url,ref,commit,series_digest,version,wheel_sha256} for every component.
   Returns 0, or -1 with *err. */
int info_labels(const char *dir, enum labelfmt fmt, struct buf *out, char **err);

#endif
