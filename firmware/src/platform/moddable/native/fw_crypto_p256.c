/*
 * The device identity key's operations through PSA, for hal/psa-crypto.ts: deterministic ECDSA
 * P-256 over SHA-256 (RFC 6979, DESIGN.md section 3) and the public key.
 *
 * ESP-IDF 6 / Mbed TLS 4: psa_import_key (PSA_KEY_TYPE_ECC_KEY_PAIR(PSA_ECC_FAMILY_SECP_R1), 256 bits),
 * psa_sign_message with PSA_ALG_DETERMINISTIC_ECDSA(PSA_ALG_SHA_256) (needs
 * CONFIG_MBEDTLS_ECDSA_DETERMINISTIC: sdkconfig/), psa_export_public_key. The signature comes back
 * raw, r || s (64 bytes); hal/ecdsa-der.ts makes it DER with a low s. The bignum work runs on the
 * ESP32-S3's MPI accelerator (CONFIG_MBEDTLS_HARDWARE_MPI). The private key is imported for one
 * operation and destroyed at once (a volatile key: never stored by PSA).
 */
#include "xsmc.h"
#include "xsHost.h"
#include "psa/crypto.h"

#define kPrivateKeyBytes (32)
#define kSignatureBytes (64)
#define kPublicKeyBytes (65)
#define kAlgorithm PSA_ALG_DETERMINISTIC_ECDSA(PSA_ALG_SHA_256)

static psa_key_id_t importPrivateKey(xsMachine *the)
{
	psa_key_attributes_t attributes = psa_key_attributes_init();
	psa_key_id_t key = 0;
	void *data;
	xsUnsignedValue length;

	if (PSA_SUCCESS != psa_crypto_init())
		xsUnknownError("psa_crypto_init failed");
	xsmcGetBufferReadable(xsArg(0), &data, &length);
	if (kPrivateKeyBytes != length)
		xsRangeError("a P-256 private key is 32 bytes");
	psa_set_key_type(&attributes, PSA_KEY_TYPE_ECC_KEY_PAIR(PSA_ECC_FAMILY_SECP_R1));
	psa_set_key_bits(&attributes, 256);
	psa_set_key_usage_flags(&attributes, PSA_KEY_USAGE_SIGN_MESSAGE);
	psa_set_key_algorithm(&attributes, kAlgorithm);
	if (PSA_SUCCESS != psa_import_key(&attributes, data, length, &key))
		xsUnknownError("psa_import_key (P-256) failed: not a valid private key");
	return key;
}

void xs_fw_p256_sign(xsMachine *the)
{
	psa_key_id_t key = importPrivateKey(the);
	uint8_t signature[kSignatureBytes];
	size_t length = 0;
	void *message;
	xsUnsignedValue messageLength;
	psa_status_t status;

	xsmcGetBufferReadable(xsArg(1), &message, &messageLength);
	status = psa_sign_message(key, kAlgorithm, message, messageLength, signature, sizeof(signature), &length);
	psa_destroy_key(key);
	if ((PSA_SUCCESS != status) || (kSignatureBytes != length))
		xsUnknownError("psa_sign_message failed");
	xsmcSetArrayBuffer(xsResult, signature, length);
}

void xs_fw_p256_public_key(xsMachine *the)
{
	psa_key_id_t key = importPrivateKey(the);
	uint8_t point[kPublicKeyBytes];
	size_t length = 0;
	psa_status_t status;

	status = psa_export_public_key(key, point, sizeof(point), &length);
	psa_destroy_key(key);
	if ((PSA_SUCCESS != status) || (kPublicKeyBytes != length))
		xsUnknownError("psa_export_public_key failed");
	xsmcSetArrayBuffer(xsResult, point, length);
}
