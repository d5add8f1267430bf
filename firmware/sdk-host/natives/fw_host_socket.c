/*
 * The SDK's Linux sockets (modules/network/socket/lin/modSocket.c), compiled here, unchanged, with what
 * lies beneath them made to behave as lwIP does on the chip. On the chip the lwIP version
 * (socket/lwip/modSocket.c) is what runs; this one never does. Each difference was seen on the bench
 * (docs/moddable-emulation.md, "The SDK's Linux sockets"):
 *
 * 1. Received bytes wait until the firmware reads them. modSocket.c reads at most 1 KB a report and
 *    forgets what the callback did not read; lwIP keeps a segment until it is read, and the firmware
 *    relies on that: a request body is pulled when the core asks for it (http-connection.ts). Here a
 *    socket's report reads into a receive window (lwIP's default TCP window, 5,760 bytes) that stays
 *    readable between reports; while it is full nothing more is read and the peer waits, as lwIP's
 *    closed window makes it. (Seen: a 1.1 KB PUT whose last 20 bytes came in a report the connection
 *    was not yet pulling answered 408 body_timeout.)
 * 2. A read never waits. A report is posted for each poll that finds a socket readable, so a busy
 *    loop queues two for the same bytes; the second recv() waited on a blocking socket and the firmware
 *    hung (the task watchdog reset a source in recv). A connection reset reads as the peer closing it.
 * 3. A write to a peer that is gone drops the bytes, as lwIP does (its xs_socket_write traces "write
 *    on closed socket" and returns), instead of throwing "write failed" out of whatever callback wrote
 *    (a target whose source shut its SoftAP down aborted: "unhandled exception write failed").
 * 4. The pace of the polls. modSocket.c looks at its sockets every 20 ms and at a listener every 50 ms
 *    (one accept): 50 KB/s and 20 connections a second, where lwIP reports each segment as it comes
 *    (a 1 MB OTA download took 20 s). Its timers of 20 ms and more are polls that quicken to 1 ms while
 *    they find something and slow down again, doubling, to the SDK's interval when nothing happens.
 * 5. Freed memory is given back 100 ms late. Two reports of one socket may be queued; the first may
 *    end with the record freed (the peer's FIN), and the second read the freed record (SIGSEGV in
 *    fxGetHostDestructor). Freed late, the second finds the record as the first left it (`done`).
 *    And a report never releases a socket outside XS: modSocket.c's reports drop their hold on the
 *    record after the callback, outside any host frame, by reading the destructor of the record's
 *    object; when the firmware closed the socket in the callback and a collection then freed its
 *    object, that read threw with no frame to catch it (SIGSEGV in fxCaptureErrorStack, found by the
 *    device fuzz). Each report here holds the record once more, and its last release happens in a
 *    host frame, or not at all when the collection already freed the record.
 * 6. A connection accepted just before its listener closed is closed too. modSocket.c posts each
 *    accepted connection as a report; a listener closed meanwhile (provisioning mode ending, which
 *    closes the SoftAP's server) left the report calling the closed listener's forgotten object (XS
 *    abort: "xsGetHostData: not a host object", found by the device fuzz). lwIP aborts the pending
 *    connections of a listener it closes.
 * 7. The peer's FIN is reported once the bytes before it are read, as lwIP does (modSocket.c's
 *    disconnectedWhileReading). Reported at once, it ended a response the firmware was still reading
 *    at its own pace (a backup download whose sender had sent everything and closed, while the
 *    board wrote the last window to flash), and http.js or the exchange took the missing bytes for
 *    a cut connection. Until they are read, each poll finds the socket readable and leaves it so.
 */
#include "xsmc.h"
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * The keys modSocket.c uses, named here for xsid, which reads this file and not the one it includes:
 * xsID_ArrayBuffer xsID_Number xsID_String xsID_callback xsID_host xsID_kind xsID_listener
 * xsID_multicast xsID_port xsID_protocol xsID_ttl
 */

/* 1. lwIP's TCP_WND on ESP-IDF (CONFIG_LWIP_TCP_WND_DEFAULT). */
#define kReceiveWindow 5760

/* One byte more, a NUL after the bytes: xs_socket_read looks for a line's end with strchr. */
typedef struct {
	uint8_t bytes[kReceiveWindow + 1];
} fwInbox;

/* Each TCP socket record's receive window, by record. */
static GHashTable *gInboxes = NULL;

/* 5. */
static GSList *gFreshlyFreed = NULL;
static GSList *gToFree = NULL;
static guint gSweep = 0;

/* 5. Freed by the firmware or a collection, and not yet given back. */
static int fwSocketFreed(void *data)
{
	return (NULL != g_slist_find(gFreshlyFreed, data)) || (NULL != g_slist_find(gToFree, data));
}

