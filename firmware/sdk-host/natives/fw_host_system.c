/*
 * Restart and the factory MACs of a virtual chip (native/fw_system.c on the chip: esp_restart,
 * esp_read_mac). A restart ends this process: the chip's Node side runs the ROM and the bootloader
 * again, as esp_restart does.
 */
#include "fw_host.h"
#include <unistd.h>

/* The exit status the Node side reads as esp_restart (an abort is 64 + XS's status). */
#define kRestartExit 3

/* Set by the loader: copies what is still on the way out of the UART (esp_restart waits for its FIFO). */
void (*fwHostBeforeExit)(void) = NULL;

void xs_fw_restart(xsMachine *the)
{
	fwOut out = {0};
	fwOutString(&out, "esp_restart");
	fwCall(the, FW_CALL_RESTART, &out, NULL);
	if (fwHostBeforeExit)
		(*fwHostBeforeExit)();
	fflush(stdout);
	_exit(kRestartExit);
}

void xs_fw_mac_address(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	uint32_t n;
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwCall(the, FW_CALL_MAC_ADDRESS, &out, &in);
	const uint8_t *mac = fwInBytes(&in, &n);
	xsmcSetArrayBuffer(xsResult, (void *)mac, n);
}
