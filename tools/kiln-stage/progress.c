/* live progress of a running stage. Design: every `kiln-stage run` reads its child's
   output back from the log as it comes (proc_tofd's tick, also every second of silence),
   keeps the inner build's count in LOGDIR/STAGE.status, and shows it where ninja's own
   status goes: ninja's standard output, found as /proc/NINJA/fd/1 of the ninja (or
   samu) whose step this is. Stages stay out of the console pool, so parallel stages still run
   in parallel. On a terminal one stage at a time (the holder of LOGDIR/.progress.lock)
   draws one line, in place, holding every running stage's status; without one, each
   stage writes a plain line every KILN_PROGRESS_EVERY seconds (a pipe, or a file opened
   to append; never into a file ninja writes at its own offset). */
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "json.h"
#include "os.h"
#include "strv.h"
#include "trace.h"

enum { LASTNONE, LASTNM, LASTPCT, LASTEXT, LASTPHASE };

double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *
fmtdur(double s)
{
	long t = (long)(s + 0.5);

	if (s < 60)
		return xasprintf("%.1fs", s < 0 ? 0.0 : s);
	if (t < 3600)
		return xasprintf("%ldm%02lds", t / 60, t % 60);
	return xasprintf("%ldh%02ldm", t / 3600, (t / 60) % 60);
}

/* the C1 control at s[i] (raw 8-bit, or UTF-8's C2 80-9F), its length in *len; -1 none */
static int
c1at(const unsigned char *s, size_t i, size_t n, size_t *len)
{
	if (s[i] >= 0x80 && s[i] <= 0x9f) {
		*len = 1;
		return s[i];
	}
	if (s[i] == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
		*len = 2;
		return s[i + 1];
	}
	return -1;
}

/* the end of the escape sequence at s[i] (ESC, or the C1 control c of length len): CSI
   through its final byte, OSC, DCS, SOS, PM and APC through BEL or ST (ESC \ or C1 9C),
   another ESC sequence through its final byte */
static size_t
escend(const unsigned char *s, size_t i, size_t n, int c, size_t len)
{
	size_t k;

	if (c == 0x1b) {
		if (i + 1 >= n)
			return n;
		c = s[i + 1] >= 0x40 && s[i + 1] <= 0x5f ? s[i + 1] + 0x40 : 0;
		if (!c) {
			/* nF / Fp / Fs: intermediates 0x20-0x2f, then one final byte */
			for (i++; i < n && s[i] >= 0x20 && s[i] <= 0x2f; i++)
				;
			return i < n ? i + 1 : n;
		}
		len = 2;
	}
	i += len;
	if (c == 0x9b) {
		for (; i < n && !(s[i] >= 0x40 && s[i] <= 0x7e); i++)
			;
		return i < n ? i + 1 : n;
	}
	if (c != 0x9d && c != 0x90 && c != 0x98 && c != 0x9e && c != 0x9f)
		return i;
	for (; i < n; i++) {
		if (s[i] == 0x07)
			return i + 1;
		if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
			return i + 2;
		if (c1at(s, i, n, &k) == 0x9c)
			return i + k;
	}
	return n;
}

void
safeadd(struct buf *b, const char *str, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, kept = 0, k = 1;
	int c;

	while (i < n && kept < max) {
		c = s[i] == 0x1b ? 0x1b : c1at(s, i, n, &k);
		if (c == 0x1b || c == 0x9b || c == 0x9d || c == 0x90 || c == 0x98 || c == 0x9e || c == 0x9f) {
			/* an escape sequence (colours, a window title): dropped whole */
			i = escend(s, i, n, c, k);
			continue;
		}
		if (c < 0)
			k = s[i] < 0x80 ? 1 : utf8_seq(s + i, n - i);
		if (c >= 0 || k == 0 || s[i] < 0x20 || s[i] == 0x7f) {
			/* a control (C0, DEL, C1) or a byte that is not UTF-8: one '?' */
			bufputc(b, s[i] == '\t' ? ' ' : '?');
			i += c >= 0 ? k : 1;
			kept++;
			continue;
		}
		if (kept + k > max)
			break;
		bufadd(b, s + i, k);
		i += k;
		kept += k;
	}
	if (i < n)
		bufputs(b, "...");
}

/* a number at s (at most e), its end in *end; -1 when there is none */
static long
num(const char *s, const char *e, const char **end)
{
	long v = 0;

	if (s >= e || !isdig(*s))
		return -1;
	for (; s < e && isdig(*s) && v < 100000000; s++)
		v = v * 10 + (*s - '0');
	*end = s;
	return v;
}

