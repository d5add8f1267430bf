/*
 * The virtual board's natives talk to the board's Node side (the chip beneath: firmware/virtual-esp32/)
 * over two file descriptors the loader inherits:
 *   FW_HOST_CALL_FD   calls, one at a time: this side writes a request and blocks for its answer, as
 *                     a driver call on the chip returns before the firmware goes on;
 *   FW_HOST_EVENT_FD  events the chip raises later (Wi-Fi and Ethernet reports, scan results, the
 *                     watchdog's ping), read by the GLib main loop and delivered into XS.
 * A frame is a little-endian u32 length (of what follows), a u16 call, event or status, a u16 zero, and
 * fields: an int is an i32; a bool a byte; bytes and strings a u32 length and the bytes (a string is
 * followed by a NUL, not counted). The list of calls and events, with their fields, is
 * firmware/virtual-esp32/chip-calls.ts; fw_host_calls.h is written from it (and checked against it).
 */
#ifndef __FW_HOST_H__
#define __FW_HOST_H__

#include <stdint.h>
#include "xsmc.h"
#include "fw_host_calls.h"

#define FW_HOST_CALL_FD 3
#define FW_HOST_EVENT_FD 4

typedef struct {
	uint8_t *data;
	uint32_t length;
	uint32_t capacity;
} fwOut;

typedef struct {
	const uint8_t *data;
	uint32_t length;
	uint32_t at;
} fwIn;

void fwOutInt(fwOut *out, int32_t value);
void fwOutBool(fwOut *out, int value);
void fwOutBytes(fwOut *out, const void *bytes, uint32_t length);
void fwOutString(fwOut *out, const char *string);

int32_t fwInInt(fwIn *in);
int fwInBool(fwIn *in);
const uint8_t *fwInBytes(fwIn *in, uint32_t *length);
/* NUL-terminated, inside the answer: valid until the next call. */
const char *fwInString(fwIn *in);

/*
 * Sends a call and waits for its answer. `out` may be NULL (no fields) and is freed. When the chip
 * refuses (an error status), throws its message into XS when `the` is given, else returns -1. A
 * channel that is gone means the board was powered off: the process exits.
 */
int fwCall(xsMachine *the, uint16_t call, fwOut *out, fwIn *answer);

typedef void (*fwEventHandler)(xsMachine *the, fwIn *fields);
void fwOnEvent(uint16_t event, fwEventHandler handler);

/* The flash chip's time for `bytes` programmed (erases included), and for a file system metadata commit (fw_host_flash_time.c). */
void fwFlashProgramTime(uint32_t bytes);
void fwFlashMetadataTime(void);

/* The machine the events are delivered into; set by the loader once the firmware has started. */
xsMachine *fwMachine(void);

#endif
