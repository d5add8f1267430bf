/*
 * The chip itself, for hal/system.ts and hal/radio.ts.
 *
 * ESP-IDF: esp_restart (esp_system.h); esp_read_mac (esp_mac.h) with ESP_MAC_BASE (the factory MAC
 * in eFuse BLK0, unique per chip), ESP_MAC_WIFI_STA, ESP_MAC_WIFI_SOFTAP (the SoftAP's BSSID, known
 * before the AP starts: Net.get("MAC", "ap") answers only while it is up) and ESP_MAC_ETH (the MAC
 * the W5500 is given: it has none of its own).
 *
 * Why the last run ended (docs/device-health.md): esp_reset_reason, and what this file keeps in RTC
 * no-init memory (RTC_NOINIT_ATTR: kept across every reset but a power cycle, never initialised by
 * the startup code): who asked for a software restart (xs_fw_restart), and the crash the firmware's
 * abort hook noted just before XS aborted (xs_fw_note_crash, main.ts). A record is trusted only with
 * its magic and its CRC: at power-on the memory holds noise. An XS abort ends in exit() (mc's
 * fxAbort), which ESP-IDF turns into abort(), a panic: ESP_RST_PANIC with a noted crash is an abort
 * of XS; without one, a panic of native code, summarised from the core dump where one is kept
 * (CONFIG_ESP_COREDUMP_ENABLE_TO_FLASH).
 * The heaps (heartbeats): XS's own counters (xs/sources/xsMemory.c, the same the virtual chip reads)
 * and heap_caps_get_largest_free_block / esp_get_minimum_free_heap_size for the chip's own heap.
 */
#include "xsAll.h"	/* before xsmc.h: the machine's heap counters (txMachine) */
#include "xsmc.h"
#include "xsHost.h"
#include "sdkconfig.h"
#include "esp_attr.h"
#include "esp_heap_caps.h"
#include "esp_system.h"
#include "esp_mac.h"
#include "esp_rom_crc.h"
#if CONFIG_ESP_COREDUMP_ENABLE_TO_FLASH
#include "esp_core_dump.h"
#endif
#include <stdio.h>

#define kRtcMagic 0x46574852	/* "FWHR" */

typedef struct {
	uint32_t magic;
	uint32_t crc;		/* esp_rom_crc32_le of what follows */
	char by[64];
	char kind[24];
	char message[1024];
	char where[120];
} fwRtcRecord;

RTC_NOINIT_ATTR static fwRtcRecord gRtc;

/* What the last run left, read once at the first call (the record is cleared then). */
static int gLastRead = 0;
static const char *gLastReason = "unknown";
static fwRtcRecord gLast;

static uint32_t rtcCrc(void)
{
	return esp_rom_crc32_le(0, (const uint8_t *)gRtc.by, sizeof(gRtc) - offsetof(fwRtcRecord, by));
}

static void rtcSeal(void)
{
	gRtc.magic = kRtcMagic;
	gRtc.crc = rtcCrc();
}

static void copyString(char *to, size_t size, const char *from)
{
	c_strncpy(to, from, size - 1);
	to[size - 1] = 0;
}

void xs_fw_restart(xsMachine *the)
{
	c_memset(&gRtc, 0, sizeof(gRtc));
	if (xsmcArgc > 0)
		copyString(gRtc.by, sizeof(gRtc.by), xsmcToString(xsArg(0)));
	rtcSeal();
	esp_restart();
}

/* The abort hook: strings read in place, nothing allocated (the heap may be full). */
void xs_fw_note_crash(xsMachine *the)
{
	c_memset(&gRtc, 0, sizeof(gRtc));
	copyString(gRtc.kind, sizeof(gRtc.kind), xsmcToString(xsArg(0)));
	copyString(gRtc.message, sizeof(gRtc.message), xsmcToString(xsArg(1)));
	copyString(gRtc.where, sizeof(gRtc.where), xsmcToString(xsArg(2)));
	rtcSeal();
}

