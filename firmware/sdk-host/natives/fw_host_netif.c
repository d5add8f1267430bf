/*
 * Net.get on a virtual chip: the SDK's net.js with the answers of esp_netif and the Wi-Fi driver
 * (modules/network/net/esp/modNet.c on the chip) from the chip's Node side, instead of the Linux
 * host's own interfaces (net/lin/modNet.c).
 */
#include "fw_host.h"

void xs_net_get(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, (xsmcArgc > 1) ? xsmcToString(xsArg(1)) : "");
	fwCall(the, FW_CALL_NET_GET, &out, &in);
	if (!fwInBool(&in))
		return;
	const char *value = fwInString(&in);
	xsmcSetString(xsResult, (char *)value);
}
