/*
 * The app slots, for hal/system.ts (what Moddable's `ota` module, build/devices/esp32/modules/ota,
 * does not offer).
 *
 * ESP-IDF app_update (esp_ota_ops.h): esp_ota_get_running_partition,
 * esp_ota_get_last_invalid_partition, esp_ota_get_partition_description (the slot's esp_app_desc_t:
 * version and project name), esp_ota_get_state_partition (esp_ota_img_states_t) and
 * esp_ota_mark_app_valid_cancel_rollback. With CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE a new image
 * boots in ESP_OTA_IMG_PENDING_VERIFY; the bootloader rolls it back unless it is marked valid.
 * A slot is returned as [label, version, project name, state]: an array, so no property name has
 * to exist as an XS symbol.
 *
 * xs_fw_ota_refusal says, before `ota.complete()`, why esp_ota_end or esp_ota_set_boot_partition
 * would refuse the image just written (docs/secure-boot.md, "The OTA client"); the SDK's ota.c only
 * says "end failed". Its checks are the ones those calls make, in a build that has them:
 *   - CONFIG_SECURE_BOOT_V2_ENABLED or CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT: esp_ota_end's
 *     esp_image_verify checks the Secure Boot v2 signature (esp_secure_boot_verify_signature): with
 *     SECURE_BOOT_EN against the eFuse key digests not revoked, without it against the running app's
 *     first signature block. ESP_ERR_OTA_VALIDATE_FAILED; here: signature_invalid and why.
 *   - CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK: esp_ota_set_boot_partition refuses a secure_version below
 *     the eFuse SECURE_VERSION (ESP_ERR_OTA_SMALL_SEC_VER); here: secure_version_too_low.
 * Not built or run in this repository (no ESP-IDF toolchain here); the virtual chip's side is
 * firmware/virtual-esp32/ota-slots.ts.
 */
#include <stdio.h>
#include <string.h>
#include "xsmc.h"
#include "xsHost.h"
#include "sdkconfig.h"
#include "esp_ota_ops.h"
#include "esp_partition.h"
#include "esp_efuse.h"
#include "esp_log.h"
#if CONFIG_SECURE_BOOT_V2_ENABLED || CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT
#include "esp_image_format.h"
#include "esp_secure_boot.h"
#include "esp_rom_crc.h"
#include "psa/crypto.h"
#endif

static const char *stateName(const esp_partition_t *partition)
{
	esp_ota_img_states_t state;

	if (ESP_OK != esp_ota_get_state_partition(partition, &state))
		return "undefined";		/* a factory slot, or no otadata entry for it */
	switch (state) {
		case ESP_OTA_IMG_NEW: return "new";
		case ESP_OTA_IMG_PENDING_VERIFY: return "pending_verify";
		case ESP_OTA_IMG_VALID: return "valid";
		case ESP_OTA_IMG_INVALID: return "invalid";
		case ESP_OTA_IMG_ABORTED: return "aborted";
		default: return "undefined";
	}
}

static void describeSlot(xsMachine *the, const esp_partition_t *partition)
{
	esp_app_desc_t description;
	char version[sizeof(description.version) + 1] = {0};
	char project[sizeof(description.project_name) + 1] = {0};
	uint32_t secureVersion = 0;

	if (ESP_OK == esp_ota_get_partition_description(partition, &description)) {
		c_memcpy(version, description.version, sizeof(description.version));
		c_memcpy(project, description.project_name, sizeof(description.project_name));
		secureVersion = description.secure_version;
	}
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 5);
	xsmcSetString(xsVar(0), (char *)partition->label);
	xsmcSetIndex(xsResult, 0, xsVar(0));
	xsmcSetString(xsVar(0), version);
	xsmcSetIndex(xsResult, 1, xsVar(0));
	xsmcSetString(xsVar(0), project);
	xsmcSetIndex(xsResult, 2, xsVar(0));
	xsmcSetString(xsVar(0), (char *)stateName(partition));
	xsmcSetIndex(xsResult, 3, xsVar(0));
	xsmcSetInteger(xsVar(0), (xsIntegerValue)secureVersion);
	xsmcSetIndex(xsResult, 4, xsVar(0));
}

