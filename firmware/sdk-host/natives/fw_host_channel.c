/*
 * The channel to the chip beneath (fw_host.h): calls answered in order, events delivered from the GLib
 * main loop that the SDK's Linux timers and sockets run on (xs/platforms/lin_xs.c).
 */
#include "xsAll.h"	/* before xsmc.h: the machine's heap counters (txMachine) */
#include "fw_host.h"
#include <errno.h>
#include <glib.h>
#include <glib-unix.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define kHeader 8
#define kMaxEvents 32

static xsMachine *gMachine = NULL;
static fwEventHandler gHandlers[kMaxEvents];
static uint8_t *gAnswer = NULL;
static uint32_t gAnswerCapacity = 0;
static uint8_t *gEvents = NULL;
static uint32_t gEventsLength = 0, gEventsCapacity = 0;

static void grow(uint8_t **data, uint32_t *capacity, uint32_t needed)
{
	if (needed <= *capacity) return;
	uint32_t capacity2 = *capacity ? *capacity : 256;
	while (capacity2 < needed) capacity2 *= 2;
	uint8_t *data2 = realloc(*data, capacity2);
	if (!data2) _exit(71);
	*data = data2;
	*capacity = capacity2;
}

static void put(fwOut *out, const void *bytes, uint32_t length)
{
	grow(&out->data, &out->capacity, out->length + length);
	memcpy(out->data + out->length, bytes, length);
	out->length += length;
}

static void putU32(fwOut *out, uint32_t value)
{
	uint8_t b[4] = { value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, value >> 24 };
	put(out, b, 4);
}

void fwOutInt(fwOut *out, int32_t value) { putU32(out, (uint32_t)value); }
void fwOutBool(fwOut *out, int value) { uint8_t b = value ? 1 : 0; put(out, &b, 1); }

void fwOutBytes(fwOut *out, const void *bytes, uint32_t length)
{
	putU32(out, length);
	if (length) put(out, bytes, length);
}

void fwOutString(fwOut *out, const char *string)
{
	uint32_t length = (uint32_t)strlen(string);
	putU32(out, length);
	put(out, string, length + 1);
}