static void readLastRun(void)
{
	int kept = (kRtcMagic == gRtc.magic) && (gRtc.crc == rtcCrc());

	c_memset(&gLast, 0, sizeof(gLast));
	if (kept)
		gLast = gRtc;
	switch (esp_reset_reason()) {
		case ESP_RST_POWERON:
		case ESP_RST_EXT:
			gLastReason = "power_on";
			c_memset(&gLast, 0, sizeof(gLast));	/* RTC memory lost its meaning */
			break;
		case ESP_RST_SW:
			gLastReason = "software";
			break;
		case ESP_RST_PANIC:
			gLastReason = (kept && gLast.kind[0]) ? "abort" : "panic";
			if (!gLast.kind[0]) {
				copyString(gLast.kind, sizeof(gLast.kind), "panic");
#if CONFIG_ESP_COREDUMP_ENABLE_TO_FLASH
				esp_core_dump_summary_t summary;
				if ((ESP_OK == esp_core_dump_image_check()) && (ESP_OK == esp_core_dump_get_summary(&summary)))
					snprintf(gLast.message, sizeof(gLast.message), "panic in task %s at PC 0x%08lx", summary.exc_task, (unsigned long)summary.exc_pc);
#endif
			}
			break;
		case ESP_RST_INT_WDT:
		case ESP_RST_TASK_WDT:
		case ESP_RST_WDT:
			gLastReason = "watchdog";
			break;
		case ESP_RST_BROWNOUT:
			gLastReason = "brownout";
			break;
		case ESP_RST_DEEPSLEEP:
			gLastReason = "deep_sleep";
			break;
		default:
			gLastReason = "unknown";
			break;
	}
	c_memset(&gRtc, 0, sizeof(gRtc));	/* a reset that notes nothing is not taken for this one */
	gLastRead = 1;
}

/* [reason, by, crash kind, crash message, crash where]: '' where there is none. */
void xs_fw_last_run(xsMachine *the)
{
	const char *fields[5];
	int i;

	if (!gLastRead)
		readLastRun();
	fields[0] = gLastReason;
	fields[1] = gLast.by;
	fields[2] = gLast.kind;
	fields[3] = gLast.message;
	fields[4] = gLast.where;
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 5);
	for (i = 0; i < 5; i++) {
		xsmcSetString(xsVar(0), (char *)fields[i]);
		xsmcSetIndex(xsResult, i, xsVar(0));
	}
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
	figures[4] = (int32_t)heap_caps_get_largest_free_block(MALLOC_CAP_8BIT);
	figures[5] = (int32_t)esp_get_minimum_free_heap_size();
	machine->peakChunksSize = machine->currentChunksSize;
	machine->peakHeapCount = machine->currentHeapCount;
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 6);
	for (i = 0; i < 6; i++) {
		xsmcSetInteger(xsVar(0), figures[i]);
		xsmcSetIndex(xsResult, i, xsVar(0));
	}
}

void xs_fw_mac_address(xsMachine *the)
{
	const char *kind = xsmcToString(xsArg(0));
	esp_mac_type_t type = ESP_MAC_BASE;
	uint8_t mac[6];

	if (0 == c_strcmp(kind, "base"))
		type = ESP_MAC_BASE;
	else if (0 == c_strcmp(kind, "station"))
		type = ESP_MAC_WIFI_STA;
	else if (0 == c_strcmp(kind, "softap"))
		type = ESP_MAC_WIFI_SOFTAP;
	else if (0 == c_strcmp(kind, "ethernet"))
		type = ESP_MAC_ETH;
	else
		xsRangeError("MAC kind: base, station, softap or ethernet");
	if (ESP_OK != esp_read_mac(mac, type))
		xsUnknownError("esp_read_mac failed");
	xsmcSetArrayBuffer(xsResult, mac, sizeof(mac));
}