/* The passive slot's size: esp_https_ota refuses a larger image before it erases anything. */
void xs_fw_ota_slot_bytes(xsMachine *the)
{
	const esp_partition_t *next = esp_ota_get_next_update_partition(NULL);

	if (!next)
		xsUnknownError("no OTA slot other than the running one");
	xsmcSetInteger(xsResult, (xsIntegerValue)next->size);
}

void xs_fw_ota_running_app(xsMachine *the)
{
	const esp_partition_t *running = esp_ota_get_running_partition();

	if (!running)
		xsUnknownError("no running partition");
	describeSlot(the, running);
}

void xs_fw_ota_last_invalid_app(xsMachine *the)
{
	const esp_partition_t *invalid = esp_ota_get_last_invalid_partition();

	if (invalid)
		describeSlot(the, invalid);		/* else undefined */
}

void xs_fw_ota_mark_valid(xsMachine *the)
{
	esp_ota_img_states_t state;
	const esp_partition_t *running = esp_ota_get_running_partition();

	if (!running || (ESP_OK != esp_ota_get_state_partition(running, &state)) || (ESP_OTA_IMG_PENDING_VERIFY != state)) {
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	if (ESP_OK != esp_ota_mark_app_valid_cancel_rollback())
		xsUnknownError("esp_ota_mark_app_valid_cancel_rollback failed");
	xsmcSetBoolean(xsResult, 1);
}

#if CONFIG_SECURE_BOOT_V2_ENABLED || CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT || CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK
static void refuse(xsMachine *the, const char *code, const char *message)
{
	ESP_LOGE("fw_ota", "%s", message);
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 2);
	xsmcSetString(xsVar(0), (char *)code);
	xsmcSetIndex(xsResult, 0, xsVar(0));
	xsmcSetString(xsVar(0), (char *)message);
	xsmcSetIndex(xsResult, 1, xsVar(0));
}
#endif

#if CONFIG_SECURE_BOOT_V2_ENABLED || CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT

/* The Secure Boot v2 RSA signature sector (firmware/image/secure-boot.ts has the layout): 4 KB after
 * the image padded to 4 KB, up to three 1216-byte blocks. */
#define kSectorBytes (4096)
#define kBlockBytes (1216)
#define kBlocks (3)
#define kBlockMagic (0xE7)
#define kBlockVersionRsa (0x02)
#define kDigestAt (4)
#define kKeyAt (36)
#define kKeyBytes (776)
#define kCrcSpan (1196)
#define kDigestBytes (32)
#define alignUp(n, a) (((n) + ((a) - 1)) & ~((a) - 1))

typedef struct {
	uint8_t present;		/* magic, CRC and version sound */
	uint8_t imageDigest[kDigestBytes];
	uint8_t keyDigest[kDigestBytes];
} fwSigBlock;

static int sha256Partition(const esp_partition_t *partition, uint32_t offset, uint32_t length, uint8_t digest[kDigestBytes])
{
	static uint8_t chunk[1024];
	psa_hash_operation_t operation = psa_hash_operation_init();
	size_t done = 0;

	if ((PSA_SUCCESS != psa_crypto_init()) || (PSA_SUCCESS != psa_hash_setup(&operation, PSA_ALG_SHA_256)))
		return -1;
	while (length) {
		uint32_t n = (length < sizeof(chunk)) ? length : sizeof(chunk);
		if ((ESP_OK != esp_partition_read(partition, offset, chunk, n)) || (PSA_SUCCESS != psa_hash_update(&operation, chunk, n))) {
			psa_hash_abort(&operation);
			return -1;
		}
		offset += n;
		length -= n;
	}
	return (PSA_SUCCESS == psa_hash_finish(&operation, digest, kDigestBytes, &done)) && (kDigestBytes == done) ? 0 : -1;
}

