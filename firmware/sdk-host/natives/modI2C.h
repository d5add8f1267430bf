/*
 * The modI2C interface the SDK's drivers are written against (pins/i2c/esp32/modI2C.h on the chip),
 * for the virtual chip's bus (fw_host_i2c.c). The configuration record and modI2CConfig are the
 * chip's; only the implementation beneath differs.
 */
#ifndef __MODI2C_H__
#define __MODI2C_H__

#include <stdint.h>

typedef struct modI2CConfigurationRecord modI2CConfigurationRecord;
typedef struct modI2CConfigurationRecord *modI2CConfiguration;

struct modI2CConfigurationRecord {
	uint32_t hz;
	int16_t sda;
	int16_t scl;
	uint16_t timeout;
	uint8_t address; /* 7-bit */
};

#define modI2CConfig(config, HZ, SDA_PIN, SCL_PIN, ADDRESS, TIMEOUT) \
	config.hz = HZ; config.sda = SDA_PIN; config.scl = SCL_PIN; config.timeout = TIMEOUT; config.address = ADDRESS;

extern void modI2CInit(modI2CConfiguration config);
extern void modI2CUninit(modI2CConfiguration config);
extern uint8_t modI2CRead(modI2CConfiguration config, uint8_t *buffer, uint16_t length, uint8_t sendStop);
extern uint8_t modI2CWrite(modI2CConfiguration config, const uint8_t *buffer, uint16_t length, uint8_t sendStop);

#endif
