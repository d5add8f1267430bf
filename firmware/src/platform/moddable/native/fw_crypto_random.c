/*
 * Random bytes from the ESP32-S3's hardware RNG, for hal/psa-crypto.ts (IVs, tokens, nonces).
 *
 * ESP-IDF: esp_fill_random (esp_random.h), the hardware RNG. Its output is cryptographically secure
 * while the RF subsystem (Wi-Fi) or the internal entropy source (bootloader_random_enable) runs;
 * Wi-Fi is started at boot on every board here (Moddable initializes it on first use; controllers
 * start it for provisioning, clients to join the site network).
 */
#include "xsmc.h"
#include "xsHost.h"
#include "esp_random.h"

#define kMaxRandomBytes (4096)

void xs_fw_random(xsMachine *the)
{
	int length = xsmcToInteger(xsArg(0));

	if ((length < 0) || (length > kMaxRandomBytes))
		xsRangeError("random bytes: 0 to 4096 at a time");
	xsmcSetArrayBuffer(xsResult, NULL, length);
	esp_fill_random(xsmcToArrayBuffer(xsResult), length);		/* nothing allocates in between */
}