/* Everything freed before the previous sweep goes now; what was freed since waits for the next. */
static gboolean sweep(gpointer data)
{
	g_slist_free_full(gToFree, free);
	gToFree = gFreshlyFreed;
	gFreshlyFreed = NULL;
	if (gToFree)
		return G_SOURCE_CONTINUE;
	gSweep = 0;
	return G_SOURCE_REMOVE;
}

/* 6. The listeners open now (a record's poll started, and it is not freed). */
static GHashTable *gListeners = NULL;

static void fwSocketFree(void *data)
{
	if (!data) return;
	if (gListeners)
		g_hash_table_remove(gListeners, data);
	if (gInboxes)
		g_hash_table_remove(gInboxes, data); /* a socket record: its window goes with it */
	gFreshlyFreed = g_slist_prepend(gFreshlyFreed, data);
	if (!gSweep)
		gSweep = g_timeout_add(100, sweep, NULL);
}

/* 2. A datagram's read (SNTP) does not wait either. */
static ssize_t fwSocketRecvFrom(int fd, void *buffer, size_t size, int flags, struct sockaddr *from, socklen_t *length)
{
	return recvfrom(fd, buffer, size, flags | MSG_DONTWAIT, from, length);
}

/* 3. */
static ssize_t fwSocketSend(int fd, const void *buffer, size_t size, int flags)
{
	ssize_t sent = send(fd, buffer, size, flags | MSG_NOSIGNAL);
	/* ECONNREFUSED: a connection still being made when its peer's listener went (a source's SoftAP
	 * shut down) reports the refusal on the first send; lwIP reports it through the connection's error
	 * callback ("connection failed"), which the next poll here does too. */
	if ((sent < 0) && ((EPIPE == errno) || (ECONNRESET == errno) || (ENOTCONN == errno) || (ECONNREFUSED == errno))) {
		fprintf(stdout, "write on closed socket\n");
		fflush(stdout);
		return (ssize_t)size;
	}
	return sent;
}

/* 4. Whether the poll running now found a socket ready or a connection waiting. */
static int gPollFound = 0;

static int fwSocketSelect(int count, fd_set *readable, fd_set *writable, fd_set *failed, struct timeval *wait)
{
	int result = select(count, readable, writable, failed, wait);
	if (result > 0)
		gPollFound = 1;
	return result;
}

static int fwSocketAccept(int fd, struct sockaddr *address, socklen_t *length)
{
	int result = accept(fd, address, length);
	if (result >= 0)
		gPollFound = 1;
	return result;
}

/* modSocket.c's g_timeout_add (defined after it, where its reports can be told apart). */
static guint fwSocketTimeoutAdd(guint intervalMs, GSourceFunc callback, gpointer data);

#undef c_free
#define c_free fwSocketFree
#define send fwSocketSend
#define recvfrom fwSocketRecvFrom
#define select fwSocketSelect
#define accept fwSocketAccept
#define g_timeout_add fwSocketTimeoutAdd
#include "modSocket.c"
#undef g_timeout_add
#undef recvfrom

/*
 * 5. A report's release of its hold on a socket record: in a host frame, so that what XS throws is
 * caught; none when a collection freed the record meanwhile. True when the record is still there.
 */
static int fwSocketRelease(void *the, xsSocket xss)
{
	if (fwSocketFreed(xss))
		return 0;
	xsBeginHost(the);
		socketDownUseCount(the, xss);
	xsEndHost(the);
	return !fwSocketFreed(xss);
}

/*
 * 1 and 2. A TCP socket's report: what is left unread moves to the front of the window, the kernel's
 * bytes fill the rest without waiting, and the window stays the socket's read buffer until the next
 * report, so xs_socket_read finds it whenever the firmware reads.
 */
static void fwSocketReadable(void *the, void *refcon, uint8_t *message, uint16_t messageLength)
{
	xsSocket xss = (xsSocket)refcon;
	if (xss->done)
		return;
	if (kTCP != xss->kind) {
		/* A datagram (SNTP): modSocket.c's own report, held (5). */
		socketUpUseCount(the, xss);
		socketReadable(the, refcon, message, messageLength);
		fwSocketRelease(the, xss);
		return;
	}
	if (!gInboxes)
		gInboxes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	fwInbox *inbox = g_hash_table_lookup(gInboxes, xss);
	if (!inbox) {
		inbox = g_new(fwInbox, 1);
		g_hash_table_insert(gInboxes, xss, inbox);
	}
	int32_t unread = (xss->readBuffer && (xss->readBytes > 0)) ? xss->readBytes : 0;
	if (unread && (xss->readBuffer != inbox->bytes))
		memmove(inbox->bytes, xss->readBuffer, unread);
	inbox->bytes[unread] = 0;
	xss->readBuffer = inbox->bytes;
	xss->readBytes = unread;
	if (unread >= kReceiveWindow)
		return; /* the window is full: the peer waits until the firmware reads */

	ssize_t count = recv(xss->skt, inbox->bytes + unread, kReceiveWindow - unread, MSG_DONTWAIT);
	if ((count < 0) && ((EAGAIN == errno) || (EWOULDBLOCK == errno) || (EINTR == errno)))
		return; /* a second report of bytes the first one read */
	if ((0 == count) && unread)
		return; /* 7. the peer's FIN behind bytes the firmware has not read yet */

	socketUpUseCount(the, xss);
	if (count <= 0) {
		/* The peer closed the connection or reset it: as modSocket.c reports a close. */
		xsBeginHost(the);
			xsCall1(xss->obj, xsID_callback, xsInteger(kSocketMsgDisconnect));
		xsEndHost(the);
		if (fwSocketRelease(the, xss))
			doDestructor(xss);
		return;
	}
	modInstrumentationAdjust(NetworkBytesRead, count);
	xss->readBytes = unread + (int32_t)count;
	inbox->bytes[xss->readBytes] = 0;
	xsBeginHost(the);
		xsCall2(xss->obj, xsID_callback, xsInteger(kSocketMsgDataReceived), xsInteger(xss->readBytes));
	xsEndHost(the);
	fwSocketRelease(the, xss);
}

