/*
 * The SDK's Linux sockets (modules/network/socket/lin/modSocket.c), compiled here, unchanged, with one
 * difference beneath them: the memory they free is given back 100 ms later instead of at once.
 *
 * Why: modSocket.c polls its sockets every 20 ms and posts each readable one's report as a GLib
 * timeout of 1 ms (modMessagePostToMachine). When the main loop was busy for longer than a poll,
 * two reports of the same socket are queued; the first may end with the socket closed and its record
 * freed (the peer's FIN, the HTTP server's close), and the second then reads the freed record: the
 * firmware crashes in fxGetHostDestructor (seen on the bench: SIGSEGV, socketReadable). Freed late, the
 * second report finds the record as the first left it (`done`) and returns, as the SDK means it to.
 * No report outlives its 1 ms timeout by 100 ms while the loop runs. On the chip the lwIP version
 * (socket/lwip/modSocket.c) is what runs; this one never does.
 */
#include "xsmc.h"
#include <glib.h>

/*
 * The keys modSocket.c uses, named here for xsid, which reads this file and not the one it includes:
 * xsID_ArrayBuffer xsID_Number xsID_String xsID_callback xsID_host xsID_kind xsID_listener
 * xsID_multicast xsID_port xsID_protocol xsID_ttl
 */

static GSList *gFreshlyFreed = NULL;
static GSList *gToFree = NULL;
static guint gSweep = 0;

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

static void fwSocketFree(void *data)
{
	if (!data) return;
	gFreshlyFreed = g_slist_prepend(gFreshlyFreed, data);
	if (!gSweep)
		gSweep = g_timeout_add(100, sweep, NULL);
}

#undef c_free
#define c_free fwSocketFree
#include "modSocket.c"
