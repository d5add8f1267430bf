/*
 * Restart, the factory MACs, why the last run ended and the heaps of a virtual chip (native/fw_system.c
 * on the chip: esp_restart, esp_read_mac, esp_reset_reason with RTC no-init memory, heap_caps). A
 * restart ends this process: the chip's Node side runs the ROM and the bootloader again, as
 * esp_restart does, and keeps what RTC memory would (firmware/virtual-esp32/rtc-memory.ts).
 */
#include "xsAll.h"	/* before xsmc.h: the machine's heap counters (txMachine) */
#include "fw_host.h"
#include <malloc.h>
#include <unistd.h>

/* The exit status the Node side reads as esp_restart (an abort is 64 + XS's status). */
#define kRestartExit 3

/*
 * The chip's own heap, as a virtual chip models it: what an ESP32-S3 with Wi-Fi and lwIP started has
 * free (about 200 KB of its 512 KB SRAM; the XS heaps are allocated before this), less what this
 * process's C side has allocated since it started (mallinfo2: the sockets' windows, TLS, the
 * natives' buffers). No fragmentation is modelled: the largest free block is the free heap.
 */
#define kChipFreeAtStart (200 * 1024)

static size_t gMallocAtStart = 0;
static int32_t gMinFree = kChipFreeAtStart;

__attribute__((constructor)) static void fwHostHeapStart(void)
{
	gMallocAtStart = mallinfo2().uordblks;
}

static int32_t chipFree(void)
{
	size_t used = mallinfo2().uordblks;
	int32_t grown = (used > gMallocAtStart) ? (int32_t)(used - gMallocAtStart) : 0;
	int32_t free = kChipFreeAtStart - grown;
	if (free < 0)
		free = 0;
	if (free < gMinFree)
		gMinFree = free;
	return free;
}

/* Set by the loader: copies what is still on the way out of the UART (esp_restart waits for its FIFO). */
void (*fwHostBeforeExit)(void) = NULL;

void xs_fw_restart(xsMachine *the)
{
	fwOut out = {0};
	fwOutString(&out, (xsmcArgc > 0) ? xsmcToString(xsArg(0)) : "esp_restart");
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

/* [reason, by, crash kind, crash message, crash where]: '' where there is none. */
void xs_fw_last_run(xsMachine *the)
{
	fwIn in;
	int i;
	fwCall(the, FW_CALL_LAST_RUN, NULL, &in);
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 5);
	for (i = 0; i < 5; i++) {
		xsmcSetString(xsVar(0), (char *)fwInString(&in));
		xsmcSetIndex(xsResult, i, xsVar(0));
	}
}

/* The abort hook: kind, message, where (strings read in place: nothing is allocated while the heap may be full). */
void xs_fw_note_crash(xsMachine *the)
{
	fwOut out = {0};
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwOutString(&out, xsmcToString(xsArg(2)));
	fwCall(the, FW_CALL_NOTE_CRASH, &out, NULL);
}

/* [chunk, chunk peak, slots, slot peak, largest free block, lowest free heap]; XS's peaks start again. */
void xs_fw_heap(xsMachine *the)
{
	txMachine *machine = (txMachine *)the;
	int32_t figures[6];
	int i;
	figures[0] = (int32_t)machine->currentChunksSize;
	figures[1] = (int32_t)machine->peakChunksSize;
	figures[2] = (int32_t)machine->currentHeapCount;
	figures[3] = (int32_t)machine->peakHeapCount;
	figures[4] = chipFree();
	figures[5] = gMinFree;
	machine->peakChunksSize = machine->currentChunksSize;
	machine->peakHeapCount = machine->currentHeapCount;
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 6);
	for (i = 0; i < 6; i++) {
		xsmcSetInteger(xsVar(0), figures[i]);
		xsmcSetIndex(xsResult, i, xsVar(0));
	}
}