/* 5. modSocket.c's connected and writable reports, holding the record once more (fwSocketRelease). */
static void fwSocketHeldReport(void *the, void *refcon, uint8_t *message, uint16_t messageLength, modMessageDeliver deliver)
{
	xsSocket xss = (xsSocket)refcon;
	if (fwSocketFreed(xss) || xss->done)
		return;
	socketUpUseCount(the, xss);
	(*deliver)(the, refcon, message, messageLength);
	fwSocketRelease(the, xss);
}

static void fwSocketConnected(void *the, void *refcon, uint8_t *message, uint16_t messageLength)
{
	fwSocketHeldReport(the, refcon, message, messageLength, socketConnected);
}

static void fwSocketWritable(void *the, void *refcon, uint8_t *message, uint16_t messageLength)
{
	fwSocketHeldReport(the, refcon, message, messageLength, socketWritable);
}

/* 6. */
static void fwListenerConnected(void *the, void *refcon, uint8_t *message, uint16_t messageLength)
{
	xsListenerConnection xslc = (xsListenerConnection)message;
	if (!gListeners || !g_hash_table_contains(gListeners, xslc->xsl)) {
		close(xslc->skt);
		return;
	}
	listenerConnected(the, refcon, message, messageLength);
}

typedef struct {
	GSource source;
	guint slowMs;
	guint currentMs;
} fwPollSource;

static gboolean fwPollDispatch(GSource *source, GSourceFunc callback, gpointer data)
{
	fwPollSource *poll = (fwPollSource *)source;
	gPollFound = 0;
	if (!callback || !(*callback)(data))
		return G_SOURCE_REMOVE;
	poll->currentMs = gPollFound ? 1 : MIN(poll->currentMs * 2, poll->slowMs);
	g_source_set_ready_time(source, g_source_get_time(source) + (gint64)poll->currentMs * 1000);
	return G_SOURCE_CONTINUE;
}

static GSourceFuncs gPollFuncs = { NULL, NULL, fwPollDispatch, NULL, NULL, NULL };

/*
 * 4. Its polls (20 and 50 ms) adapt; the id it keeps is the source's for its whole life, so its
 * g_source_remove ends the poll. Its 1 ms reports stay as they are, a TCP socket's readable report
 * going to fwSocketReadable (1).
 */
static guint fwSocketTimeoutAdd(guint intervalMs, GSourceFunc callback, gpointer data)
{
	if (intervalMs < 20) {
		if ((modMessageCallback == callback) && data && (socketReadable == ((modMessage)data)->callback))
			((modMessage)data)->callback = fwSocketReadable;
		if ((modMessageCallback == callback) && data && (listenerConnected == ((modMessage)data)->callback))
			((modMessage)data)->callback = fwListenerConnected;
		if ((modMessageCallback == callback) && data && (socketConnected == ((modMessage)data)->callback))
			((modMessage)data)->callback = fwSocketConnected;
		if ((modMessageCallback == callback) && data && (socketWritable == ((modMessage)data)->callback))
			((modMessage)data)->callback = fwSocketWritable;
		return g_timeout_add(intervalMs, callback, data);
	}
	if (listenerServiceTimerCallback == callback) {
		if (!gListeners)
			gListeners = g_hash_table_new(g_direct_hash, g_direct_equal);
		g_hash_table_add(gListeners, data);
	}
	GSource *source = g_source_new(&gPollFuncs, sizeof(fwPollSource));
	fwPollSource *poll = (fwPollSource *)source;
	poll->slowMs = intervalMs;
	poll->currentMs = 1;
	g_source_set_callback(source, callback, data, NULL);
	g_source_set_ready_time(source, g_get_monotonic_time() + 1000);
	guint id = g_source_attach(source, NULL);
	g_source_unref(source);
	return id;
}