/* The signature sector of the app in `partition` whose bytes end at `limit`: 0 when there is one
 * (blocks[i].present for each sound block), -1 when the image carries none. */
static int readSignatureBlocks(const esp_partition_t *partition, uint32_t limit, uint32_t *contentLength, fwSigBlock blocks[kBlocks])
{
	static uint8_t raw[kBlockBytes];
	esp_partition_pos_t position = { .offset = partition->address, .size = partition->size };
	esp_image_metadata_t metadata;
	int i, any = 0;

	memset(blocks, 0, sizeof(fwSigBlock) * kBlocks);
	if (ESP_OK != esp_image_get_metadata(&position, &metadata))
		return -1;
	*contentLength = alignUp(metadata.image_len, kSectorBytes);
	if (*contentLength + kSectorBytes > limit)
		return -1;
	for (i = 0; i < kBlocks; i++) {
		psa_status_t status;
		size_t done = 0;
		if (ESP_OK != esp_partition_read(partition, *contentLength + (i * kBlockBytes), raw, kBlockBytes))
			return -1;
		if ((kBlockMagic != raw[0]) || (kBlockVersionRsa != raw[1]))
			continue;
		if (esp_rom_crc32_le(0, raw, kCrcSpan) != (raw[kCrcSpan] | (raw[kCrcSpan + 1] << 8) | (raw[kCrcSpan + 2] << 16) | ((uint32_t)raw[kCrcSpan + 3] << 24)))
			continue;
		status = psa_hash_compute(PSA_ALG_SHA_256, raw + kKeyAt, kKeyBytes, blocks[i].keyDigest, kDigestBytes, &done);
		if (PSA_SUCCESS != status)
			return -1;
		memcpy(blocks[i].imageDigest, raw + kDigestAt, kDigestBytes);
		blocks[i].present = 1;
		any = 1;
	}
	return any ? 0 : -1;
}

static void hexOf(const uint8_t *bytes, char *out)
{
	static const char digits[] = "0123456789abcdef";
	int i;
	for (i = 0; i < kDigestBytes; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[(2 * i) + 1] = digits[bytes[i] & 15];
	}
	out[2 * kDigestBytes] = 0;
}

