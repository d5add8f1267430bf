/*
 * The flash chip's own time. A virtual board's flash is a file and a folder, written at the host's
 * speed; the chip's SPI NOR flash (the virtual ROM answers JEDEC 0xC8 0x4017, a GigaDevice GD25Q64C)
 * takes milliseconds to program a page and tens of milliseconds to erase a 4 KB sector, and the CPU
 * that asked waits (ESP-IDF's esp_flash calls return when the chip is done; the cache is off meanwhile).
 * Here the firmware's process waits as long, so that everything else on the board (its sockets, its
 * timers) sees the flash take its time, as on a board (docs/virtual-flash-timing.md).
 *
 * The figures come from the board's Node side (firmware/virtual-esp32/flash-timing.ts), in
 * FW_HOST_FLASH_TIMING="<page program us>,<sector erase us>"; unset, the flash takes no time.
 * What a write costs: every byte is programmed (a 256-byte page at a time) into a sector that was
 * erased before its first byte (LittleFS erases a block when it allocates it; esp_ota_write with
 * OTA_WITH_SEQUENTIAL_WRITES erases each sector as the image reaches it). A file system's metadata
 * commit (create, delete, rename, mkdir, rmdir) costs a page. The time owed is slept once it reaches
 * a millisecond, so many small writes are not many short sleeps.
 */
#include "fw_host.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define kPageBytes 256
#define kSectorBytes 4096

static int gTimed = -1;
static double gUsPerByte = 0;
static double gOwedUs = 0;

static void readTiming(void)
{
	const char *figures = getenv("FW_HOST_FLASH_TIMING");
	double pageUs = 0, sectorUs = 0;
	gTimed = 0;
	if (!figures || (2 != sscanf(figures, "%lf,%lf", &pageUs, &sectorUs)) || (pageUs < 0) || (sectorUs < 0))
		return;
	gUsPerByte = (pageUs / kPageBytes) + (sectorUs / kSectorBytes);
	gTimed = gUsPerByte > 0;
}

void fwFlashProgramTime(uint32_t bytes)
{
	struct timespec wait;
	if (gTimed < 0)
		readTiming();
	if (!gTimed)
		return;
	gOwedUs += gUsPerByte * bytes;
	if (gOwedUs < 1000)
		return;
	wait.tv_sec = (time_t)(gOwedUs / 1000000);
	wait.tv_nsec = (long)((gOwedUs - ((double)wait.tv_sec * 1000000)) * 1000);
	gOwedUs = 0;
	while (nanosleep(&wait, &wait) < 0)
		;
}

void fwFlashMetadataTime(void)
{
	fwFlashProgramTime(kPageBytes);
}
