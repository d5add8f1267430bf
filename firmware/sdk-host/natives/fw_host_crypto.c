/*
 * The platform's AES-256-GCM and random natives on a virtual chip. SHA-256, HMAC and P-256 are the
 * chip's own files (native/fw_crypto_sha.c, fw_crypto_p256.c), compiled against the host's Mbed TLS,
 * whose PSA API has those calls. Its 2.28 release declares the multipart AEAD calls that
 * native/fw_crypto_gcm.c uses (psa_aead_update, …) but does not export them, so GCM is OpenSSL's here,
 * with what the chip's file promises the firmware: the same checks and messages, an update's output
 * as long as its input, a decryption verified (never finished) and an encryption finished with its
 * 16-byte tag, the stream closed either way. The chip's hardware RNG is the host's getrandom.
 */
#include "xsmc.h"
#include "xsHost.h"
#include <openssl/evp.h>
#include <sys/random.h>

#define kKeyBytes (32)
#define kNonceBytes (12)
#define kTagBytes (16)
#define kMaxRandomBytes (4096)

typedef struct {
	EVP_CIPHER_CTX *context;
	uint8_t encrypt;
} GcmRecord, *Gcm;

void xs_fw_gcm_destructor(void *data)
{
	Gcm gcm = data;
	if (gcm) {
		EVP_CIPHER_CTX_free(gcm->context);
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
	void *key, *nonce, *aad;
	xsUnsignedValue keyLength, nonceLength, aadLength;
	uint8_t encrypt = xsmcToBoolean(xsArg(3));
	int ignored;
	Gcm gcm = c_calloc(1, sizeof(GcmRecord));
	if (!gcm)
		xsUnknownError("no memory for GCM");
	gcm->encrypt = encrypt;
	xsResult = xsNewHostObject(xs_fw_gcm_destructor);
	xsmcSetHostData(xsResult, gcm);
	gcm->context = EVP_CIPHER_CTX_new();
	if (!gcm->context)
		xsUnknownError("no memory for GCM");

	xsmcGetBufferReadable(xsArg(0), &key, &keyLength);
	if (kKeyBytes != keyLength)
		xsRangeError("AES-256-GCM key must be 32 bytes");
	xsmcGetBufferReadable(xsArg(1), &nonce, &nonceLength);
	if (kNonceBytes != nonceLength)
		xsRangeError("GCM IV must be 12 bytes");
	if (1 != EVP_CipherInit_ex(gcm->context, EVP_aes_256_gcm(), NULL, key, nonce, encrypt))
		xsUnknownError("GCM set-up failed");
	xsmcGetBufferReadable(xsArg(2), &aad, &aadLength);
	if (aadLength && (1 != EVP_CipherUpdate(gcm->context, NULL, &ignored, aad, (int)aadLength)))
		xsUnknownError("GCM additional data failed");
}

void xs_fw_gcm_update(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	void *input;
	xsUnsignedValue inputLength;
	int outputLength = 0;
	uint8_t *output;

	xsmcGetBufferReadable(xsArg(1), &input, &inputLength);
	output = c_malloc(inputLength ? inputLength : 1);		/* outside the XS heap: it may move */
	if (!output)
		xsUnknownError("no memory for GCM output");
	if ((1 != EVP_CipherUpdate(gcm->context, output, &outputLength, input, (int)inputLength)) || ((xsUnsignedValue)outputLength != inputLength)) {
		c_free(output);
		xsUnknownError("GCM update failed");
	}
	xsmcSetArrayBuffer(xsResult, output, outputLength);
	c_free(output);
}

void xs_fw_gcm_finish(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	uint8_t rest[16], tag[kTagBytes];
	int restLength = 0, ok;

	if (!gcm->encrypt)
		xsUnknownError("a decrypting GCM stream is verified, not finished");
	ok = (1 == EVP_CipherFinal_ex(gcm->context, rest, &restLength)) && !restLength
		&& (1 == EVP_CIPHER_CTX_ctrl(gcm->context, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag));
	gcmClose(the, gcm);
	if (!ok)
		xsUnknownError("GCM finish failed");
	xsmcSetArrayBuffer(xsResult, tag, kTagBytes);
}

void xs_fw_gcm_verify(xsMachine *the)
{
	Gcm gcm = gcmOf(the);
	uint8_t rest[16], tag[kTagBytes];
	int restLength = 0, verified;
	void *data;
	xsUnsignedValue length;

	if (gcm->encrypt)
		xsUnknownError("an encrypting GCM stream is finished, not verified");
	xsmcGetBufferReadable(xsArg(1), &data, &length);
	if (kTagBytes != length) {
		gcmClose(the, gcm);
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	c_memcpy(tag, data, kTagBytes);
	verified = (1 == EVP_CIPHER_CTX_ctrl(gcm->context, EVP_CTRL_GCM_SET_TAG, kTagBytes, tag))
		&& (1 == EVP_CipherFinal_ex(gcm->context, rest, &restLength)) && !restLength;
	gcmClose(the, gcm);
	xsmcSetBoolean(xsResult, verified);
}

void xs_fw_random(xsMachine *the)
{
	int length = xsmcToInteger(xsArg(0));
	uint8_t *at;
	ssize_t got;

	if ((length < 0) || (length > kMaxRandomBytes))
		xsRangeError("random bytes: 0 to 4096 at a time");
	xsmcSetArrayBuffer(xsResult, NULL, length);
	at = xsmcToArrayBuffer(xsResult);
	while (length > 0) {
		got = getrandom(at, length, 0);
		if (got <= 0)
			xsUnknownError("getrandom failed");
		at += got;
		length -= (int)got;
	}
}
