/* kiln-stage netguard LOG: the proxy a build stage's http_proxy, https_proxy and
   ALL_PROXY point at, so that a build reaching for the network is seen and fails.
   It listens on a free loopback port, says the port on stdout (one line, then closes
   stdout: the step reads it from a FIFO, no waiting on a clock), and answers every
   request with 403 after appending its first line ("CONNECT github.com:443 HTTP/1.1",
   "GET http://host/path HTTP/1.1") to LOG. It ends with its parent (the step's shell)
   or on SIGTERM. */
#include "netguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

#define REQMAX 2048

static const char refusal[] =
	"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
	"Content-Length: 58\r\n\r\n"
	"kiln: no network inside a build stage (kiln-stage netguard)";

/* the request's first line (printable bytes only) read from fd, at most 5 s: a client
   that sends nothing (a SOCKS greeting, a raw connect) is recorded as such */
static void
reqline(int fd, char *line, size_t n)
{
	struct pollfd p = {fd, POLLIN, 0};
	size_t got = 0, i, o = 0;
	ssize_t r;

	while (got < n - 1 && poll(&p, 1, 5000) == 1) {
		r = read(fd, line + got, n - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(line, '\n', got))
			break;
	}
	for (i = 0; i < got && line[i] != '\r' && line[i] != '\n'; i++)
		if ((unsigned char)line[i] >= 0x20 && (unsigned char)line[i] < 0x7f)
			line[o++] = line[i];
	line[o] = '\0';
	if (!o)
		snprintf(line, n, "RAW a client that spoke no HTTP (SOCKS, or a raw connection)");
}

/* listen on 127.0.0.1, port chosen by the kernel; returns the socket, *port set */
static int
listenlo(unsigned *port)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("netguard: socket:");
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 64) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0)
		die("netguard: cannot listen on 127.0.0.1:");
	*port = ntohs(a.sin_port);
	return s;
}

int
netguard_main(int argc, char **argv)
{
	char line[REQMAX];
	unsigned port;
	pid_t parent = getppid();
	int s, c, log, null;

	if (argc != 2 || argv[1][0] == '-')
		dien(EXIT_USAGE, "usage: kiln-stage netguard LOG");
	log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (log < 0)
		dien(EXIT_USAGE, "netguard: %s:", argv[1]);
	s = listenlo(&port);
	/* end with the step's shell, even when it is killed */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		return EXIT_OK;
	signal(SIGPIPE, SIG_IGN);
	printf("%u\n", port);
	if (fflush(stdout) == EOF)
		die("netguard: stdout:");
	if ((null = open("/dev/null", O_WRONLY)) >= 0) {
		dup2(null, 1);
		close(null);
	}
	for (;;) {
		c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("netguard: accept:");
		}
		reqline(c, line, sizeof line);
		dprintf(log, "%s\n", line);
		if (write(c, refusal, sizeof refusal - 1) < 0) {
			/* the client went away first: its request is recorded all the same */
		}
		close(c);
	}
}
