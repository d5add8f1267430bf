/*
 * AES-256-GCM in chunks through PSA multipart AEAD, for hal/psa-crypto.ts: a 512 KB backup is
 * encrypted and decrypted 4 KB at a time, never whole (DESIGN.md section 2).
 *
 * ESP-IDF 6 / Mbed TLS 4: psa_import_key (PSA_KEY_TYPE_AES, 256 bits, PSA_ALG_GCM),
 * psa_aead_encrypt_setup / psa_aead_decrypt_setup, psa_aead_set_nonce (12 bytes),
 * psa_aead_update_ad, psa_aead_update, then psa_aead_finish (the tag) or psa_aead_verify (checks the
 * tag in constant time). ESP-IDF's PSA driver runs AES on the ESP32-S3's AES accelerator
 * (CONFIG_MBEDTLS_HARDWARE_AES / HARDWARE_GCM). The HAL needs output of the input's length from every
 * update (core/crypto/ffce.ts streams it): GCM in Mbed TLS keeps partial blocks' keystream rather
 * than holding bytes back, and a different length is refused here rather than passed on.
 * The operation and its key live in a host object; its destructor aborts both.
 */
#include "xsmc.h"
#include "xsHost.h"
#include "psa/crypto.h"

#define kKeyBytes (32)
#define kNonceBytes (12)
#define kTagBytes (16)

typedef struct {
	psa_aead_operation_t	operation;
	psa_key_id_t			key;
	uint8_t					encrypt;
} GcmRecord, *Gcm;

void xs_fw_gcm_destructor(void *data)
{
	Gcm gcm = data;
	if (gcm) {
		psa_aead_abort(&gcm->operation);
		psa_destroy_key(gcm->key);
		c_free(gcm);
	}
}

static Gcm gcmOf(xsMachine *the)
{
	Gcm gcm = xsmcGetHostDataValidate(xsArg(0), xs_fw_gcm_destructor);
	if (!gcm)
		xsUnknownError("GCM stream already finished");
	return gcm;
}

static void gcmClose(xsMachine *the, Gcm gcm)
{
	xs_fw_gcm_destructor(gcm);
	xsmcSetHostData(xsArg(0), NULL);
}

void xs_fw_gcm_create(xsMachine *the)
{
	psa_key_attributes_t attributes = psa_key_attributes_init();
	void *key, *nonce, *aad;
	xsUnsignedValue keyLength, nonceLength, aadLength;
	uint8_t encrypt = xsmcToBoolean(xsArg(3));
	psa_status_t status;
	Gcm gcm;

	if (PSA_SUCCESS != psa_crypto_init())
		xsUnknownError("psa_crypto_init failed");
	gcm = c_calloc(1, sizeof(GcmRecord));
	if (!gcm)
		xsUnknownError("no memory for GCM");
	gcm->operation = psa_aead_operation_init();
	gcm->encrypt = encrypt;
	/* The host object first: from here on its destructor frees whatever was set up. */
	xsResult = xsNewHostObject(xs_fw_gcm_destructor);
	xsmcSetHostData(xsResult, gcm);

	xsmcGetBufferReadable(xsArg(0), &key, &keyLength);
	if (kKeyBytes != keyLength)
		xsRangeError("AES-256-GCM key must be 32 bytes");
	psa_set_key_type(&attributes, PSA_KEY_TYPE_AES);
	psa_set_key_bits(&attributes, 256);
	psa_set_key_usage_flags(&attributes, encrypt ? PSA_KEY_USAGE_ENCRYPT : PSA_KEY_USAGE_DECRYPT);
	psa_set_key_algorithm(&attributes, PSA_ALG_GCM);
	if (PSA_SUCCESS != psa_import_key(&attributes, key, keyLength, &gcm->key))
		xsUnknownError("psa_import_key (AES) failed");
	status = encrypt ? psa_aead_encrypt_setup(&gcm->operation, gcm->key, PSA_ALG_GCM) : psa_aead_decrypt_setup(&gcm->operation, gcm->key, PSA_ALG_GCM);
	if (PSA_SUCCESS != status)
		xsUnknownError("psa_aead_setup failed");
	xsmcGetBufferReadable(xsArg(1), &nonce, &nonceLength);
	if (kNonceBytes != nonceLength)
		xsRangeError("GCM IV must be 12 bytes");
	if (PSA_SUCCESS != psa_aead_set_nonce(&gcm->operation, nonce, nonceLength))
		xsUnknownError("psa_aead_set_nonce failed");
	xsmcGetBufferReadable(xsArg(2), &aad, &aadLength);
	if (PSA_SUCCESS != psa_aead_update_ad(&gcm->operation, aad, aadLength))
		xsUnknownError("psa_aead_update_ad failed");
}

void xs_fw_gcm_update(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	void *input;
	xsUnsignedValue inputLength;
	size_t outputSize, outputLength = 0;
	uint8_t *output;
	psa_status_t status;

	xsmcGetBufferReadable(xsArg(1), &input, &inputLength);
	outputSize = PSA_AEAD_UPDATE_OUTPUT_SIZE(PSA_KEY_TYPE_AES, PSA_ALG_GCM, inputLength);
	output = c_malloc(outputSize ? outputSize : 1);		/* the ESP-IDF heap: the XS heap may move */
	if (!output)
		xsUnknownError("no memory for GCM output");
	status = psa_aead_update(&gcm->operation, input, inputLength, output, outputSize, &outputLength);
	if ((PSA_SUCCESS != status) || (outputLength != inputLength)) {
		c_free(output);
		xsUnknownError((PSA_SUCCESS != status) ? "psa_aead_update failed" : "psa_aead_update held bytes back");
	}
	xsmcSetArrayBuffer(xsResult, output, outputLength);		/* copies; the input is no longer read */
	c_free(output);
}

void xs_fw_gcm_finish(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	uint8_t rest[16], tag[kTagBytes];
	size_t restLength = 0, tagLength = 0;
	psa_status_t status;

	if (!gcm->encrypt)
		xsUnknownError("a decrypting GCM stream is verified, not finished");
	status = psa_aead_finish(&gcm->operation, rest, sizeof(rest), &restLength, tag, sizeof(tag), &tagLength);
	gcmClose(the, gcm);
	if ((PSA_SUCCESS != status) || restLength || (kTagBytes != tagLength))
		xsUnknownError("psa_aead_finish failed");
	xsmcSetArrayBuffer(xsResult, tag, tagLength);
}

void xs_fw_gcm_verify(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	uint8_t rest[16], tag[kTagBytes];
	size_t restLength = 0;
	void *data;
	xsUnsignedValue length;
	psa_status_t status;

	if (gcm->encrypt)
		xsUnknownError("an encrypting GCM stream is finished, not verified");
	xsmcGetBufferReadable(xsArg(1), &data, &length);
	if (kTagBytes != length) {
		gcmClose(the, gcm);
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	c_memcpy(tag, data, kTagBytes);
	status = psa_aead_verify(&gcm->operation, rest, sizeof(rest), &restLength, tag, kTagBytes);
	gcmClose(the, gcm);
	if (PSA_ERROR_INVALID_SIGNATURE == status) {
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	if ((PSA_SUCCESS != status) || restLength)
		xsUnknownError("psa_aead_verify failed");
	xsmcSetBoolean(xsResult, 1);
}