/* Why esp_secure_boot_verify_signature refuses the image: 0 when it does not (it decides; this explains). */
static int signatureRefusal(const esp_partition_t *partition, uint32_t written, char *message, size_t size)
{
	uint8_t trusted[kBlocks][kDigestBytes];
	uint8_t revoked[kBlocks] = {0};
	uint8_t image[kDigestBytes];
	int trustedCount = 0, i, j, rank, fromEfuse = esp_secure_boot_enabled();
	fwSigBlock blocks[kBlocks];
	uint32_t contentLength = 0;
	char hex[(2 * kDigestBytes) + 1];

	if (fromEfuse) {
		/* SECURE_BOOT_DIGEST0..2 in the key blocks, with SECURE_BOOT_KEY_REVOKE0..2. */
		for (i = 0; i < kBlocks; i++) {
			esp_efuse_block_t block;
			if (!esp_efuse_find_purpose(ESP_EFUSE_KEY_PURPOSE_SECURE_BOOT_DIGEST0 + i, &block))
				continue;
			if (ESP_OK != esp_efuse_read_block(block, trusted[trustedCount], 0, kDigestBytes * 8))
				continue;
			revoked[trustedCount++] = esp_efuse_get_digest_revoke(i) ? 1 : 0;
		}
		if (!trustedCount) {
			snprintf(message, size, "Secure Boot V2 verification failed (untrusted): SECURE_BOOT_EN is set but no SECURE_BOOT_DIGEST key block is burned");
			return -1;
		}
	}
	else {
		/* Without secure boot: the running app's first sound signature block (ESP-IDF compares only it). */
		const esp_partition_t *running = esp_ota_get_running_partition();
		fwSigBlock own[kBlocks];
		uint32_t ownLength = 0;
		if (!running || readSignatureBlocks(running, running->size, &ownLength, own))
			return 0;		/* the running app is not signed: nothing to compare with (as esp_ota_end in an unsigned build) */
		for (i = 0; i < kBlocks; i++) {
			if (own[i].present) {
				memcpy(trusted[0], own[i].keyDigest, kDigestBytes);
				trustedCount = 1;
				break;
			}
		}
	}

	if (readSignatureBlocks(partition, written, &contentLength, blocks)) {
		snprintf(message, size, "Secure Boot V2 verification failed (unsigned): the image carries no sound signature block");
		return -1;
	}
	/* ESP-IDF decides, as esp_ota_end will: any block signed by a trusted key that verifies is
	 * enough (a block by a revoked or unknown key before it does not refuse the image). What
	 * follows only says why it refused, the most telling reason over every block as
	 * firmware/image/secure-boot.ts ranks them: tampered, then bad_signature, then revoked. */
	if (ESP_OK == esp_secure_boot_verify_signature(partition->address, contentLength))
		return 0;
	if (sha256Partition(partition, 0, contentLength, image)) {
		snprintf(message, size, "Secure Boot V2 verification failed: the image could not be read back");
		return -1;
	}
	rank = 0;
	for (i = 0; i < kBlocks; i++) {
		if (!blocks[i].present)
			continue;
		if (!fromEfuse && (i > 0))
			break;		/* CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT: only the first block */
		if (memcmp(blocks[i].imageDigest, image, kDigestBytes)) {
			if (rank != 1) {
				rank = 1;
				snprintf(message, size, "Secure Boot V2 verification failed (tampered): signature block %d was made over another image: the image changed after signing", i);
			}
			continue;
		}
		for (j = 0; j < trustedCount; j++) {
			if (memcmp(blocks[i].keyDigest, trusted[j], kDigestBytes))
				continue;
			if (!revoked[j] && ((0 == rank) || (rank > 2))) {
				rank = 2;
				snprintf(message, size, "Secure Boot V2 verification failed (bad_signature): signature block %d does not verify with its key", i);
			}
			else if (revoked[j] && (0 == rank)) {
				rank = 3;
				hexOf(blocks[i].keyDigest, hex);
				snprintf(message, size, "Secure Boot V2 verification failed (revoked): signature block %d is signed by key %s, which is revoked", i, hex);
			}
			break;
		}
	}
	if (rank)
		return -1;
	for (i = 0; i < kBlocks; i++) {
		if (blocks[i].present)
			break;
	}
	hexOf(blocks[i < kBlocks ? i : 0].keyDigest, hex);
	snprintf(message, size, "Secure Boot V2 verification failed (untrusted): the image is signed by key %s, which is not a trusted key (%s)", hex, fromEfuse ? "the eFuse key digests" : "the running image's signature");
	return -1;
}

#endif

void xs_fw_ota_refusal(xsMachine *the)
{
	static char message[256];
	const esp_partition_t *partition = esp_ota_get_next_update_partition(NULL);
	uint32_t written = (uint32_t)xsmcToInteger(xsArg(0));

	if (!partition)
		xsUnknownError("no update partition");
#if CONFIG_SECURE_BOOT_V2_ENABLED || CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT
	if (signatureRefusal(partition, written, message, sizeof(message))) {
		refuse(the, "signature_invalid", message);
		return;
	}
#endif
#if CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK
	{
		esp_app_desc_t description;
		if ((ESP_OK == esp_ota_get_partition_description(partition, &description)) && !esp_efuse_check_secure_version(description.secure_version)) {
			snprintf(message, sizeof(message), "the image's secure_version %u is below the eFuse SECURE_VERSION %u: this partition can not be booted (anti-rollback), it will not be set as boot", (unsigned)description.secure_version, (unsigned)esp_efuse_read_secure_version());
			refuse(the, "secure_version_too_low", message);
			return;
		}
	}
#endif
	(void)written;
	(void)message;
}