static uint32_t getU32(const uint8_t *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* A malformed answer is a bug on one side or the other: the board stops loudly rather than guess. */
static void malformed(const char *what)
{
	fprintf(stderr, "fw_host: malformed %s from the chip\n", what);
	_exit(72);
}

int32_t fwInInt(fwIn *in)
{
	if (in->at + 4 > in->length) malformed("int");
	int32_t value = (int32_t)getU32(in->data + in->at);
	in->at += 4;
	return value;
}

int fwInBool(fwIn *in)
{
	if (in->at + 1 > in->length) malformed("bool");
	return in->data[in->at++] != 0;
}

const uint8_t *fwInBytes(fwIn *in, uint32_t *length)
{
	uint32_t n = (uint32_t)fwInInt(in);
	if (in->at + n > in->length) malformed("bytes");
	const uint8_t *bytes = in->data + in->at;
	in->at += n;
	*length = n;
	return bytes;
}

const char *fwInString(fwIn *in)
{
	uint32_t n = (uint32_t)fwInInt(in);
	if ((in->at + n + 1 > in->length) || in->data[in->at + n]) malformed("string");
	const char *string = (const char *)(in->data + in->at);
	in->at += n + 1;
	return string;
}

static void writeAll(int fd, const uint8_t *data, uint32_t length)
{
	while (length) {
		ssize_t n = write(fd, data, length);
		if (n < 0) {
			if (EINTR == errno) continue;
			_exit(70); /* the chip is gone: powered off */
		}
		data += n;
		length -= (uint32_t)n;
	}
}

static void readAll(int fd, uint8_t *data, uint32_t length)
{
	while (length) {
		ssize_t n = read(fd, data, length);
		if (n < 0 && EINTR == errno) continue;
		if (n <= 0) _exit(70);
		data += n;
		length -= (uint32_t)n;
	}
}

/* The machine the natives last ran on: an abort while the app starts comes before fwHostAttach. */
static xsMachine *gLastMachine = NULL;

int fwCall(xsMachine *the, uint16_t call, fwOut *out, fwIn *answer)
{
	uint8_t header[kHeader];
	if (the)
		gLastMachine = the;
	uint32_t length = 4 + (out ? out->length : 0);
	header[0] = length & 0xff; header[1] = (length >> 8) & 0xff; header[2] = (length >> 16) & 0xff; header[3] = length >> 24;
	header[4] = call & 0xff; header[5] = call >> 8; header[6] = 0; header[7] = 0;
	writeAll(FW_HOST_CALL_FD, header, kHeader);
	if (out && out->length) writeAll(FW_HOST_CALL_FD, out->data, out->length);
	if (out) {
		free(out->data);
		out->data = NULL;
		out->length = out->capacity = 0;
	}

	readAll(FW_HOST_CALL_FD, header, 4);
	length = getU32(header);
	if (length < 4) malformed("answer");
	grow(&gAnswer, &gAnswerCapacity, length);
	readAll(FW_HOST_CALL_FD, gAnswer, length);
	uint16_t status = gAnswer[0] | (gAnswer[1] << 8);
	fwIn in = { gAnswer + 4, length - 4, 0 };
	if (status) {
		const char *message = fwInString(&in);
		if (the)
			xsUnknownError("%s", message);
		return -1;
	}
	if (answer)
		*answer = in;
	return 0;
}

void fwOnEvent(uint16_t event, fwEventHandler handler)
{
	if (event < kMaxEvents)
		gHandlers[event] = handler;
}

xsMachine *fwMachine(void)
{
	return gMachine;
}

static void deliverEvents(void)
{
	uint32_t at = 0;
	while (gEventsLength - at >= 4) {
		uint32_t length = getU32(gEvents + at);
		if (length < 4) malformed("event");
		if (gEventsLength - at - 4 < length) break;
		const uint8_t *frame = gEvents + at + 4;
		uint16_t event = frame[0] | (frame[1] << 8);
		fwIn in = { frame + 4, length - 4, 0 };
		at += 4 + length;
		if ((event < kMaxEvents) && gHandlers[event] && gMachine)
			(*gHandlers[event])(gMachine, &in);
	}
	memmove(gEvents, gEvents + at, gEventsLength - at);
	gEventsLength -= at;
}

static gboolean onEvents(gint fd, GIOCondition condition, gpointer data)
{
	grow(&gEvents, &gEventsCapacity, gEventsLength + 4096);
	ssize_t n = read(fd, gEvents + gEventsLength, gEventsCapacity - gEventsLength);
	if (n < 0 && (EINTR == errno || EAGAIN == errno)) return G_SOURCE_CONTINUE;
	if (n <= 0) _exit(70);
	gEventsLength += (uint32_t)n;
	deliverEvents();
	return G_SOURCE_CONTINUE;
}

/*
 * The JavaScript stack's deepest point since the heap probe last restarted the peaks. The SDK's screen
 * (build/simulators/modules/screen.c fxScreenSampleInstrumentation) restarts XS's own stackPeak after
 * each of its once-a-second instrumentation samples, so XS's alone would say only "since the last
 * second". The loader calls fwHostBeforeIdle before each idle (where that sample is taken), and the
 * low-water mark is kept here across samples.
 */
#ifdef mxInstrument
static txSlot *gStackLowWater = NULL;
#endif

void fwHostBeforeIdle(void)
{
#ifdef mxInstrument
	txMachine *machine = (txMachine *)gMachine;
	if (machine && ((NULL == gStackLowWater) || (machine->stackPeak < gStackLowWater)))
		gStackLowWater = machine->stackPeak;
#endif
}

/*
 * The watchdog's ping and the heap probe: the answer says the main loop is alive, and how much of the
 * machine's heaps is in use (XS's own counters, the same the chip keeps: xs/sources/xsMemory.c).
 * With `collect`, a garbage collection runs first, so that the slots in use are the live ones; with
 * `resetPeaks`, the peaks start again from what is in use now.
 */
static void onPing(xsMachine *the, fwIn *fields)
{
	int32_t sequence = fwInInt(fields);
	int collect = fwInBool(fields);
	int resetPeaks = fwInBool(fields);
	txMachine *machine = (txMachine *)the;
	if (collect) {
		xsBeginHost(the);
		xsCollectGarbage();
		xsEndHost(the);
	}
	fwOut out = {0};
	fwOutInt(&out, sequence);
	fwOutInt(&out, (int32_t)machine->currentChunksSize);
	fwOutInt(&out, (int32_t)machine->peakChunksSize);
	fwOutInt(&out, (int32_t)machine->maximumChunksSize);
	fwOutInt(&out, (int32_t)machine->currentHeapCount);
	fwOutInt(&out, (int32_t)machine->peakHeapCount);
	fwOutInt(&out, (int32_t)machine->maximumHeapCount);
	/* The stack grows down from stackTop; XS's instrumentation (mcconfig -i) keeps its low-water mark. */
#ifdef mxInstrument
	txSlot *deepest = machine->stackPeak;
	if (gStackLowWater && (gStackLowWater < deepest))
		deepest = gStackLowWater;
	fwOutInt(&out, (int32_t)(machine->stackTop - deepest));
#else
	fwOutInt(&out, -1);
#endif
	fwOutInt(&out, (int32_t)(machine->stackTop - machine->stackBottom));
	fwCall(NULL, FW_CALL_PONG, &out, NULL);
	if (resetPeaks) {
		machine->peakChunksSize = machine->currentChunksSize;
		machine->peakHeapCount = machine->currentHeapCount;
#ifdef mxInstrument
		machine->stackPeak = machine->stack;
		gStackLowWater = NULL;
#endif
	}
}

/*
 * Called by the loader (dlsym) when XS aborts: for an unhandled exception, its message, which the
 * chip's fxAbort prints after "XS abort: unhandled exception" (xs/platforms/esp/xsPlatform.c) and the
 * SDK's Linux screen does not. Empty when there is none to read.
 */
const char *fwHostAbortReason(void *machine, int status)
{
	txMachine *the = (txMachine *)(machine ? machine : (gMachine ? (void *)gMachine : (void *)gLastMachine));
	const char *reason = "";
	if (!the || ((XS_UNHANDLED_EXCEPTION_EXIT != status) && (XS_UNHANDLED_REJECTION_EXIT != status)))
		return reason;
	if (mxException.kind != XS_REFERENCE_KIND)
		return reason;
	mxTry(the) {
		mxPush(mxException);
		mxGetID(mxID(_message));
		if ((the->stack->kind == XS_STRING_KIND) || (the->stack->kind == XS_STRING_X_KIND))
			reason = the->stack->value.string;
		mxPop();
	}
	mxCatch(the) {
	}
	return reason;
}

/* Called by the loader (dlsym) once the firmware has started, before the main loop runs. */
void fwHostAttach(void *machine)
{
	gMachine = (xsMachine *)machine;
	fwOnEvent(FW_EVENT_PING, onPing);
	g_unix_set_fd_nonblocking(FW_HOST_EVENT_FD, TRUE, NULL);
	g_unix_fd_add(FW_HOST_EVENT_FD, G_IO_IN | G_IO_HUP | G_IO_ERR, onEvents, NULL);
}
