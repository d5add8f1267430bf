/*
 * The natives of the SDK's `ethernet` module (modules/network/ethernet/ethernet.js, unchanged) on a
 * virtual chip: the W5500 and its netif are the chip's Node side; monitors get what ethernet.c
 * reports ("start", "connect", "disconnect", "gotIP").
 */
#include "fw_host.h"
#include "mc.xs.h"
#include <string.h>

typedef struct fwEthernetRecord fwEthernetRecord;
typedef fwEthernetRecord *fwEthernet;

struct fwEthernetRecord {
	fwEthernet next;
	xsSlot obj;
	uint8_t haveCallback;
};

static fwEthernet gMonitors = NULL;
static uint8_t gStarted = 0;

void xs_ethernet_start(xsMachine *the)
{
	if (fwCall(NULL, FW_CALL_ETHERNET_START, NULL, NULL))
		xsUnknownError("Ethernet.c Ethernet device not found");
	gStarted = 1;
}

void xs_ethernet_useStaticIP(xsMachine *the)
{
	fwOut out = {0};
	if (!gStarted)
		xsUnknownError("Ethernet not initialized");
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwOutString(&out, xsmcToString(xsArg(2)));
	fwCall(the, FW_CALL_ETHERNET_USE_STATIC_IP, &out, NULL);
	xsmcSetInteger(xsResult, 0);
}

void xs_ethernet_useDHCP(xsMachine *the)
{
	if (!gStarted)
		xsUnknownError("Ethernet not initialized");
	fwCall(the, FW_CALL_ETHERNET_USE_DHCP, NULL, NULL);
	xsmcSetInteger(xsResult, 0);
}

static void onNotify(xsMachine *the, fwIn *fields)
{
	const char *message = fwInString(fields);
	fwEthernet walker, next;
	for (walker = gMonitors; walker; walker = next) {
		next = walker->next;
		xsBeginHost(the);
		xsTry {
			xsCall1(walker->obj, xsID_callback, xsString((char *)message));
		}
		xsCatch {
		}
		xsEndHost(the);
	}
}

void xs_ethernet_destructor(void *data)
{
	fwEthernet ethernet = data, *walker;
	if (!ethernet) return;
	for (walker = &gMonitors; *walker; walker = &(*walker)->next) {
		if (*walker == ethernet) {
			*walker = ethernet->next;
			break;
		}
	}
	c_free(ethernet);
}

void xs_ethernet_constructor(xsMachine *the)
{
	fwOnEvent(FW_EVENT_ETHERNET_NOTIFY, onNotify);
	if (1 == xsmcArgc)
		xsCall1(xsThis, xsID_build, xsArg(0));
	else if (2 == xsmcArgc)
		xsCall2(xsThis, xsID_build, xsArg(0), xsArg(1));
}

void xs_ethernet_close(xsMachine *the)
{
	fwEthernet ethernet = xsmcGetHostData(xsThis);
	if (ethernet && ethernet->haveCallback)
		xsForget(ethernet->obj);
	xs_ethernet_destructor(ethernet);
	xsmcSetHostData(xsThis, NULL);
}

void xs_ethernet_set_onNotify(xsMachine *the)
{
	fwEthernet ethernet = xsmcGetHostData(xsThis);
	fwOnEvent(FW_EVENT_ETHERNET_NOTIFY, onNotify);
	if (NULL == ethernet) {
		ethernet = c_calloc(1, sizeof(fwEthernetRecord));
		if (!ethernet)
			xsUnknownError("out of memory");
		xsmcSetHostData(xsThis, ethernet);
		ethernet->obj = xsThis;
	}
	else if (ethernet->haveCallback) {
		xsmcDelete(xsThis, xsID_callback);
		ethernet->haveCallback = 0;
		xsForget(ethernet->obj);
	}
	if (!xsmcTest(xsArg(0)))
		return;
	ethernet->haveCallback = 1;
	xsRemember(ethernet->obj);
	fwEthernet walker;
	for (walker = gMonitors; walker && (walker != ethernet); walker = walker->next)
		;
	if (!walker) {
		ethernet->next = gMonitors;
		gMonitors = ethernet;
	}
	xsmcSet(xsThis, xsID_callback, xsArg(0));
}