static void
setwhat(struct inner *in, const char *s, size_t n)
{
	struct buf b = {0};

	safeadd(&b, s, n, sizeof in->what - 4);
	snprintf(in->what, sizeof in->what, "%s", b.s ? b.s : "");
	buffree(&b);
}

/* pip's, setuptools' and CMake's phases worth showing */
static const char *const phases[] = {
	"Collecting ", "Processing ", "Installing build dependencies", "Getting requirements to build",
	"Preparing metadata", "Building wheel for ", "Created wheel for ", "Installing collected packages",
	"Successfully installed", "running ", "-- Configuring", "-- Generating", "-- Build files",
};

int
inner_parse(struct inner *in, const char *line, size_t n)
{
	const char *p = line, *e = line + n, *q, *r;
	long a, b;
	size_t i;

	/* what a terminal would show: after the last \r, without colours in front */
	for (q = e; q > p; q--)
		if (q[-1] == '\r')
			break;
	p = q;
	while (p < e && (*p == ' ' || *p == 0x1b)) {
		if (*p == 0x1b)
			while (p < e && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
				p++;
		if (p < e)
			p++;
	}
	if (p < e && *p == '[') {
		for (q = p + 1; q < e && *q == ' '; q++)
			;
		if ((a = num(q, e, &r)) >= 0 && r < e && *r == '/' && (b = num(r + 1, e, &r)) > 0 && r < e &&
		    *r == ']' && a <= b) {
			in->n = a, in->m = b;
			in->last = LASTNM;
			return 1;
		}
		if (a >= 0 && a <= 100 && r + 1 < e && r[0] == '%' && r[1] == ']') {
			in->pct = (int)a;
			in->last = LASTPCT;
			return 1;
		}
	}
	if ((size_t)(e - p) > 21 && memcmp(p, "building '", 10) == 0 && (q = memchr(p + 10, '\'', (size_t)(e - p - 10))) &&
	    (size_t)(e - q) >= 11 && memcmp(q, "' extension", 11) == 0) {
		in->ext++;
		setwhat(in, p + 10, (size_t)(q - p - 10));
		in->last = LASTEXT;
		return 1;
	}
	for (i = 0; i < sizeof phases / sizeof *phases; i++) {
		if ((size_t)(e - p) >= strlen(phases[i]) && memcmp(p, phases[i], strlen(phases[i])) == 0) {
			setwhat(in, p, (size_t)(e - p));
			in->last = LASTPHASE;
			return 1;
		}
	}
	return 0;
}

void
inner_format(const struct inner *in, struct buf *b)
{
	switch (in->last) {
	case LASTNM:
		bufprintf(b, "%ld/%ld compiled", in->n, in->m);
		break;
	case LASTPCT:
		bufprintf(b, "%d%%", in->pct);
		break;
	case LASTEXT:
		bufprintf(b, "extension %d (%s)", in->ext, in->what);
		break;
	case LASTPHASE:
		bufputs(b, in->what);
		break;
	default:
		bufputs(b, "running");
	}
}

/* whether ninja's fd 1 was opened to append (a file it writes at its own offset is not
   written here: that would overwrite its output) */
static int
appends(pid_t pid)
{
	struct buf b = {0};
	char *f = xasprintf("/proc/%ld/fdinfo/1", (long)pid), *p;
	int r = 0;

	if (readfile(f, &b, 1 << 16) == 0 && (p = strstr(b.s, "flags:")))
		r = (strtol(p + 6, NULL, 8) & O_APPEND) != 0;
	free(f);
	buffree(&b);
	return r;
}

/* where progress goes: ninja's standard output, else this stderr; -1: nowhere */
static int
opendisp(void)
{
	struct stat sb;
	pid_t np = ninja_pid();
	char *f;
	int fd;

	if (!np)
		return fcntl(2, F_DUPFD_CLOEXEC, 3);
	f = xasprintf("/proc/%ld/fd/1", (long)np);
	fd = -1;
	/* O_NONBLOCK: a pipe nobody reads is ENXIO, a full one drops a line, never a wait */
	if (stat(f, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode) || (S_ISREG(sb.st_mode) && appends(np))))
		fd = open(f, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	free(f);
	if (fd >= 0 && S_ISCHR(sb.st_mode) && !isatty(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* write to the display; a reader that went away is no SIGPIPE, just no more progress */
static void
show(struct progress *p, const char *s, size_t n)
{
	sigset_t set, old;
	struct timespec zero = {0, 0};

	if (p->disp < 0)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (write(p->disp, s, n) < 0 && errno == EPIPE) {
		sigtimedwait(&set, NULL, &zero);
		close(p->disp);
		p->disp = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* "STAGE: INNER, ELAPSED, about X left (log: PATH)" */
static void
statusline(const struct progress *p, struct buf *b, int withlog)
{
	double el = mono() - p->t0, left = -1;
	char *d = fmtdur(el), *l;

	bufprintf(b, "%s: ", p->stage);
	inner_format(&p->in, b);
	bufprintf(b, ", %s", d);
	free(d);
	if (p->est > 0)
		left = p->est - el;
	else if (p->in.last == LASTNM && p->in.n > 0 && el > 10)
		left = el * (double)(p->in.m - p->in.n) / (double)p->in.n;
	if (p->est > 0 && left < 0) {
		l = fmtdur(p->est);
		bufprintf(b, ", longer than the last build (%s)", l);
		free(l);
	} else if (left >= 0) {
		l = fmtdur(left);
		bufprintf(b, ", about %s left", l);
		free(l);
	}
	if (withlog)
		bufprintf(b, " (log: %s)", p->logpath);
}

/* LOGDIR/STAGE.status: "PID\nLINE\n", replaced whole */
static void
putstatus(struct progress *p)
{
	struct buf b = {0};
	char *tmp = xasprintf("%s.tmp", p->statuspath);
	int fd;

	bufprintf(&b, "%ld\n", (long)getpid());
	statusline(p, &b, 1);
	bufputc(&b, '\n');
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) >= 0) {
		if (writeall(fd, b.s, b.len) == 0 && close(fd) == 0)
			rename(tmp, p->statuspath);
		else
			unlink(tmp);
	}
	free(tmp);
	buffree(&b);
}

/* the other running stages' lines, from their status files (a writer that died is
   skipped) */
static void
others(const struct progress *p, struct buf *b)
{
	struct strv names = {0};
	struct buf t = {0};
	char *dir = xstrndup(p->statuspath, (size_t)(strrchr(p->statuspath, '/') - p->statuspath));
	char *f, *nl, *lp;
	size_t i, len;
	long pid;

	if (os_listdir(dir, &names) == 0) {
		for (i = 0; i < names.n; i++) {
			if (!endswith(names.v[i], ".status"))
				continue;
			f = xasprintf("%s/%s", dir, names.v[i]);
			if (strcmp(f, p->statuspath) != 0 && readfile(f, &t, 4096) == 0 &&
			    (pid = strtol(t.s, &nl, 10)) > 0 && *nl == '\n' && kill((pid_t)pid, 0) == 0) {
				/* without its log's path: the line is shared */
				len = strcspn(nl + 1, "\n");
				if ((lp = strstr(nl + 1, " (log: ")) && lp < nl + 1 + len)
					len = (size_t)(lp - nl - 1);
				bufputs(b, " | ");
				safeadd(b, nl + 1, len, 200);
			}
			free(f);
		}
	}
	strv_free(&names);
	buffree(&t);
	free(dir);
}

/* the terminal line, if this stage holds the drawer lock: all running stages, cut to
   the terminal's width, in place */
static void
draw(struct progress *p)
{
	struct buf b = {0}, line = {0}, more = {0};
	struct winsize ws;

	if (!p->drawer && p->lockfd >= 0 && flock(p->lockfd, LOCK_EX | LOCK_NB) == 0)
		p->drawer = 1;
	if (!p->drawer)
		return;
	p->cols = ioctl(p->disp, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
	/* alone, the line names the log; shared, each stage's log is in its status file */
	others(p, &more);
	statusline(p, &line, more.len == 0);
	if (more.len)
		bufadd(&line, more.s, more.len);
	bufputc(&b, '\r');
	bufadd(&b, line.s, line.len < (size_t)p->cols - 1 ? line.len : (size_t)p->cols - 1);
	bufputs(&b, "\033[K");
	show(p, b.s, b.len);
	p->drawn = 1;
	buffree(&b);
	buffree(&line);
	buffree(&more);
}

/* a plain line, for a display that is no terminal */
static void
plain(struct progress *p)
{
	struct buf b = {0};

	bufputs(&b, "kiln: ");
	statusline(p, &b, 1);
	bufputc(&b, '\n');
	show(p, b.s, b.len);
	buffree(&b);
}

static void update(struct progress *p);

/* read the log's new bytes and parse its finished lines */
static void
readlog(struct progress *p)
{
	char chunk[65536];
	const char *s, *nl;
	ssize_t n;
	size_t len;

	while (p->logrd >= 0 && (n = pread(p->logrd, chunk, sizeof chunk, p->off)) > 0) {
		p->off += n;
		for (s = chunk; s < chunk + n; s = nl + 1) {
			if (!(nl = memchr(s, '\n', (size_t)(chunk + n - s)))) {
				len = (size_t)(chunk + n - s);
				if (p->part.len < 4096)
					bufadd(&p->part, s, len < 4096 - p->part.len ? len : 4096 - p->part.len);
				break;
			}
			len = (size_t)(nl - s);
			if (p->part.len) {
				bufadd(&p->part, s, len < 4096 ? len : 4096);
				p->changed |= inner_parse(&p->in, p->part.s, p->part.len);
				bufreset(&p->part);
			} else {
				p->changed |= inner_parse(&p->in, s, len < 4096 ? len : 4096);
			}
			/* with no interval (tests), each report is shown as it is read */
			if (p->changed && p->every == 0)
				update(p);
		}
	}
}

/* show what changed, when it is due: the status file at most each second, the terminal
   line at most four times a second (and each second for the clock), a plain line each
   interval; with no interval, every change at once */
static void
update(struct progress *p)
{
	double t = mono();
	int due = p->every == 0 && p->changed;

	if (due || (p->changed && t - p->laststatus >= 1) || t - p->laststatus >= 10) {
		putstatus(p);
		p->laststatus = t;
	}
	if (p->disp >= 0 && p->tty && (due || (p->changed && t - p->lastdraw >= 0.25) || t - p->lastdraw >= 1)) {
		draw(p);
		p->lastdraw = t;
	} else if (p->disp >= 0 && !p->tty && (due || (p->every > 0 && t - p->lastplain >= p->every))) {
		plain(p);
		p->lastplain = t;
	}
	p->changed = 0;
}

void
progress_tick(unsigned long lines, void *arg)
{
	struct progress *p = arg;

	(void)lines;
	readlog(p);
	update(p);
}

void
progress_start(struct progress *p, const char *stage, const char *logdir, const char *logpath)
{
	const char *v = getenv("KILN_PROGRESS"), *e = getenv("KILN_PROGRESS_EVERY");
	struct buf b = {0};
	char *end;

	memset(p, 0, sizeof *p);
	p->stage = xstrdup(stage);
	p->logpath = xstrdup(logpath);
	p->statuspath = xasprintf("%s/%s.status", logdir, stage);
	p->timepath = xasprintf("%s/%s.time", logdir, stage);
	p->lockpath = xasprintf("%s/.progress.lock", logdir);
	p->ninjalog = xasprintf("%s/%s.ninja_log", logdir, stage);
	unlink(p->ninjalog);
	p->t0 = p->lastplain = p->lastdraw = p->laststatus = mono();
	p->every = 300;
	if (e && *e && (p->every = strtod(e, &end)) >= 0 && !*end)
		;
	else if (e && *e)
		p->every = 300;
	if (readfile(p->timepath, &b, 4096) == 0)
		p->est = strtod(b.s, NULL);
	buffree(&b);
	p->logrd = open(logpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	p->disp = (v && (!strcmp(v, "0") || !strcmp(v, "off"))) ? -1 : opendisp();
	p->tty = p->disp >= 0 && isatty(p->disp);
	p->lockfd = p->tty ? open(p->lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644) : -1;
	putstatus(p);
}

void
progress_end(struct progress *p, int built)
{
	char *t;

	readlog(p);
	if (p->drawn)
		show(p, "\r\033[K", 4);
	if (built) {
		t = xasprintf("%.1f\n", mono() - p->t0);
		writefile_atomic(p->timepath, t, strlen(t), 0644);
		free(t);
	}
	unlink(p->statuspath);
	if (p->logrd >= 0)
		close(p->logrd);
	if (p->disp >= 0)
		close(p->disp);
	if (p->lockfd >= 0)
		close(p->lockfd);
	free(p->stage);
	free(p->logpath);
	free(p->statuspath);
	free(p->timepath);
	free(p->lockpath);
	free(p->ninjalog);
	buffree(&p->part);
	memset(p, 0, sizeof *p);
	p->logrd = p->disp = p->lockfd = -1;
}
