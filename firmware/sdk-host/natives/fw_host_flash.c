/*
 * The power-cut hook of a virtual board's file system (tools/power-cuts/sdk.ts): the firmware's `file`
 * module (../modules/file.js) calls xs_fw_host_flash_op before each operation that changes the flash
 * folder (create, write, delete, rename, mkdir, rmdir). On a board started with a watcher
 * (SdkBoardOptions.onFlashOp, which sets FW_HOST_FLASH_OPS in this process's environment) the call
 * goes to the chip's Node side and the firmware waits for its answer, as for any chip call: -1 lets
 * the operation happen; for a write, 0 or more lets that many of its bytes reach the flash first, and
 * the module then calls with "cut"; to cut the power before an operation the Node side kills this
 * process and never answers. Without a watcher the call returns -1 at once and the chip is not asked.
 * Nothing of this exists on the chip (the product's `file` is the SDK's modLittlefs.c). Every operation
 * also takes the flash chip's time (fw_host_flash_time.c), watched or not.
 */
#include "fw_host.h"
#include <stdlib.h>
#include <string.h>

static int gWatched = -1;

void xs_fw_host_flash_op(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	const char *op = xsmcToString(xsArg(0));
	/* The flash's own time (fw_host_flash_time.c), before the operation as on the chip. */
	if (!strcmp(op, "write"))
		fwFlashProgramTime((uint32_t)xsmcToInteger(xsArg(2)));
	else if (strcmp(op, "cut"))
		fwFlashMetadataTime();
	if (gWatched < 0)
		gWatched = (NULL != getenv("FW_HOST_FLASH_OPS")) ? 1 : 0;
	if (!gWatched) {
		xsmcSetInteger(xsResult, -1);
		return;
	}
	/* Each string is copied into `out` before the next conversion can move it in the heap. */
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwOutInt(&out, xsmcToInteger(xsArg(2)));
	fwCall(the, FW_CALL_FLASH_OP, &out, &in);
	xsmcSetInteger(xsResult, fwInInt(&in));
}
