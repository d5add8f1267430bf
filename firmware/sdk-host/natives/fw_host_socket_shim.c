/*
 * The network stack's view of the virtual air, under the SDK's Linux sockets (socket/lin/modSocket.c,
 * unchanged): the link editor routes its bind, connect and sendto here (-Wl,--wrap=…, the build's
 * LIBRARIES in ../manifest.json). On a chip, lwIP has one address per interface and a socket leaves from
 * the interface that reaches its destination; here every interface is a loopback address of the host,
 * so the chip's Node side says which:
 * - a listener binds the address its dictionary named (modules/socket.js hands it over just before),
 *   on a port of its own instead of 80, the same one after a restart (the board's Node side keeps it,
 *   and says it on the console), never the host's other addresses; and its close is said too, so the
 *   board knows its interface no longer answers (as a station of a SoftAP that went down would);
 * - a TCP connection leaves from the address of the interface that reaches its destination (a
 *   SoftAP's board tells its stations apart by it), or fails with ENETUNREACH when none does (a
 *   station not associated, Ethernet without a link);
 * - a UDP datagram likewise, and the virtual network may deliver it elsewhere (the NTP server the
 *   board's clock talks to is the Node side's, not port 123).
 */
#include "fw_host.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int __real_bind(int fd, const struct sockaddr *address, socklen_t length);
int __real_close(int fd);
int __real_connect(int fd, const struct sockaddr *address, socklen_t length);
ssize_t __real_sendto(int fd, const void *buffer, size_t size, int flags, const struct sockaddr *address, socklen_t length);

static char gListenOn[INET_ADDRSTRLEN] = "";

void xs_fw_host_listen_on(xsMachine *the)
{
	const char *address = xsmcToString(xsArg(0));
	if (strlen(address) >= sizeof(gListenOn))
		xsUnknownError("invalid address");
	strcpy(gListenOn, address);
}

static int socketType(int fd)
{
	int type = 0;
	socklen_t size = sizeof(type);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size);
	return type;
}

int __wrap_bind(int fd, const struct sockaddr *address, socklen_t length)
{
	if (address->sa_family != AF_INET)
		return __real_bind(fd, address, length);
	struct sockaddr_in local = *(const struct sockaddr_in *)address;
	int listener = (SOCK_STREAM == socketType(fd)) && gListenOn[0];
	if (listener) {
		fwOut out = {0};
		fwIn in;
		if (1 != inet_pton(AF_INET, gListenOn, &local.sin_addr)) {
			gListenOn[0] = 0;
			errno = EADDRNOTAVAIL;
			return -1;
		}
		fwOutString(&out, gListenOn);
		if (fwCall(NULL, FW_CALL_SOCKET_LISTEN_PORT, &out, &in)) {
			gListenOn[0] = 0;
			errno = EADDRNOTAVAIL;
			return -1;
		}
		local.sin_port = htons((uint16_t)fwInInt(&in));
	}
	else if (INADDR_ANY == local.sin_addr.s_addr)
		local.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* nothing of a board listens beyond the loopback */
	int result = __real_bind(fd, (struct sockaddr *)&local, sizeof(local));
	if (listener) {
		char name[INET_ADDRSTRLEN];
		struct sockaddr_in bound;
		socklen_t size = sizeof(bound);
		strcpy(name, gListenOn);
		gListenOn[0] = 0;
		if ((0 == result) && (0 == getsockname(fd, (struct sockaddr *)&bound, &size))) {
			fwOut out = {0};
			fwOutString(&out, name);
			fwOutInt(&out, ntohs(bound.sin_port));
			fwCall(NULL, FW_CALL_SOCKET_LISTENING, &out, NULL);
		}
	}
	return result;
}

/* Asks the chip where a packet to `to` goes and from which address; 0, or -1 with errno. */
static int route(int kind, const struct sockaddr_in *to, struct sockaddr_in *source, struct sockaddr_in *delivered)
{
	char name[INET_ADDRSTRLEN];
	fwOut out = {0};
	fwIn in;
	inet_ntop(AF_INET, &to->sin_addr, name, sizeof(name));
	fwOutInt(&out, kind);
	fwOutString(&out, name);
	fwOutInt(&out, ntohs(to->sin_port));
	if (fwCall(NULL, FW_CALL_SOCKET_ROUTE, &out, &in)) {
		errno = ENETUNREACH;
		return -1;
	}
	memset(source, 0, sizeof(*source));
	source->sin_family = AF_INET;
	*delivered = *to;
	if ((1 != inet_pton(AF_INET, fwInString(&in), &source->sin_addr)) || (1 != inet_pton(AF_INET, fwInString(&in), &delivered->sin_addr))) {
		errno = ENETUNREACH;
		return -1;
	}
	delivered->sin_port = htons((uint16_t)fwInInt(&in));
	return 0;
}

/* Binds an unbound socket to the source address (any port), as lwIP picks the interface's address. */
static int bindSource(int fd, const struct sockaddr_in *source)
{
	struct sockaddr_in bound;
	socklen_t size = sizeof(bound);
	if ((0 == getsockname(fd, (struct sockaddr *)&bound, &size)) && bound.sin_port)
		return 0;
	return __real_bind(fd, (const struct sockaddr *)source, sizeof(*source));
}

int __wrap_connect(int fd, const struct sockaddr *address, socklen_t length)
{
	struct sockaddr_in source, delivered;
	if (address->sa_family != AF_INET)
		return __real_connect(fd, address, length);
	if (route(0, (const struct sockaddr_in *)address, &source, &delivered) || bindSource(fd, &source))
		return -1;
	return __real_connect(fd, (struct sockaddr *)&delivered, sizeof(delivered));
}

ssize_t __wrap_sendto(int fd, const void *buffer, size_t size, int flags, const struct sockaddr *address, socklen_t length)
{
	struct sockaddr_in source, delivered;
	if (!address || address->sa_family != AF_INET)
		return __real_sendto(fd, buffer, size, flags, address, length);
	if (route(1, (const struct sockaddr_in *)address, &source, &delivered) || bindSource(fd, &source))
		return -1;
	return __real_sendto(fd, buffer, size, flags, (struct sockaddr *)&delivered, sizeof(delivered));
}

/* A listening TCP socket's close: its address is said to the chip (FW_CALL_SOCKET_UNLISTENED). */
int __wrap_close(int fd)
{
	int accepting = 0;
	socklen_t size = sizeof(accepting);
	struct sockaddr_in bound;
	socklen_t boundSize = sizeof(bound);
	char name[INET_ADDRSTRLEN] = "";
	if ((0 == getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size)) && accepting
		&& (0 == getsockname(fd, (struct sockaddr *)&bound, &boundSize)) && (AF_INET == bound.sin_family))
		inet_ntop(AF_INET, &bound.sin_addr, name, sizeof(name));
	int result = __real_close(fd);
	if (name[0]) {
		fwOut out = {0};
		fwOutString(&out, name);
		fwCall(NULL, FW_CALL_SOCKET_UNLISTENED, &out, NULL);
	}
	return result;
}
