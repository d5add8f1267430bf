/*
 * SHA-256 (multipart) and HMAC-SHA256 through PSA, for hal/psa-crypto.ts.
 *
 * ESP-IDF 6 ships Mbed TLS 4 (TF-PSA-Crypto): the legacy mbedtls_sha256_* calls are gone and the PSA
 * Crypto API is the interface (psa/crypto.h: psa_crypto_init, psa_hash_setup / _update / _finish /
 * _abort, psa_import_key + psa_mac_compute with PSA_ALG_HMAC(PSA_ALG_SHA_256)). ESP-IDF's PSA
 * driver runs the hash on the ESP32-S3's SHA accelerator (CONFIG_MBEDTLS_HARDWARE_SHA).
 * A hash in progress is a host object owning its psa_hash_operation_t in the ESP-IDF heap (never in
 * the XS heap, which compacts); its destructor aborts and frees it.
 */
#include "xsmc.h"
#include "xsHost.h"
#include "psa/crypto.h"

#define kSha256Bytes (32)
/* HMAC pads its key with zeros to the 64-byte block (RFC 2104 section 2): an empty key is that block. */
#define kSha256BlockBytes (64)

static void psaCheck(xsMachine *the, psa_status_t status, const char *what)
{
	if (PSA_SUCCESS != status)
		xsUnknownError("%s", what);
}

void xs_fw_sha256_destructor(void *data)
{
	psa_hash_operation_t *operation = data;
	if (operation) {
		psa_hash_abort(operation);
		c_free(operation);
	}
}

void xs_fw_sha256_create(xsMachine *the)
{
	psa_hash_operation_t *operation;

	psaCheck(the, psa_crypto_init(), "psa_crypto_init failed");
	operation = c_calloc(1, sizeof(psa_hash_operation_t));
	if (!operation)
		xsUnknownError("no memory for SHA-256");
	*operation = psa_hash_operation_init();
	if (PSA_SUCCESS != psa_hash_setup(operation, PSA_ALG_SHA_256)) {
		c_free(operation);
		xsUnknownError("psa_hash_setup failed");
	}
	xsResult = xsNewHostObject(xs_fw_sha256_destructor);
	xsmcSetHostData(xsResult, operation);
}

void xs_fw_sha256_update(xsMachine *the)
{
	psa_hash_operation_t *operation = xsmcGetHostDataValidate(xsArg(0), xs_fw_sha256_destructor);
	void *data;
	xsUnsignedValue length;

	if (!operation)
		xsUnknownError("SHA-256 already finished");
	xsmcGetBufferReadable(xsArg(1), &data, &length);
	psaCheck(the, psa_hash_update(operation, data, length), "psa_hash_update failed");
}

void xs_fw_sha256_finish(xsMachine *the)
{
	psa_hash_operation_t *operation = xsmcGetHostDataValidate(xsArg(0), xs_fw_sha256_destructor);
	uint8_t digest[kSha256Bytes];
	size_t length = 0;
	psa_status_t status;

	if (!operation)
		xsUnknownError("SHA-256 already finished");
	status = psa_hash_finish(operation, digest, sizeof(digest), &length);
	xs_fw_sha256_destructor(operation);
	xsmcSetHostData(xsArg(0), NULL);
	psaCheck(the, status, "psa_hash_finish failed");
	xsmcSetArrayBuffer(xsResult, digest, length);
}

void xs_fw_hmac_sha256(xsMachine *the)
{
	static const uint8_t emptyKey[kSha256BlockBytes] = {0};
	psa_key_attributes_t attributes = psa_key_attributes_init();
	psa_key_id_t key = 0;
	void *keyData, *message;
	xsUnsignedValue keyLength, messageLength;
	uint8_t mac[kSha256Bytes];
	size_t macLength = 0;
	psa_status_t status;

	psaCheck(the, psa_crypto_init(), "psa_crypto_init failed");
	xsmcGetBufferReadable(xsArg(0), &keyData, &keyLength);
	if (0 == keyLength) {
		keyData = (void *)emptyKey;
		keyLength = sizeof(emptyKey);
	}
	psa_set_key_type(&attributes, PSA_KEY_TYPE_HMAC);
	psa_set_key_bits(&attributes, PSA_BYTES_TO_BITS(keyLength));
	psa_set_key_usage_flags(&attributes, PSA_KEY_USAGE_SIGN_MESSAGE);
	psa_set_key_algorithm(&attributes, PSA_ALG_HMAC(PSA_ALG_SHA_256));
	psaCheck(the, psa_import_key(&attributes, keyData, keyLength, &key), "psa_import_key (HMAC) failed");
	/* Read the message pointer only now: nothing allocates in the XS heap until the MAC is done. */
	xsmcGetBufferReadable(xsArg(1), &message, &messageLength);
	status = psa_mac_compute(key, PSA_ALG_HMAC(PSA_ALG_SHA_256), message, messageLength, mac, sizeof(mac), &macLength);
	psa_destroy_key(key);
	psaCheck(the, status, "psa_mac_compute failed");
	xsmcSetArrayBuffer(xsResult, mac, macLength);
}
